"""`evalkit datasets push|list|show|versions|review|rename|delete`: datasets of cases, pushed from a local folder."""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from evalkit.cli.http import (
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CliError,
    call,
    client_options,
    quote,
    service_token,
    service_url,
)
from evalkit.cli.http import emit as _print


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

    python = sorted({*args.python_evaluator, *(_evaluator_name(spec) for spec in args.evaluator)})

    async def push() -> dict[str, Any]:
        async with ServiceClient(Connection(url=service_url(args), token=service_token(args))) as client:
            return await sync_dataset(Service(client), local, name, args.description or "",
                                      python_evaluators=python)

    try:
        data = asyncio.run(push())
    except ServiceUnreachable as exc:
        raise CliError(str(exc), EXIT_UNREACHABLE) from exc
    except ServiceError as exc:
        raise CliError(exc.message if exc.status == 400 else str(exc), status=exc.status,
                       detail=exc.message) from exc
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


def _evaluator_name(spec: str) -> str:
    from evalkit.cli.run import load_object

    return str(getattr(load_object(spec), "name", spec.partition(":")[2]))


def _path(dataset: str) -> str:
    return f"/api/datasets/{quote(dataset)}"


def _known(args: argparse.Namespace, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
    try:
        return call(args, method, path, body)
    except CliError as exc:
        if exc.status == 404:
            raise CliError(f"{exc.detail.split(';')[0]}; list the datasets with `evalkit datasets list`",
                           exc.code, status=404) from exc
        raise


def _list(args: argparse.Namespace) -> int:
    path = "/api/datasets" + (f"?workspace={args.workspace}" if args.workspace else "")
    data = call(args, "GET", path)
    _print(args, data, [f"{d['dataset']:40} {d['version']}  {d['cases']:>5} cases  "
                        f"{d.get('git_revision') or ''}" for d in data["datasets"]])
    return 0


def _show(args: argparse.Namespace) -> int:
    path = _path(args.dataset) + (f"?version={quote(args.version)}" if args.version else "")
    data = _known(args, "GET", path)
    lines = [f"dataset {data['dataset']} version {data['version']} ({len(data['cases'])} cases)"]
    for case in data["cases"]:
        review = (case.get("review") or {}).get("state")
        tags = ",".join(case.get("tags") or [])
        lines.append(f"  {case['id']:30} {json.dumps(case.get('input'))[:60]:60} {tags} {review or ''}")
    _print(args, data, lines)
    return 0


# The versions asked for a page: the most the service answers at once.
VERSIONS_PAGE = 1000


def _versions(args: argparse.Namespace) -> int:
    import time

    # Every version, page after page.
    versions: list[dict[str, Any]] = []
    cursor: str | None = None
    while True:
        page = _known(args, "GET", _path(args.dataset) + f"/versions?limit={VERSIONS_PAGE}"
                      + (f"&cursor={quote(cursor)}" if cursor else ""))
        versions.extend(page["versions"])
        cursor = page.get("next_cursor")
        if not cursor:
            break
    data = {"versions": versions}
    lines = []
    for v in data["versions"]:
        pushed = time.strftime("%Y-%m-%d %H:%M", time.localtime(v["pushed_at"]))
        lines.append(f"{v['version']}  {v['cases']:>5} cases  {pushed}  {v.get('pushed_by') or ''}  "
                     f"{v.get('git_revision') or ''}")
    _print(args, data, lines)
    return 0


def _review(args: argparse.Namespace) -> int:
    data = _known(args, "PUT", f"{_path(args.dataset)}/cases/{quote(args.case_id)}/review",
                  {"state": args.state, "note": args.note or ""})
    _print(args, data, [f"case {args.case_id} of {data['dataset']}: {data['state']}"
                        + (f" ({data['note']})" if data.get("note") else "")])
    return 0


def _rename(args: argparse.Namespace) -> int:
    data = _known(args, "POST", f"{_path(args.dataset)}/rename", {"name": args.new_name})
    _print(args, data, [f"dataset {data['renamed_from']} is now {data['dataset']}"])
    return 0


def _delete(args: argparse.Namespace) -> int:
    if not args.yes:
        raise CliError(f"deleting dataset {args.dataset} removes every version and review for good; run "
                       f"`evalkit datasets delete {args.dataset} --yes` to do it", EXIT_USAGE)
    data = _known(args, "DELETE", _path(args.dataset))
    _print(args, data, [f"dataset {data['dataset']} deleted"])
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
    p.add_argument("--evaluator", action="append", default=[], metavar="MODULE:NAME",
                   help="a Python evaluator the cases name (checked: a name the service does not know and that "
                        "is not declared here is refused)")
    p.add_argument("--python-evaluator", action="append", default=[], metavar="NAME",
                   help="the name of a Python evaluator the cases name, without importing it")
    p.set_defaults(func=_push)
    p = client_options(datasets.add_parser("list", help="list datasets"))
    p.add_argument("--workspace")
    p.set_defaults(func=_list)
    p = client_options(datasets.add_parser("show", help="a dataset's cases"))
    p.add_argument("dataset", help="name or name@workspace")
    p.add_argument("--version")
    p.set_defaults(func=_show)
    p = client_options(datasets.add_parser("versions", help="a dataset's versions, newest first"))
    p.add_argument("dataset", help="name or name@workspace")
    p.set_defaults(func=_versions)
    p = client_options(datasets.add_parser("review", help="review a case of a shared workspace's dataset"))
    p.add_argument("dataset", help="name@workspace")
    p.add_argument("case_id")
    p.add_argument("state", choices=["pending", "approved", "rejected", "needs_changes"])
    p.add_argument("--note")
    p.set_defaults(func=_review)
    p = client_options(datasets.add_parser("rename", help="rename a dataset (its workspace stays)"))
    p.add_argument("dataset", help="name or name@workspace")
    p.add_argument("new_name")
    p.set_defaults(func=_rename)
    p = client_options(datasets.add_parser("delete", help="delete a dataset: every version, case and review"))
    p.add_argument("dataset", help="name or name@workspace")
    p.add_argument("--yes", action="store_true", help="yes, delete it for good")
    p.set_defaults(func=_delete)
