"""`evalkit datasets push|list|show`: datasets of cases, pushed from a local folder."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from evalkit.cli.http import EXIT_UNREACHABLE, EXIT_USAGE, CliError, call, client_options, service_token, service_url
from evalkit.cli.http import print_result as _print


def _push(args: argparse.Namespace) -> int:
    from evalkit.sdk.client import ServiceClient, ServiceError, ServiceUnreachable
    from evalkit.sdk.config import ConfigError, Connection, load_project
    from evalkit.sdk.datasets import read_dataset
    from evalkit.sdk.service import Service
    from evalkit.sdk.sync import sync_dataset

    try:
        project = load_project()
        folder = Path(args.folder)
        if not folder.is_dir():
            named = project.dataset_folder(args.folder)
            if named is None:
                raise CliError(f"{args.folder} is neither a folder nor a dataset under `cases` of evalkit.yaml",
                               EXIT_USAGE)
            folder = named
        name = args.name or folder.name
        if args.workspace and "@" not in name:
            name = f"{name}@{args.workspace}"
        local = read_dataset(folder, name, project.fixtures_dir)
    except ConfigError as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc

    async def push() -> dict[str, Any]:
        async with ServiceClient(Connection(url=service_url(args), token=service_token(args))) as client:
            return await sync_dataset(Service(client), local, name, args.description or "")

    try:
        data = asyncio.run(push())
    except ServiceUnreachable as exc:
        raise CliError(str(exc), EXIT_UNREACHABLE) from exc
    except ServiceError as exc:
        raise CliError(str(exc)) from exc
    lines = [f"dataset {data['dataset']} version {data['version']}: {data['cases']} cases "
             f"({'new version' if data.get('created') else 'unchanged'})"]
    for key in ("added", "changed", "removed"):
        if data.get(key):
            lines.append(f"  {key}: {', '.join(data[key])}")
    for missing in data.get("missing_files") or []:
        lines.append(f"  missing file: case {missing['case_id']} {missing['name']}")
    lines.append(f"  local content hash {local.content_hash}, git {local.git_revision or 'none'}")
    _print(args, data, lines)
    return 0


def _list(args: argparse.Namespace) -> int:
    path = "/api/datasets" + (f"?workspace={args.workspace}" if args.workspace else "")
    data = call(args, "GET", path)
    _print(args, data, [f"{d['dataset']:40} {d['version']}  {d['cases']:>5} cases  "
                        f"{d.get('git_revision') or ''}" for d in data["datasets"]])
    return 0


def _show(args: argparse.Namespace) -> int:
    path = f"/api/datasets/{args.dataset}" + (f"?version={args.version}" if args.version else "")
    data = call(args, "GET", path)
    lines = [f"dataset {data['dataset']} version {data['version']} ({len(data['cases'])} cases)"]
    for case in data["cases"]:
        review = (case.get("review") or {}).get("state")
        tags = ",".join(case.get("tags") or [])
        lines.append(f"  {case['id']:30} {json.dumps(case.get('input'))[:60]:60} {tags} {review or ''}")
    _print(args, data, lines)
    return 0


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    datasets = sub.add_parser("datasets", help="datasets of cases").add_subparsers(dest="action", required=True)
    p = client_options(datasets.add_parser(
        "push", help="push a local folder of cases (one YAML/JSON file per case) and its fixtures",
        description="Push a folder of cases. FOLDER may be a path or the name of a folder under `cases` in "
                    "evalkit.yaml. Fixture files go first (by content hash), then the cases."))
    p.add_argument("folder", metavar="FOLDER")
    p.add_argument("--name", help="dataset name (default: the folder's name); name@workspace for a shared one")
    p.add_argument("--workspace", help="a shared workspace (default: your personal one)")
    p.add_argument("--description")
    p.set_defaults(func=_push)
    p = client_options(datasets.add_parser("list", help="list datasets"))
    p.add_argument("--workspace")
    p.set_defaults(func=_list)
    p = client_options(datasets.add_parser("show", help="a dataset's cases"))
    p.add_argument("dataset", help="name or name@workspace")
    p.add_argument("--version")
    p.set_defaults(func=_show)
