"""The scoring routes (docs/api.md): workspace evaluators, blobs, datasets, experiments, runs,
evaluations, leases, scorecards, comparisons and the gate."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from aiohttp import web

from evalkit.api import (
    ApiError,
    Caller,
    Context,
    caller_of,
    json_response,
    parse_body,
    read_json,
    require_existing_workspace,
)
from evalkit.outbound import OutboundPolicy
from evalkit.query_params import MAX_INT, MAX_OFFSET, bool_param, choice_param, float_param, int_param, whole_number

from . import deletion, run_pages, run_results, version_pages
from .blob_settings import blob_store_from
from .blobs import BlobError
from .compare import gate as run_gate
from .compare import gated_against_itself, render_comparison_markdown, render_gate_markdown
from .datasets import DatasetError, parse_cases, unknown_evaluators
from .evaluate import server_judge
from .evaluators import EvaluatorConfigError, build_evaluator
from .experiments import STATUSES, Experiment
from .harness import HarnessRunner, capabilities
from .models import (
    ChangeExperiment,
    CreateExperiment,
    EvaluateRequest,
    GateRequest,
    LeaseRequest,
    PublishEvaluations,
    PushDataset,
    RecordRun,
    RefetchRequest,
    ResumeRequest,
    ReviewRequest,
)
from .runs import RUN_STATUSES
from .scorecard import render_markdown, render_text
from .service import ScoringService

_KEY = web.AppKey("scoring", ScoringService)


def _svc(request: web.Request) -> ScoringService:
    return request.app[_KEY]


def _eid(request: web.Request) -> int:
    raw = request.match_info["id"]
    if not (raw.isascii() and raw.isdigit()):
        raise ApiError(400, f"experiment id {raw[:40]!r} must be a whole number (as in /api/experiments/42)")
    return whole_number("experiment id", raw, low=0, high=MAX_INT)


async def _experiment(request: web.Request, role: str = "reader", doing: str = "read it"
                      ) -> tuple[Caller, ScoringService, Experiment]:
    caller = await caller_of(request)
    s = _svc(request)
    e = await asyncio.to_thread(s.experiment, caller, _eid(request), role, doing)
    if e.status == deletion.DELETED:
        raise ApiError(404, f"experiment {e.experiment_id} was deleted; list the others with "
                            "`evalkit experiments list` (GET /api/experiments)")
    return caller, s, e


# -- workspace evaluators -----------------------------------------------------------------
async def put_evaluator(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    s = _svc(request)
    workspace = s.workspace_of_path(caller, request.match_info["workspace"])
    await require_existing_workspace(request, caller, workspace)
    caller.require_role(workspace, "admin", "register evaluators")
    spec = await read_json(request)
    name = request.match_info["name"]
    try:
        build_evaluator({**spec, "name": name})
    except EvaluatorConfigError as exc:
        raise ApiError(400, str(exc)) from exc
    clean = {k: v for k, v in spec.items() if k != "name"}
    await asyncio.to_thread(s.put_workspace_evaluator, workspace, name, clean, caller.name)
    return json_response({"workspace": workspace, "name": name, "spec": clean})


async def list_evaluators(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    s = _svc(request)
    workspace = s.workspace_of_path(caller, request.match_info["workspace"])
    await require_existing_workspace(request, caller, workspace)
    caller.require_role(workspace, "reader")
    found = await asyncio.to_thread(s.workspace_evaluators, workspace)
    return json_response({"evaluators": [{"name": n, "spec": v} for n, v in sorted(found.items())]})


# -- blobs --------------------------------------------------------------------------------
async def _blob_target(request: web.Request, role: str) -> tuple[Caller, ScoringService, str, str]:
    caller = await caller_of(request)
    s = _svc(request)
    workspace = await asyncio.to_thread(s.workspace_of_path, caller, request.match_info["workspace"])
    await require_existing_workspace(request, caller, workspace)
    caller.require_role(workspace, role, "put blobs" if role == "writer" else "read blobs")
    return caller, s, workspace, request.match_info.get("sha256", "")


async def put_blob(request: web.Request) -> web.Response:
    caller, s, workspace, sha = await _blob_target(request, "writer")
    data = await request.read()
    try:
        info, created = await asyncio.to_thread(s.blobs.put, workspace, sha, data, by=caller.name, now=s.clock())
    except BlobError as exc:
        raise ApiError(400, str(exc)) from exc
    return json_response({"sha256": info.sha256, "size": info.size, "created": created},
                         status=201 if created else 200)


async def get_blob(request: web.Request) -> web.StreamResponse:
    _, s, workspace, sha = await _blob_target(request, "reader")
    try:
        if request.method == "HEAD":
            info = await asyncio.to_thread(s.blobs.info, workspace, sha)
            if info is None:
                return web.Response(status=404)
            return web.Response(status=200, headers={"Content-Length": str(info.size), "ETag": f'"{sha}"'})
        data = await asyncio.to_thread(s.blobs.read, workspace, sha)
    except BlobError as exc:
        raise ApiError(400, str(exc)) from exc
    if data is None:
        raise ApiError(404, f"workspace {workspace!r} has no blob {sha}; put it first")
    return web.Response(body=data, content_type="application/octet-stream", headers={"ETag": f'"{sha}"'})


async def list_blobs(request: web.Request) -> web.Response:
    _, s, workspace, _ = await _blob_target(request, "reader")
    found = await asyncio.to_thread(s.blobs.list, workspace, request.query.get("prefix", ""))
    return json_response({"blobs": [{"sha256": b.sha256, "size": b.size, "created_at": b.created_at}
                                    for b in found]})


# -- datasets -----------------------------------------------------------------------------
async def _dataset(request: web.Request, role: str, doing: str) -> tuple[Caller, ScoringService, str, str]:
    caller = await caller_of(request)
    s = _svc(request)
    workspace, name = await asyncio.to_thread(s.resolve_dataset, caller, request.match_info["dataset"])
    caller.require_role(workspace, role, doing)
    return caller, s, workspace, name


async def push_dataset(request: web.Request) -> web.Response:
    caller, s, workspace, name = await _dataset(request, "writer", "push datasets")
    # The admin may write anywhere: a misspelt workspace would get a dataset no workspace lists.
    await require_existing_workspace(request, caller, workspace)
    body = await parse_body(request, PushDataset)
    try:
        from evalkit.access import check_name

        check_name("dataset", name)
        cases = parse_cases(body.cases)
    except (DatasetError, ValueError) as exc:
        raise ApiError(400, str(exc)) from exc
    if body.python_evaluators is not None:
        await _refuse_unknown_evaluators(s, caller, workspace, cases, body.python_evaluators)
    result = await asyncio.to_thread(s.datasets.push, workspace, name, cases, git_revision=body.git_revision or "",
                                     description=body.description, by=caller.name, now=s.clock())
    files = {f.sha256: (c.id, f.name) for c in cases for f in c.files}
    present = await asyncio.to_thread(s.blobs.present, workspace, list(files))
    missing = [{"case_id": cid, "name": fname, "sha256": h} for h, (cid, fname) in files.items() if h not in present]
    return json_response({**result.version.summary(), "added": result.added, "changed": result.changed,
                          "removed": result.removed, "created": result.created, "missing_files": missing},
                         status=201 if result.created else 200)


async def _refuse_unknown_evaluators(s: ScoringService, caller: Caller, workspace: str, cases: list[Any],
                                     python: list[str]) -> None:
    from .evaluate import JUDGE
    from .evaluators import EVALUATOR_TYPES

    def workspace_names() -> set[str]:
        # Experiments use the agent's workspace's evaluators, which may be another of the caller's.
        spaces = {workspace, *caller.workspaces}
        return {n for w in spaces for n in s.workspace_evaluators(w)}

    known = {*EVALUATOR_TYPES, JUDGE, *python}
    unknown = unknown_evaluators(cases, known)
    if unknown:
        unknown = unknown_evaluators(cases, known | await asyncio.to_thread(workspace_names))
    if unknown:
        listed = "; ".join(f"case {case_id} names evaluator {name!r}" for case_id, name in unknown)
        raise ApiError(400, f"{listed}: not a built-in type ({', '.join(sorted(EVALUATOR_TYPES))}), the "
                            f"judge, a workspace evaluator or a declared Python evaluator "
                            f"({', '.join(python) or 'none declared'}). Fix the name in the case file, or declare "
                            "the Python evaluator (`evalkit datasets push FOLDER --evaluator module:name`; "
                            "run_experiment and `evalkit run` declare theirs)")


def _no_dataset(request: web.Request, workspace: str, name: str) -> ApiError:
    """404 for a dataset with no version: where the datasets are listed, and how a name is written."""
    bare = "@" not in request.match_info["dataset"]
    return ApiError(404, f"dataset {name}@{workspace} does not exist; list the datasets with `evalkit datasets list` "
                         "(or on the /datasets page) and name one as name@workspace"
                         + (f" (a name without @workspace is looked up in your personal workspace, {workspace})"
                            if bare else ""))


def _in_use(workspace: str, name: str, used: list[int], doing: str) -> ApiError:
    listed = ", ".join(map(str, used[:20])) + (" …" if len(used) > 20 else "")
    return ApiError(409, f"dataset {name}@{workspace} is used by experiment(s) {listed}, which read their cases "
                         f"from it; {doing} would leave them without cases. Delete those experiments first "
                         "(`evalkit experiments delete N --yes`), or push the folder under a new name "
                         "(`evalkit datasets push FOLDER --name NEW`)")


async def delete_dataset(request: web.Request) -> web.Response:
    _, s, workspace, name = await _dataset(request, "admin", "delete datasets")
    if not await asyncio.to_thread(s.datasets.versions, workspace, name):
        raise _no_dataset(request, workspace, name)
    used = await asyncio.to_thread(deletion.experiments_using, s.store, workspace, name)
    if used:
        raise _in_use(workspace, name, used, "deleting it")
    removed = await asyncio.to_thread(deletion.delete_dataset, s.store, workspace, name)
    return json_response({"dataset": f"{name}@{workspace}", "deleted": True, "rows": removed})


async def rename_dataset(request: web.Request) -> web.Response:
    _, s, workspace, name = await _dataset(request, "admin", "rename datasets")
    body = await read_json(request)
    new_name = body.get("name") if isinstance(body, dict) else None
    if not isinstance(new_name, str) or not new_name or set(body) - {"name"}:
        raise ApiError(400, 'send {"name": "NEW"} (only the name changes; the workspace stays)')
    from evalkit.access import check_name

    try:
        check_name("dataset", new_name)
    except ValueError as exc:
        raise ApiError(400, str(exc)) from exc
    if not await asyncio.to_thread(s.datasets.versions, workspace, name):
        raise _no_dataset(request, workspace, name)
    if await asyncio.to_thread(s.datasets.versions, workspace, new_name):
        raise ApiError(409, f"dataset {new_name}@{workspace} exists already; pick another name")
    used = await asyncio.to_thread(deletion.experiments_using, s.store, workspace, name)
    if used:
        raise _in_use(workspace, name, used, "renaming it")
    await asyncio.to_thread(deletion.rename_dataset, s.store, workspace, name, new_name)
    return json_response({"dataset": f"{new_name}@{workspace}", "renamed_from": f"{name}@{workspace}"})


async def list_datasets(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    s = _svc(request)
    workspace = request.query.get("workspace")
    if workspace:
        workspace = s.workspace_of_path(caller, workspace)
        await require_existing_workspace(request, caller, workspace)
        caller.require_role(workspace, "reader")
    visible = None if caller.is_admin and not workspace else ([workspace] if workspace else sorted(caller.workspaces))
    found = await asyncio.to_thread(s.datasets.latest_of_each, visible)
    return json_response({"datasets": [v.summary() for v in found]})


async def show_dataset(request: web.Request) -> web.Response:
    _, s, workspace, name = await _dataset(request, "reader", "read datasets")
    wanted = request.query.get("version")
    version = await asyncio.to_thread(s.datasets.get, workspace, name, wanted)
    if version is None:
        known = await asyncio.to_thread(s.datasets.versions, workspace, name) if wanted else []
        if known:
            raise ApiError(404, f"dataset {name}@{workspace} has no version {wanted!r}; list its versions with "
                                f"`evalkit datasets versions {name}@{workspace}` (or on its page, "
                                f"/datasets/{name}@{workspace}), or leave version out for the latest")
        raise _no_dataset(request, workspace, name)
    cases = await asyncio.to_thread(s.datasets.cases, version)
    shared = await asyncio.to_thread(s.access.workspace_kind, workspace) != "personal"
    reviews = await asyncio.to_thread(s.datasets.reviews, version) if shared else {}
    none = {"state": "none", "note": "", "by": None, "at": None}
    return json_response({**version.summary(), "cases": [
        {**c.model_dump(mode="json"), "review": reviews.get(c.id, none)} for c in cases]})


async def dataset_versions(request: web.Request) -> web.Response:
    _, s, workspace, name = await _dataset(request, "reader", "read datasets")
    limit, cursor, offset = _page_position(request)
    try:
        after = version_pages.decode_cursor(cursor) if cursor is not None else None
    except version_pages.BadCursor as exc:
        raise ApiError(400, str(exc)) from exc
    page = await asyncio.to_thread(version_pages.read_page, s.datasets, workspace, name, limit=limit, after=after,
                                   offset=offset)
    if not page.versions:
        # An empty first page is no dataset; an empty later one is past the end of one that exists.
        first = after is None and not offset
        if first or not await asyncio.to_thread(s.datasets.versions_page, workspace, name, limit=1):
            raise _no_dataset(request, workspace, name)
    return json_response({"versions": [{k: v.summary()[k] for k in ("version", "git_revision", "cases", "pushed_at",
                                                                      "pushed_by")} for v in page.versions],
                          "limit": limit, "offset": offset, "has_more": page.more, "next_cursor": page.next_cursor})


async def review_case(request: web.Request) -> web.Response:
    caller, s, workspace, name = await _dataset(request, "reviewer", "review cases")
    body = await parse_body(request, ReviewRequest)
    if await asyncio.to_thread(s.access.workspace_kind, workspace) == "personal":
        raise ApiError(400, f"{name} is in a personal workspace; reviews are for datasets of shared workspaces")
    version = await asyncio.to_thread(s.datasets.latest, workspace, name)
    if version is None:
        raise _no_dataset(request, workspace, name)
    from .tables import next_version

    try:
        result = await asyncio.to_thread(s.datasets.review, version, request.match_info["case_id"], body.state,
                                         body.note, by=caller.name, now=s.clock(), row_version=next_version())
    except DatasetError as exc:
        raise ApiError(400, str(exc)) from exc
    except KeyError as exc:
        raise ApiError(404, f"dataset {version.dataset} has no case {request.match_info['case_id']!r}") from exc
    return json_response(result)


# -- experiments --------------------------------------------------------------------------
async def create_experiment(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    s = _svc(request)
    req = await parse_body(request, CreateExperiment)
    agent = await asyncio.to_thread(s.access.find_agent, req.agent)
    caps = None
    if agent is not None and agent.kind == "harness" and not agent.archived:
        caller.require_role(agent.workspace, "writer", "start experiments")
        try:
            caps = await capabilities(agent.harness_url, s.outbound)
        except ValueError as exc:
            raise ApiError(400, str(exc)) from exc
    e = await asyncio.to_thread(s.create_experiment, caller, req, caps)
    lease_view = None
    async with s.lock(e.experiment_id):
        if agent is not None and agent.kind == "harness":
            result = await asyncio.to_thread(s.resume, caller, e, None, 0)
            e = result["_experiment"]
            assert s.start_harness is not None
            s.start_harness(e, agent)
        elif req.lease is not None:
            lease_view = await asyncio.to_thread(s.acquire, caller, e, req.lease.holder, req.lease.ttl_seconds)
            fresh = await asyncio.to_thread(s.experiments.get, e.experiment_id)
            e = fresh if fresh is not None else e
    return json_response({"experiment_id": e.experiment_id, "url": f"/api/experiments/{e.experiment_id}",
                          "page": f"/experiments/{e.experiment_id}",
                          "status": e.status, "config": _public_config(e), "cases": e.cases,
                          "runs_planned": e.planned, "dropped": e.dropped,
                          "lease": None if lease_view is None else {"holder": lease_view["holder"],
                                                                    "expires_at": lease_view["expires_at"]}},
                         status=201)


def _public_config(e: Experiment) -> dict[str, Any]:
    return {k: v for k, v in e.config.items() if k not in ("dataset_workspace", "dataset_name")}


async def list_experiments(request: web.Request) -> web.Response:
    caller = await caller_of(request)
    s = _svc(request)
    workspace = request.query.get("workspace")
    if workspace:
        await require_existing_workspace(request, caller, workspace)
        caller.require_role(workspace, "reader")
    visible = [workspace] if workspace else (None if caller.is_admin else sorted(caller.workspaces))
    limit = int_param(request, "limit", 50, low=1, high=1000)
    status = request.query.get("status") or None
    if status is not None and status not in STATUSES:  # an unknown status would list nothing, as if none existed
        raise ApiError(400, f"status={status!r} is not an experiment status; use one of {', '.join(STATUSES)}")

    def load() -> list[dict[str, Any]]:
        found = s.experiments.find(workspaces=visible, agent=request.query.get("agent"),
                                   status=status, limit=limit)
        progress = s.runs.progress([e.experiment_id for e in found])
        return [s.summary(e, progress.get(e.experiment_id), s.scores(e)) for e in found]

    return json_response({"experiments": await asyncio.to_thread(load)})


async def get_experiment(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request)

    def load() -> dict[str, Any]:
        attempts = s.runs.attempts(e.experiment_id)
        progress = s.runs.progress([e.experiment_id]).get(e.experiment_id)
        pending = s.pending(e, attempts)
        by_case: dict[str, list[dict[str, Any]]] = {c: [] for c in e.cases}
        counts: dict[tuple[str, int], int] = {}
        for r in attempts:
            counts[(r.case_id, r.repetition)] = counts.get((r.case_id, r.repetition), 0) + 1
        for r in attempts:
            if r.final and r.case_id in by_case:
                by_case[r.case_id].append({"repetition": r.repetition, "status": r.status,
                                           "trajectory_status": r.trajectory_status or None,
                                           "attempts": counts[(r.case_id, r.repetition)], "run_id": r.run_id})
        cases = []
        for case_id, runs in by_case.items():
            done = sum(1 for r in runs if r["status"] == "completed")
            state = "done" if done == e.repetitions else ("pending" if not runs else "partial")
            cases.append({"case_id": case_id, "runs": runs, "state": state})
        lease = s.leases.get(e.experiment_id)
        unscored = s.unscored(e)
        return {**s.summary(e, progress, s.scores(e)), "config": _public_config(e),
                "lease": lease.view(s.clock()) if lease else None, "cases": cases,
                "can_change": s.can_change(caller, e),
                "can_resume": s.can_resume(caller, e, pending),
                "dropped": e.dropped,
                "scoring": {"unscored_runs": sum(unscored.values()), "unscored": unscored,
                            "evaluators": e.evaluator_names}}

    return json_response(await asyncio.to_thread(load))


async def change_experiment(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request, "writer", "change experiments")
    req = await parse_body(request, ChangeExperiment)
    async with s.lock(e.experiment_id):
        fresh = await asyncio.to_thread(s.experiment, caller, e.experiment_id, "writer", "change experiments")
        changed = await asyncio.to_thread(s.change, caller, fresh, req)
    if changed.status == "cancelled":
        runner: HarnessRunner | None = request.app.get(_RUNNER)
        driver = runner.drivers.get(e.experiment_id) if runner else None
        if driver is not None and driver.task is not None:
            driver.task.cancel()
    return await get_experiment(request)


async def delete_experiment(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request, "writer", "delete experiments")
    if caller.name != e.created_by:
        caller.require_role(e.workspace, "admin", "delete other people's experiments")
    async with s.lock(e.experiment_id):
        lease = await asyncio.to_thread(s.leases.get, e.experiment_id)
        if e.status == "running" and lease is not None and lease.live(s.clock()):
            raise ApiError(409, f"experiment {e.experiment_id} is being run by {lease.holder}; cancel it first "
                                f"(`evalkit experiments cancel {e.experiment_id}`)")
        removed = await asyncio.to_thread(deletion.delete_experiment, s.store, s.experiments, e, s.clock())
    return json_response({"experiment_id": e.experiment_id, "deleted": True, "runs": removed["runs"],
                          "evaluations": removed["evaluations"]})


async def acquire_lease(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request, "writer", "run experiments")
    req = await parse_body(request, LeaseRequest)
    async with s.lock(e.experiment_id):
        fresh = await asyncio.to_thread(s.experiment, caller, e.experiment_id, "writer")
        result = await asyncio.to_thread(s.acquire, caller, fresh, req.holder, req.ttl_seconds)
    return json_response(result)


MAX_RELEASE_REASON = 300


async def release_lease(request: web.Request) -> web.Response:
    _caller, s, e = await _experiment(request, "writer", "run experiments")
    holder = request.query.get("holder")
    if not holder:
        raise ApiError(400, "say whose lease to release: `?holder=...`")
    # Why the runner stops (the SDK says `interrupted` after Ctrl-C): the start of the experiment's status reason.
    why = request.query.get("reason", "").strip()
    if len(why) > MAX_RELEASE_REASON:
        raise ApiError(400, f"reason is {len(why)} characters long; say why the runner stops in at most "
                            f"{MAX_RELEASE_REASON}")
    async with s.lock(e.experiment_id):
        released = await asyncio.to_thread(s.release, e, holder, why)  # it reads the experiment again, locked
    return json_response({"released": released})


async def resume(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request, "writer", "resume experiments")
    req = await parse_body(request, ResumeRequest)
    async with s.lock(e.experiment_id):
        fresh = await asyncio.to_thread(s.experiment, caller, e.experiment_id, "writer")
        result = await asyncio.to_thread(s.resume, caller, fresh, req.holder, req.ttl_seconds, req.take_over,
                                         req.budget_usd, req.max_tokens)
    if fresh.config.get("agent_kind") == "harness":
        agent = await asyncio.to_thread(s.access.get_agent, fresh.agent_id)
        assert s.start_harness is not None
        s.start_harness(result["_experiment"], agent)
    result.pop("_experiment")
    return json_response(result)


async def pinned_cases(request: web.Request) -> web.Response:
    _, s, e = await _experiment(request)
    cases = await asyncio.to_thread(s.pinned_cases, e)
    return json_response({"dataset": e.dataset, "version": e.dataset_version,
                          "cases": [c.model_dump(mode="json") for c in cases]})


def _run_filters(request: web.Request, e: Experiment) -> run_pages.RunFilters:
    """The run filters `list_runs` and `export_runs` share: case_id, status, attempts, evaluator, failed."""
    attempts = request.query.get("attempts", "final")
    if attempts not in ("final", "all"):
        raise ApiError(400, f"attempts={attempts!r}: use attempts=final (the default) or attempts=all")
    status = request.query.get("status")
    if status is not None and status not in RUN_STATUSES:
        raise ApiError(400, f"status={status!r} is not a run status; use one of {', '.join(RUN_STATUSES)}")
    evaluator = request.query.get("evaluator")
    if evaluator is not None and evaluator not in e.evaluator_names:
        raise ApiError(400, f"experiment {e.experiment_id} has no evaluator {evaluator!r}; its evaluators are "
                            f"{', '.join(e.evaluator_names) or 'none'}")
    return run_pages.RunFilters(case_id=request.query.get("case_id"), status=status or None,
                                final_only=attempts == "final", evaluator=evaluator,
                                only_failed=bool_param(request, "failed"))


async def _runs_with_results(request: web.Request, s: ScoringService, e: Experiment) -> list[dict[str, Any]]:
    """Every run `export_runs` writes, with its evaluations, filtered as `list_runs` filters a page."""
    f = _run_filters(request, e)

    def load() -> list[dict[str, Any]]:
        runs = s.runs.attempts(e.experiment_id, case_id=f.case_id)
        runs = [r for r in runs if (not f.final_only or r.final) and (not f.status or r.status == f.status)]
        shown = [r.run_id for r in runs] if f.case_id or f.status else None
        details = s.evaluations.details_by_run(e.experiment_id, [f.evaluator] if f.evaluator else None, shown)
        return list(run_results.with_evaluations(runs, details, evaluator=f.evaluator, only_failed=f.only_failed))

    return await asyncio.to_thread(load)


# A page of runs: the API's lists page the same way (1..1000, 50 unless asked).
RUNS_PAGE_LIMIT = 1000


def _page_position(request: web.Request) -> tuple[int, str | None, int]:
    """A list page's `limit` (1..1000, 50 unless asked), and where it starts: `cursor` (the `next_cursor` of the
    page before) or `offset`, not both."""
    limit = int_param(request, "limit", 50, low=1, high=RUNS_PAGE_LIMIT)
    cursor = request.query.get("cursor") or None
    if cursor is not None and request.query.get("offset"):
        raise ApiError(400, "give cursor or offset, not both: the cursor (the `next_cursor` of the page before) "
                            "already says where the next page starts")
    return limit, cursor, int_param(request, "offset", 0, high=MAX_OFFSET)


async def list_runs(request: web.Request) -> web.Response:
    _, s, e = await _experiment(request)
    evaluations = bool_param(request, "evaluations")
    filters = _run_filters(request, e)
    limit, cursor, offset = _page_position(request)
    try:
        after = run_pages.decode_cursor(cursor) if cursor is not None else None
    except run_pages.BadCursor as exc:
        raise ApiError(400, str(exc)) from exc
    page = await asyncio.to_thread(run_pages.read_page, s.runs, s.evaluations, e.experiment_id, filters,
                                   limit=limit, after=after, offset=offset, with_evaluations_shown=evaluations)
    return json_response({"runs": page.views, "limit": limit, "offset": offset, "has_more": page.more,
                          "next_cursor": page.next_cursor})


async def export_runs(request: web.Request) -> web.Response:
    """The final runs with their evaluations as JSONL (a run a line) or CSV (a row per run and evaluator)."""
    _, s, e = await _experiment(request)
    fmt = request.query.get("format", "jsonl")
    if fmt not in ("jsonl", "csv"):
        raise ApiError(400, f"format={fmt!r}: use format=jsonl (a run a line) or format=csv (a row per run and "
                            "evaluator)")
    views = await _runs_with_results(request, s, e)
    for view in views:
        view.setdefault("evaluations", [])
    name = f"experiment-{e.experiment_id}-runs.{fmt}"
    # Encoded off the event loop: a large experiment's export is megabytes.
    encode = run_results.csv_text if fmt == "csv" else run_results.jsonl
    return web.Response(text=await asyncio.to_thread(encode, views),
                        content_type="text/csv" if fmt == "csv" else "application/x-ndjson",
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})


async def pending_runs(request: web.Request) -> web.Response:
    _, s, e = await _experiment(request)
    return json_response({"runs": await asyncio.to_thread(s.pending, e)})


async def record_run(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request, "writer", "record runs")
    req = await parse_body(request, RecordRun)
    async with s.lock(e.experiment_id):
        fresh = await asyncio.to_thread(s.experiment, caller, e.experiment_id, "writer")
        run, duplicate = await asyncio.to_thread(s.record_run, caller, fresh, req)
    view = run.view()
    if duplicate:
        view["duplicate"] = True
    return json_response(view, status=200 if duplicate else 201)


async def session_used(request: web.Request) -> web.Response:
    _, s, e = await _experiment(request)
    run = await asyncio.to_thread(s.runs.by_session, e.experiment_id, request.match_info["session_id"])
    return json_response({"used": run is not None, "run": None if run is None else {
        "run_id": run.run_id, "case_id": run.case_id, "repetition": run.repetition, "attempt": run.attempt}})


async def refetch(request: web.Request) -> web.Response:
    _caller, s, e = await _experiment(request, "writer", "re-read trajectories")
    req = await parse_body(request, RefetchRequest)
    async with s.lock(e.experiment_id):
        result = await asyncio.to_thread(s.refetch, e, list(req.statuses))
    return json_response(result)


async def run_trajectory(request: web.Request) -> web.Response:
    _, s, e = await _experiment(request)
    run = await asyncio.to_thread(s.runs.by_id, e.experiment_id, request.match_info["run_id"], True)
    if run is None:
        raise ApiError(404, f"experiment {e.experiment_id} has no run {request.match_info['run_id']!r}")
    return json_response({"run_id": run.run_id, "session_id": run.session_id,
                          "trajectory_status": run.trajectory_status or None,
                          "source": run.trajectory_source or None, "trajectory": run.trajectory,
                          "problems": run.problems})


async def runs_to_score(request: web.Request) -> web.Response:
    _, s, e = await _experiment(request)
    names = request.query.getall("evaluator", []) or e.code_evaluators
    rescore = bool_param(request, "rescore")
    with_trajectory = bool_param(request, "include_trajectory", default=True)

    def load() -> list[dict[str, Any]]:
        runs = s.runs.finals(e.experiment_id, with_trajectory=with_trajectory)
        cases = {c.id: c for c in s.pinned_cases(e)}
        scored = set() if rescore else s.evaluations.judged_pairs(e.experiment_id)
        applies = e.case_evaluators
        out = []
        for r in runs:
            if r.status != "completed" or r.case_id not in cases:
                continue
            wanted = [n for n in names if n in applies.get(r.case_id, []) and (r.run_id, n) not in scored]
            if not wanted:
                continue
            c = cases[r.case_id]
            out.append({"run_id": r.run_id, "case_id": r.case_id, "repetition": r.repetition, "status": r.status,
                        "input": c.input, "expected": c.expected, "rubric": c.rubric, "answer": r.answer,
                        "output": r.output, "metadata": {"tags": c.tags, **c.metadata, "session_id": r.session_id},
                        "evaluators": wanted, "trajectory": r.trajectory,
                        "trajectory_status": r.trajectory_status or None})
        return out

    return json_response({"runs": await asyncio.to_thread(load)})


async def publish(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request, "writer", "publish evaluations")
    req = await parse_body(request, PublishEvaluations)
    async with s.lock(e.experiment_id):
        result = await asyncio.to_thread(s.publish, caller, e, req)
    return json_response(result, status=201)


async def evaluate(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request, "writer", "score experiments")
    req = await parse_body(request, EvaluateRequest)
    return json_response(await s.evaluate(caller, e, req))


async def _baseline(request: web.Request, caller: Caller, s: ScoringService, raw: Any) -> Experiment:
    if raw is None or not (str(raw).isascii() and str(raw).isdigit()):
        raise ApiError(400, "say which experiment to compare with: baseline_id=N")
    baseline = await asyncio.to_thread(s.experiment, caller, whole_number("baseline_id", str(raw), high=MAX_INT))
    if baseline.status == deletion.DELETED:
        raise ApiError(404, f"baseline experiment {baseline.experiment_id} was deleted; pick another with "
                            "`evalkit experiments list`")
    return baseline


async def scorecard(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request)
    fmt = choice_param(request, "format", ("json", "markdown", "text"), default="json")
    sc, _ = await asyncio.to_thread(s.scorecard, e)
    comparison = None
    if request.query.get("baseline_id"):
        baseline = await _baseline(request, caller, s, request.query.get("baseline_id"))
        comparison = await asyncio.to_thread(s.comparison, e, baseline, alpha=0.05, allow_incomplete=True)
    if fmt == "markdown":
        text = render_markdown(sc) + ("\n\n" + render_comparison_markdown(comparison) if comparison else "")
        return web.Response(text=text, content_type="text/markdown")
    if fmt == "text":
        return web.Response(text=render_text(sc), content_type="text/plain")
    return json_response({"scorecard": sc.model_dump(mode="json"), "complete": sc.complete,
                          "comparison": comparison.model_dump(mode="json") if comparison else None,
                          "markdown": render_markdown(sc)})


async def compare_route(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request)
    fmt = choice_param(request, "format", ("json", "markdown"), default="json")
    baseline = await _baseline(request, caller, s, request.query.get("baseline_id"))
    alpha = float_param(request, "alpha", 0.05, low=0.0, high=1.0) or 0.0
    if not 0 < alpha < 1:
        raise ApiError(400, f"alpha={alpha:g} is out of range: use a significance level between 0 and 1 "
                            "(exclusive), e.g. alpha=0.05")
    comparison = await asyncio.to_thread(s.comparison, e, baseline, alpha=alpha,
                                         allow_incomplete=bool_param(request, "allow_incomplete"))
    if fmt == "markdown":
        return web.Response(text=render_comparison_markdown(comparison), content_type="text/markdown")
    return json_response(comparison.model_dump(mode="json"))


async def gate_route(request: web.Request) -> web.Response:
    caller, s, e = await _experiment(request)
    req = await parse_body(request, GateRequest)
    baseline = await _baseline(request, caller, s, req.baseline_id)
    if baseline.experiment_id == e.experiment_id:  # a CI job's misconfigured baseline: refused, not passed
        raise ApiError(400, gated_against_itself(e.experiment_id))
    comparison = await asyncio.to_thread(s.comparison, e, baseline, alpha=req.alpha,
                                         allow_incomplete=req.allow_incomplete)
    config = req.model_dump(exclude={"baseline_id", "alpha"})
    from .compare import GateConfig

    result = run_gate(comparison, GateConfig.model_validate(config))
    return json_response({**result.model_dump(mode="json"), "markdown": render_gate_markdown(result)})


_RUNNER = web.AppKey("scoring_harness", HarnessRunner)


def add_routes(app: web.Application, context: Context) -> None:
    settings = context.settings
    prices = None
    try:
        from evalkit.trajectory.prices import PriceBook

        path = settings.price_file_path
        prices = PriceBook.from_file(path) if path else PriceBook()
    except (OSError, ValueError):
        prices = None
    # The one place the blob settings are read (scoring/blob_settings.py); a URL naming no store stops the start.
    blob_store = blob_store_from(os.environ, settings.data_dir, settings.extra)
    judge = server_judge(settings.extra)
    # The server's own judge is the operator's choice: its host may be internal without being listed.
    outbound = OutboundPolicy.from_setting(settings.outbound_allow, *([judge.base_url] if judge else []))
    service = ScoringService(context.store, context.access, data_dir=settings.data_dir, clock=context.access.clock,
                             judge=judge, quiet_period=settings.settle_quiet_seconds,
                             prices=prices, blob_store=blob_store, outbound=outbound)
    runner = HarnessRunner(service)
    app[_KEY] = service
    app[_RUNNER] = runner
    context.extras["scoring"] = service
    context.extras.setdefault("on_ready", []).append(runner.resume_running)
    context.extras.setdefault("on_stop", []).append(runner.stop)
    r = app.router
    r.add_put("/api/workspaces/{workspace}/evaluators/{name}", put_evaluator)
    r.add_get("/api/workspaces/{workspace}/evaluators", list_evaluators)
    r.add_put("/api/workspaces/{workspace}/blobs/{sha256}", put_blob)
    r.add_get("/api/workspaces/{workspace}/blobs/{sha256}", get_blob)  # aiohttp answers HEAD with it
    r.add_get("/api/workspaces/{workspace}/blobs", list_blobs)
    r.add_post("/api/datasets/{dataset}", push_dataset)
    r.add_get("/api/datasets", list_datasets)
    r.add_get("/api/datasets/{dataset}", show_dataset)
    r.add_get("/api/datasets/{dataset}/versions", dataset_versions)
    r.add_delete("/api/datasets/{dataset}", delete_dataset)
    r.add_post("/api/datasets/{dataset}/rename", rename_dataset)
    r.add_put("/api/datasets/{dataset}/cases/{case_id}/review", review_case)
    r.add_post("/api/experiments", create_experiment)
    r.add_get("/api/experiments", list_experiments)
    r.add_get("/api/experiments/{id}", get_experiment)
    r.add_patch("/api/experiments/{id}", change_experiment)
    r.add_delete("/api/experiments/{id}", delete_experiment)
    r.add_post("/api/experiments/{id}/lease", acquire_lease)
    r.add_delete("/api/experiments/{id}/lease", release_lease)
    r.add_post("/api/experiments/{id}/resume", resume)
    r.add_get("/api/experiments/{id}/cases", pinned_cases)
    r.add_get("/api/experiments/{id}/runs", list_runs)
    r.add_get("/api/experiments/{id}/runs/pending", pending_runs)
    r.add_get("/api/experiments/{id}/export", export_runs)
    r.add_get("/api/experiments/{id}/runs/to-score", runs_to_score)
    r.add_post("/api/experiments/{id}/runs", record_run)
    r.add_get("/api/experiments/{id}/runs/{run_id}/trajectory", run_trajectory)
    r.add_get("/api/experiments/{id}/sessions/{session_id}", session_used)
    r.add_post("/api/experiments/{id}/trajectories/refetch", refetch)
    r.add_post("/api/experiments/{id}/evaluations", publish)
    r.add_post("/api/experiments/{id}/evaluate", evaluate)
    r.add_get("/api/experiments/{id}/scorecard", scorecard)
    r.add_get("/api/experiments/{id}/compare", compare_route)
    r.add_post("/api/experiments/{id}/gate", gate_route)
