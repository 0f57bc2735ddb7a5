"""The scoring service: the rules of experiments over the repositories.

Every status or lease transition of an experiment happens under that
experiment's asyncio lock, so two requests never interleave a read-check-write
of the same experiment in this process. Store calls run in threads.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib.metadata
import json
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NamedTuple

from evalkit.access import Access, Agent, NotFound
from evalkit.api import ApiError, Caller
from evalkit.outbound import OutboundPolicy
from evalkit.scoring_hint import finish_scoring_hint, python_evaluator_refs
from evalkit.store import Store
from evalkit.trajectory.prices import PriceBook

from . import evaluate as scoring_eval
from .blobs import BlobDirectory, Blobs, BlobStore
from .compare import Comparison, compare
from .datasets import Case, Datasets, DatasetVersion
from .evaluations import Evaluations, StoredEvaluation
from .evaluators import EVALUATOR_TYPES, EvaluatorConfigError, build_evaluator
from .experiments import FINAL_STATUSES, TRANSITIONS, Experiment, Experiments
from .leases import Lease, LeaseRefused, Leases, resume_hint
from .models import ChangeExperiment, CreateExperiment, EvaluateRequest, PublishEvaluations, RecordRun
from .record_columns import read_columns
from .records_cache import Entry as CacheEntry
from .records_cache import RecordsCache, row_token
from .runs import Run, Runs
from .scorecard import ExperimentRecords, RunRecord, Scorecard, build_scorecard, mean_scores
from .secrets import WorkspaceSecrets, secret_box
from .tables import next_version
from .trajectories import RunTrajectory, better, from_session, pushed


def _version() -> str:
    try:
        return importlib.metadata.version("evalkit")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


evalkit_version = _version()
HARNESS_HOLDER = "evalkit-server:harness"
NOT_READ_YET = "not read yet: recorded as its task returned, before its session settled"
# The problem of a run whose session id another run of its experiment had already claimed (it failed for it).
SESSION_TAKEN = "the session id is used by another run"
INTERRUPTED = "interrupted: evalkit server shut down"


def not_yet_run(e: Experiment, left: int) -> str:
    """Why an experiment cannot be scored in full yet, and what to do."""
    experiment_id = e.experiment_id
    return (f"experiment {experiment_id} has {left} run(s) not yet run (no attempt recorded); finish them with "
            f"`run_experiment(..., resume={experiment_id})` or `evalkit run … --resume {experiment_id}`, or score "
            f"what is there with \"partial\": true ({evaluate_hint(e, partial=True)}). Failed and timed-out runs "
            "are results: they never block scoring")


def evaluate_hint(e: Experiment, *, rescore: bool = False, partial: bool = False) -> str:
    """The command (and SDK call) that finishes scoring `e`, its Python evaluators named."""
    return finish_scoring_hint(e.experiment_id, python_evaluator_refs(e.config), rescore=rescore, partial=partial)


_LEASE_TAKEN = "lease taken by "  # the reason a runner's first lease writes (`acquire`)


class Incomplete(NamedTuple):
    """Why an experiment is not whole enough to compare, and the command that finishes it."""

    reason: str
    unscored: bool  # every planned run ran, some are not scored (else runs are missing or it was stopped)


class ScoringService:
    def __init__(self, store: Store, access: Access, *, data_dir: Path, clock: Callable[[], float] = time.time,
                 judge: scoring_eval.ServerJudge | None = None, quiet_period: float = 5.0,
                 prices: PriceBook | None = None, blob_store: BlobStore | None = None,
                 outbound: OutboundPolicy | None = None) -> None:
        self.store = store
        # What the server may call for a workspace writer (HTTP evaluators, judges, harnesses).
        self.outbound = outbound or OutboundPolicy()
        self.access = access
        self.clock = clock
        self.judge = judge
        self.quiet_period = quiet_period
        self.prices = prices
        self.datasets = Datasets(store)
        self.experiments = Experiments(store)
        self.leases = Leases(store)
        self.runs = Runs(store)
        self.evaluations = Evaluations(store)
        self.blobs = Blobs(store, blob_store if blob_store is not None else BlobDirectory(data_dir / "blobs"))
        self.secrets = WorkspaceSecrets(store, secret_box(data_dir))
        self.records_cache = RecordsCache()
        self._locks: dict[int, asyncio.Lock] = {}
        # Set by the harness module: starts the driver of a harness experiment.
        self.start_harness: Callable[[Experiment, Agent], None] | None = None

    def lock(self, experiment_id: int) -> asyncio.Lock:
        return self._locks.setdefault(experiment_id, asyncio.Lock())

    # -- names and access -------------------------------------------------------------
    def resolve_dataset(self, caller: Caller, ref: str) -> tuple[str, str]:
        name, at, workspace = ref.partition("@")
        if not name:
            raise ApiError(400, f"dataset {ref!r}: write `name` (your personal workspace) or `name@workspace`")
        if at:
            return workspace, name
        if caller.role == "key":
            raise ApiError(400, "an ingest key has no personal workspace; name the dataset `name@workspace`")
        return self.access.ensure_personal_workspace(caller.name) if caller.is_admin else caller.name, name

    def workspace_of_path(self, caller: Caller, workspace: str) -> str:
        if workspace != "~":
            return workspace
        if caller.role == "key":
            raise ApiError(400, "an ingest key has no personal workspace ('~'); name the workspace")
        return self.access.ensure_personal_workspace(caller.name) if caller.is_admin else caller.name

    def experiment(self, caller: Caller, experiment_id: int, role: str = "reader", doing: str = "read it"
                   ) -> Experiment:
        found = self.experiments.get(experiment_id)
        if found is None or not caller.can(found.workspace, "reader"):
            raise ApiError(404, f"experiment {experiment_id} does not exist or is not visible to this token; "
                                "list yours with `GET /api/experiments`")
        caller.require_role(found.workspace, role, doing)
        return found

    def can_change(self, caller: Caller, e: Experiment) -> bool:
        return caller.can(e.workspace, "admin") or (caller.can(e.workspace, "writer") and e.created_by == caller.name)

    def require_change(self, caller: Caller, e: Experiment) -> None:
        if not self.can_change(caller, e):
            raise ApiError(403, f"experiment {e.experiment_id} was started by {e.created_by}; only they (as writer) "
                                f"or an admin of {e.workspace!r} may change it")

    def workspace_evaluators(self, workspace: str) -> dict[str, dict[str, Any]]:
        rows = self.store.query("SELECT name, spec, removed FROM workspace_evaluators FINAL "
                                "WHERE workspace = {w:String}", {"w": workspace})
        return {r[0]: json.loads(r[1]) for r in rows if not r[2]}

    def put_workspace_evaluator(self, workspace: str, name: str, spec: dict[str, Any], by: str) -> None:
        self.store.insert("workspace_evaluators", [[workspace], [name], [json.dumps(spec)], [False], [by],
                                                   [next_version()]],
                          ["workspace", "name", "spec", "removed", "created_by", "version"])

    # -- creation -------------------------------------------------------------------------
    def create_experiment(self, caller: Caller, req: CreateExperiment, capabilities: dict[str, Any] | None
                          ) -> Experiment:
        try:
            agent = self.access.get_agent(req.agent)
        except NotFound as exc:
            raise ApiError(404, str(exc)) from exc
        caller.require_role(agent.workspace, "writer", "start experiments")
        if agent.archived:
            raise ApiError(409, f"agent {agent.agent_id} is archived and takes no new experiments; "
                                f"unarchive it with `PATCH /api/agents/{agent.agent_id}` {{\"archived\": false}}")
        ds_workspace, ds_name = self.resolve_dataset(caller, req.dataset)
        caller.require_role(ds_workspace, "reader", "use its datasets")
        version = self.datasets.get(ds_workspace, ds_name, req.dataset_version)
        if version is None:
            which = f" version {req.dataset_version}" if req.dataset_version else ""
            raise ApiError(404, f"dataset {ds_name}@{ds_workspace}{which} does not exist; push it with "
                                f"`evalkit datasets push {ds_name} --workspace {ds_workspace}` "
                                "(`evalkit datasets list` lists those there are)")
        cases = self.datasets.cases(version)
        if req.case_ids is not None:
            known = {c.id for c in cases}
            unknown = [i for i in req.case_ids if i not in known]
            if unknown:
                raise ApiError(400, f"case ids not in dataset {version.dataset} version {version.version}: {unknown}")
            wanted = set(req.case_ids)
            cases = [c for c in cases if c.id in wanted]
        if req.split is not None:
            cases = [c for c in cases if req.split in c.tags]
        if not cases:
            raise ApiError(400, f"no case of {version.dataset} matches the selection (case_ids={req.case_ids}, "
                                f"split={req.split!r}); check the ids and tags with "
                                f"`GET /api/datasets/{version.dataset}`")
        remote = self.workspace_evaluators(agent.workspace)
        for name in req.evaluators:
            if name in remote or name in EVALUATOR_TYPES or name == scoring_eval.JUDGE:
                raise ApiError(400, f"Python evaluator {name!r} clashes with a "
                                    f"{'workspace evaluator' if name in remote else 'built-in evaluator'} of that "
                                    "name; rename it (`@evaluator(name=...)`)")
        judge = self._judge_config(req)
        specs: dict[str, dict[str, Any]] = {}
        case_evaluators: dict[str, list[str]] = {}
        dropped: list[dict[str, Any]] = []
        kept: list[Case] = []
        present = self.blobs.present(ds_workspace, [f.sha256 for c in cases for f in c.files])
        for case in cases:
            reason, names = self._case_evaluators(case, req.evaluators, remote, judge, specs)
            missing = [f for f in case.files if f.sha256 not in present]
            if reason is None and missing:
                f = missing[0]
                reason = (f"fixture {f.name} (sha256 {f.sha256}) is not stored in workspace {ds_workspace!r}; "
                          f"put it with `PUT /api/workspaces/{ds_workspace}/blobs/{f.sha256}` or re-push the dataset")
            if reason is None and case.input is None:
                reason = "the case has no input"
            if reason is not None:
                dropped.append({"case_id": case.id, "reason": reason})
                continue
            kept.append(case)
            case_evaluators[case.id] = names
        if not kept:
            lines = "; ".join(f"{d['case_id']}: {d['reason']}" for d in dropped)
            raise ApiError(400, f"every selected case was dropped: {lines}")
        now = self.clock()
        config = {
            "agent": agent.agent_id, "agent_kind": agent.kind, "dataset": version.dataset,
            "dataset_workspace": ds_workspace, "dataset_name": ds_name, "dataset_version": version.version,
            "git_revision": version.git_revision or None, "case_ids": req.case_ids, "split": req.split,
            "repetitions": req.repetitions, "model": req.model, "judge": judge,
            "code_evaluators": list(dict.fromkeys(req.evaluators)),
            "code_evaluator_refs": {n: r for n, r in req.evaluator_refs.items() if n in req.evaluators},
            "service_evaluators": specs,
            "case_evaluators": case_evaluators, "capabilities": capabilities or req.capabilities,
            "evalkit_version": req.evalkit_version or evalkit_version, "server_version": evalkit_version,
            "budget_usd": req.budget_usd, "name": req.name, "description": req.description, "metadata": req.metadata,
            "run_settings": req.run_settings.model_dump(exclude_none=True) if req.run_settings else {},
        }
        # The keys its service evaluators need are kept (encrypted, for this workspace): the service scores a
        # harness experiment itself, later, with no SDK at hand to pass them.
        kept_keys = self._needed_credentials(specs, req.credentials)
        self.secrets.put(agent.workspace, kept_keys, caller.name)
        config["stored_credentials"] = sorted(kept_keys)
        experiment = Experiment(0, agent.workspace, agent.agent_id, version.dataset, version.version, caller.name, now,
                                config, [c.id for c in kept], dropped, "pending", "", req.model or "", now)
        return self.experiments.create(experiment)

    @staticmethod
    def _needed_credentials(specs: dict[str, dict[str, Any]], credentials: dict[str, str]) -> dict[str, str]:
        """The given credentials some service evaluator of the experiment uses (by judge base_url or HTTP url)."""
        urls = set()
        for spec in specs.values():
            nested = spec.get("config")
            config: dict[str, Any] = nested if isinstance(nested, dict) else spec
            for key in ("base_url", "url"):
                if isinstance(config.get(key), str):
                    urls.add(config[key].rstrip("/"))
        given = {k.rstrip("/"): v for k, v in credentials.items() if v}
        return {url: given[url] for url in sorted(urls) if url in given}

    def _judge_config(self, req: CreateExperiment) -> dict[str, Any] | None:
        if req.judge is None:
            return self.judge.config() if self.judge else None
        try:
            build_evaluator(scoring_eval.judge_spec(req.judge), credentials=req.credentials)
        except EvaluatorConfigError as exc:
            raise ApiError(400, f"judge settings: {exc}") from exc
        return dict(req.judge)

    def _case_evaluators(self, case: Case, code: list[str], remote: dict[str, dict[str, Any]],
                         judge: dict[str, Any] | None, specs: dict[str, dict[str, Any]]
                         ) -> tuple[str | None, list[str]]:
        """(why the case is dropped or None, the evaluator names it asks for); adds service specs to `specs`."""
        names: list[str] = []
        for item in case.wanted_evaluators():
            if isinstance(item, dict):
                name = str(item.get("name") or item.get("type"))
                spec = {k: v for k, v in item.items() if k != "name"}
                try:
                    build_evaluator(item)
                except EvaluatorConfigError as exc:
                    return f"evaluator {name!r}: {exc}", []
                if name in specs and specs[name] != spec:
                    return f"evaluator {name!r} is defined differently by another case; give it another name", []
                specs[name] = spec
            elif item in code:
                name = item
            elif item == scoring_eval.JUDGE:
                if judge is None:
                    raise ApiError(400, f"case {case.id} asks for the LLM judge but none is configured: pass "
                                        "judge={'base_url': ..., 'model': ...} or set EVALKIT_JUDGE_BASE_URL and "
                                        "EVALKIT_JUDGE_MODEL on the server")
                name = item
                specs[name] = scoring_eval.judge_spec(judge)
            elif item in remote:
                name = item
                specs[name] = remote[item]
            elif item in EVALUATOR_TYPES:
                try:
                    build_evaluator({"type": item})
                except EvaluatorConfigError as exc:
                    return f"evaluator {item!r} needs a config here: {exc}", []
                name = item
                specs[name] = {"type": item}
            else:
                return (f"asks for evaluator {item!r}, which is not a workspace evaluator, a built-in type or a "
                        "declared Python evaluator (run_experiment(evaluators=[...]))"), []
            names.append(name)
        return None, list(dict.fromkeys(names))

    # -- the pinned cases -----------------------------------------------------------------
    def pinned_cases(self, e: Experiment) -> list[Case]:
        version = self._dataset_version(e)
        wanted = set(e.cases)
        return [c for c in self.datasets.cases(version) if c.id in wanted]

    def _dataset_version(self, e: Experiment) -> DatasetVersion:
        version = self.datasets.get(e.config["dataset_workspace"], e.config["dataset_name"], e.dataset_version)
        if version is None:
            raise ApiError(500, f"the dataset version {e.dataset_version} of experiment {e.experiment_id} is gone")
        return version

    # -- runs -----------------------------------------------------------------------------
    def unrecorded(self, e: Experiment) -> int:
        """Planned (case, repetition) slots without any recorded attempt: the runs still to come."""
        rows = self.store.query("SELECT uniqExact(case_id, repetition) FROM runs FINAL "
                                "WHERE experiment_id = {i:UInt64}", {"i": e.experiment_id})
        return e.planned - int(rows[0][0] if rows else 0)

    def pending(self, e: Experiment, attempts: list[Run] | None = None) -> list[dict[str, Any]]:
        """Slots not finished: never recorded, or whose final attempt failed, timed out or was cancelled
        (what a resumed runner runs again)."""
        finals = {(r.case_id, r.repetition): r for r in (attempts or self.runs.attempts(e.experiment_id)) if r.final}
        out = []
        for case_id in e.cases:
            for rep in range(e.repetitions):
                run = finals.get((case_id, rep))
                if run is None or run.status != "completed":
                    out.append({"case_id": case_id, "repetition": rep, "attempt": run.attempt + 1 if run else 1})
        return out

    def record_run(self, caller: Caller, e: Experiment, req: RecordRun, *, internal: bool = False
                   ) -> tuple[Run, bool]:
        """Store a run (caller holds the experiment's lock); returns (run, duplicate)."""
        if e.status in ("completed", "cancelled", "failed"):
            raise ApiError(409, f"experiment {e.experiment_id} is {e.status}; it takes no more runs"
                           + (f"; {resume_hint(e.experiment_id)}" if e.status != "completed" else ""))
        if not internal:
            try:
                self.leases.check(e.experiment_id, req.lease_holder)
            except LeaseRefused as exc:
                raise ApiError(409, str(exc)) from exc
        if req.case_id not in e.cases:
            raise ApiError(400, f"case {req.case_id!r} is not a case of experiment {e.experiment_id}; its cases are "
                                f"listed by `GET /api/experiments/{e.experiment_id}/cases`")
        if req.repetition >= e.repetitions:
            raise ApiError(400, f"repetition {req.repetition} is out of range: experiment {e.experiment_id} has "
                                f"{e.repetitions} repetition(s), numbered from 0")
        existing = self.runs.get(e.experiment_id, req.case_id, req.repetition, req.attempt)
        if existing is not None:
            return self._refreshed(e, existing, req), True
        status, error = req.status, req.error
        other = self.runs.by_session(e.experiment_id, req.session_id)
        if other is not None and (other.case_id, other.repetition) != (req.case_id, req.repetition):
            status = "failed"
            error = (f"session id {req.session_id} already serves run {other.case_id}#{other.repetition} of "
                     f"experiment {e.experiment_id}; give every run its own session id")
        if status != req.status:
            trajectory = RunTrajectory("unavailable", "", None, [SESSION_TAKEN])
        elif req.trajectory_pending and req.trajectory is None:
            trajectory = RunTrajectory("unavailable", "", None, [NOT_READ_YET])
        else:
            trajectory = self.fetch_trajectory(e, req.session_id, req.trajectory)
        metrics = dict(trajectory.metrics)
        for key, value in (req.metrics or {}).items():
            if metrics.get(key) is None and value is not None:
                metrics[key] = value
        if metrics.get("duration_seconds") is None and req.started_at is not None and req.ended_at is not None:
            metrics["duration_seconds"] = max(0.0, req.ended_at - req.started_at)
        run = Run(e.experiment_id, req.case_id, req.repetition, req.attempt, req.session_id, status, req.answer,
                  req.output, error, req.model or e.model or trajectory.model, req.started_at, req.ended_at,
                  trajectory.status,
                  trajectory.source, trajectory.document, trajectory.problems, metrics, caller.name, self.clock())
        self.runs.save([run])
        self.after_runs(e)
        return run, False

    def _refreshed(self, e: Experiment, run: Run, req: RecordRun) -> Run:
        """A run recorded again: the SDK records each run the moment its task call returns (so that a kill
        loses nothing finished) and sends the same record once the session has settled. The row is kept;
        its trajectory is read again when it was not settled yet, and replaced when the new one is better."""
        if req.trajectory_pending or run.trajectory_source == "pushed" \
                or run.trajectory_status in ("valid", "invalid") \
                or run.session_id != req.session_id or run.status != req.status:
            return run
        fresh = self.fetch_trajectory(e, run.session_id, req.trajectory)
        if req.trajectory is None and fresh.status == "unavailable" and run.trajectory_status != "unavailable":
            return run
        metrics = {**run.metrics, **{k: v for k, v in fresh.metrics.items() if v is not None}}
        updated = dataclasses.replace(run, trajectory_status=fresh.status, trajectory_source=fresh.source,
                                      trajectory=fresh.document, problems=fresh.problems, metrics=metrics,
                                      model=run.model or fresh.model)
        self.runs.save([updated])
        return updated

    def fetch_trajectory(self, e: Experiment, session_id: str, document: dict[str, Any] | None) -> RunTrajectory:
        if document is not None:
            return pushed(document)
        return from_session(self.store, e.agent_id, session_id, now=self.clock(), quiet_period=self.quiet_period,
                            prices=self.prices)

    def _unread(self, e: Experiment) -> bool:
        """Whether any run of `e` has a session never read (one narrow query, not the runs)."""
        rows = self.store.query("SELECT count() FROM runs FINAL WHERE experiment_id = {i:UInt64} "
                                "AND trajectory_status = 'unavailable' AND has(problems, {m:String})",
                                {"i": e.experiment_id, "m": NOT_READ_YET})
        return bool(rows and rows[0][0])

    def refetch(self, e: Experiment, statuses: list[str], *, only_unread: bool = False) -> dict[str, Any]:
        """Read the sessions of final runs whose trajectory has one of `statuses` again (`only_unread`: only
        those never read, recorded as their task returned by a runner that died before they settled)."""
        changed: dict[str, int] = {}
        count = 0
        updated = []
        for run in self.runs.finals(e.experiment_id):
            if run.trajectory_status not in statuses or run.trajectory_source == "pushed":
                continue
            if only_unread and NOT_READ_YET not in run.problems:
                continue
            if SESSION_TAKEN in run.problems:
                continue  # its session is another run's: reading it would give this run that run's trajectory
            count += 1
            fresh = self.fetch_trajectory(e, run.session_id, None)
            if better(run.trajectory_status, fresh):
                key = f"{run.trajectory_status}->{fresh.status}"
                changed[key] = changed.get(key, 0) + 1
                metrics = {**run.metrics, **{k: v for k, v in fresh.metrics.items() if v is not None}}
                updated.append(dataclasses.replace(run, trajectory_status=fresh.status, trajectory_source=fresh.source,
                                                   trajectory=fresh.document, problems=fresh.problems,
                                                   metrics=metrics, model=run.model or fresh.model))
        self.runs.save(updated)
        return {"refetched": count, "changed": changed}

    def set_status(self, e: Experiment, status: str, reason: str = "") -> Experiment:
        changed = e.with_status(status, reason, self.clock())
        self.experiments.save(changed)
        return changed

    def runner_lease(self, e: Experiment) -> Lease | None:
        """The live lease of a runner (the SDK, a script) on the experiment, or None.

        While a runner holds one, the runner decides when running is over (`PATCH status=evaluating`): it
        may still record retried attempts of slots that already have one. The service's own harness driver
        holds a lease too, but moves its experiment on itself (`finish_running`).
        """
        lease = self.leases.get(e.experiment_id)
        if lease is None or lease.holder == HARNESS_HOLDER or not lease.live(self.clock()):
            return None
        return lease

    def after_runs(self, e: Experiment) -> Experiment:
        """Move on by itself when the last planned slot is in and no runner holds a live lease:
        running → evaluating (→ completed when nothing is left to score)."""
        current = self.experiments.get(e.experiment_id) or e
        if current.status in ("running", "pending") and current.config.get("agent_kind") != "harness" \
                and self.runner_lease(current) is None:
            return self.finish_running(current, "every planned run is recorded and no runner holds the lease")
        return current

    def finish_running(self, e: Experiment, reason: str) -> Experiment:
        """running → evaluating once every planned slot has an attempt (→ completed when nothing to score).

        Called by the harness driver at the end of its pass, and by `after_runs` when no runner holds a live
        lease; a runner says it with `PATCH status=evaluating`. Caller holds the experiment's lock.
        """
        if e.status in ("running", "pending") and not self.unrecorded(e):
            return self.after_scoring(self.set_status(e, "evaluating", reason))
        return e

    def unscored(self, e: Experiment) -> dict[str, int]:
        """Evaluator → completed final runs it applies to and has not scored."""
        entry = self._cached(e)
        if entry is not None:
            # A completed experiment's cached records hold the same final runs, and their latest evaluations
            # cover every scored (run, evaluator) pair: the gate asks this before every comparison.
            # A completed run an applicable evaluator has no evaluation of is what the scorecard counts as
            # unscored: the same rule, from the same columns, without an object per run.
            records = entry.records
            return dict(self.records_cache.derived(entry, ("unscored",), lambda: {
                name: v.unscored for name in records.evaluator_names if (v := records.values(name)).unscored}))
        pairs = self.evaluations.scored_pairs(e.experiment_id)
        return self._unscored(self.runs.final_records(e.experiment_id),
                              lambda run_id, name: (run_id, name) in pairs, e.case_evaluators)

    @staticmethod
    def _unscored(final_runs: Sequence[RunRecord], scored: Callable[[str, str], bool],
                  applies: dict[str, list[str]]) -> dict[str, int]:
        out: dict[str, int] = {}
        for run in final_runs:
            if run.status != "completed":
                continue
            for name in applies.get(run.case_id, []):
                if not scored(run.run_id, name):
                    out[name] = out.get(name, 0) + 1
        return out

    def after_scoring(self, e: Experiment) -> Experiment:
        if e.status == "evaluating" and not self.unrecorded(e) and not self.unscored(e):
            return self.set_status(e, "completed", "every run is recorded and scored")
        return e

    # -- evaluations ----------------------------------------------------------------------
    def publish(self, caller: Caller, e: Experiment, req: PublishEvaluations) -> dict[str, Any]:
        lease = self.leases.get(e.experiment_id)
        if lease is not None and lease.live(self.clock()) and lease.holder != req.lease_holder \
                and lease.holder != HARNESS_HOLDER:
            raise ApiError(409, f"experiment {e.experiment_id} is being run by {lease.holder}; publish with its "
                                f"lease_holder, or wait for it to finish")
        declared = set(e.code_evaluators)
        finals = {r.run_id for r in self.runs.final_records(e.experiment_id)}
        known_attempts = {r.run_id for r in self.runs.attempts(e.experiment_id)}
        for ev in req.evaluations:
            if ev.evaluator not in declared:
                raise ApiError(400, f"evaluator {ev.evaluator!r} is not declared by experiment {e.experiment_id} "
                                    f"(declared: {sorted(declared) or 'none'}); declare it: "
                                    "run_experiment(evaluators=[...])")
            if ev.run_id not in known_attempts:
                raise ApiError(400, f"run {ev.run_id!r} is not a run of experiment {e.experiment_id}")
        version = next_version()
        stored = [StoredEvaluation(ev.run_id, ev.evaluator, ev.score, ev.passed, ev.label, ev.explanation,
                                   ev.metadata, ev.error, ev.evaluator_version, ev.cost_usd, "sdk")
                  for ev in req.evaluations if ev.run_id in finals]
        self.evaluations.save(e.experiment_id, stored, version=version, by=caller.name, now=self.clock())
        current = self.after_scoring(self.experiments.get(e.experiment_id) or e)
        return {"recorded": len(stored), "version": version, "status": current.status}

    async def evaluate(self, caller: Caller, e: Experiment, req: EvaluateRequest) -> dict[str, Any]:
        left = await asyncio.to_thread(self.unrecorded, e)
        if left and not req.partial:
            raise ApiError(409, not_yet_run(e, left))
        if req.refetch_trajectories:
            await asyncio.to_thread(self.refetch, e, ["partial", "unavailable"])
        else:
            # Runs a killed runner recorded before their sessions settled were never read: read them now, so
            # they are scored on their trajectories (a run read before, whatever its status, is left alone).
            if await asyncio.to_thread(self._unread, e):
                await asyncio.to_thread(self.refetch, e, ["unavailable"], only_unread=True)
        specs = e.service_evaluators
        if req.evaluators is not None:
            unknown = [n for n in req.evaluators if n not in specs]
            if unknown:
                raise ApiError(400, f"experiment {e.experiment_id} has no service evaluator {unknown}; its service "
                                    f"evaluators are {sorted(specs)} (Python evaluators run in the SDK)")
            specs = {n: s for n, s in specs.items() if n in req.evaluators}
        # Keys kept from the experiment's creation (its workspace's), then the ones this request brings.
        credentials = {**await asyncio.to_thread(self.secrets.all, e.workspace),
                       **{k.rstrip("/"): v for k, v in req.credentials.items()}}
        if self.judge is not None and self.judge.api_key:
            credentials.setdefault(self.judge.base_url, self.judge.api_key)
        runs = await asyncio.to_thread(self.runs.finals, e.experiment_id, with_trajectory=True)
        cases = {c.id: c for c in await asyncio.to_thread(self.pinned_cases, e)}
        skip = set() if req.rescore else await asyncio.to_thread(self.evaluations.judged_pairs, e.experiment_id)
        async with self.outbound.session() as session:
            evaluators, broken = scoring_eval.build_all(specs, credentials, session, self.prices)
            results = await scoring_eval.score(e.experiment_id, runs, cases, e.case_evaluators, evaluators, broken,
                                               skip=skip)
        version = next_version()
        await asyncio.to_thread(self.evaluations.save, e.experiment_id, results, version=version, by=caller.name,
                                now=self.clock())
        async with self.lock(e.experiment_id):
            current = await asyncio.to_thread(self._finish_scoring, e.experiment_id)
        unscored = await asyncio.to_thread(self.unscored, current)
        costs = [r.cost_usd for r in results]
        return {"experiment_id": e.experiment_id, "scored": len(results),
                "errors": sum(1 for r in results if r.error is not None), "version": version,
                "status": current.status,
                "pending_code_evaluators": sorted(n for n in unscored if n in e.code_evaluators),
                "cost_usd": None if any(c is None for c in costs) else sum(c or 0.0 for c in costs)}

    def _finish_scoring(self, experiment_id: int) -> Experiment:
        current = self.experiments.get(experiment_id)
        assert current is not None
        # A runner that died after its last run (its lease expired) left the experiment running.
        return self.after_scoring(self.after_runs(current))

    # -- status, lease, resume ------------------------------------------------------------
    def change(self, caller: Caller, e: Experiment, req: ChangeExperiment) -> Experiment:
        self.require_change(caller, e)
        lease = self.leases.get(e.experiment_id)
        now = self.clock()
        if lease is not None and lease.live(now) and lease.holder not in (req.lease_holder, HARNESS_HOLDER) \
                and req.status != "cancelled":
            raise ApiError(409, f"experiment {e.experiment_id} is being run by {lease.holder}; pass its lease_holder "
                                "or cancel the experiment")
        if req.model is not None and req.model != e.model:
            e = dataclasses.replace(e, model=req.model, config={**e.config, "model": req.model})
            self.experiments.save(e)
        renamed = {k: v for k, v in (("name", req.name), ("description", req.description))
                   if v is not None and v != e.config.get(k)}
        if renamed:
            e = dataclasses.replace(e, config={**e.config, **renamed}, updated_at=now)
            self.experiments.save(e)
        if req.status is not None and req.status != e.status:
            allowed = TRANSITIONS.get(e.status, ())
            if req.status not in allowed:
                hint = f"; {resume_hint(e.experiment_id)}" if req.status == "running" else ""
                raise ApiError(409, f"experiment {e.experiment_id} is {e.status}; it can move to "
                                    f"{', '.join(allowed) or 'nothing'} from here{hint}")
            if req.status == "completed" and (self.unrecorded(e) or self.unscored(e)):
                raise ApiError(409, f"experiment {e.experiment_id} is not fully scored; finish it with "
                                    f"{evaluate_hint(e)}")
            e = self.set_status(e, req.status, req.reason)
            if req.status == "evaluating":
                e = self.after_scoring(e)  # nothing to score: completed at once, as when the service moves it
            if e.status in FINAL_STATUSES:
                self.leases.release(e.experiment_id, None, now)
        return e

    def acquire(self, caller: Caller, e: Experiment, holder: str, ttl: float) -> dict[str, Any]:
        if e.status in FINAL_STATUSES:
            raise ApiError(409, f"experiment {e.experiment_id} is {e.status}"
                           + (f"; {resume_hint(e.experiment_id)}" if e.status != "completed" else
                              f"; score it again with {evaluate_hint(e, rescore=True)}"))
        if e.config.get("agent_kind") == "harness":
            raise ApiError(409, f"experiment {e.experiment_id} runs a harness agent: the service drives it and "
                                "holds its lease")
        now = self.clock()
        # An expired lease is taken over here; from then on the old holder is refused.
        try:
            lease, renewed = self.leases.acquire(e.experiment_id, holder, ttl, now)
        except LeaseRefused as exc:
            raise ApiError(409, str(exc)) from exc
        if e.status == "pending":
            self.set_status(e, "running", f"{_LEASE_TAKEN}{holder}")
        return {"experiment_id": e.experiment_id, "holder": lease.holder, "expires_at": lease.expires_at,
                "acquired": not renewed, "renewed": renewed}

    def release(self, e: Experiment, holder: str, why: str = "") -> bool:
        """Give `holder`'s lease back (caller holds the experiment's lock). A runner that gives it back with runs
        left (Ctrl-C, an error) has stopped before the end: its experiment is `stopped`, as one its budget stopped
        is, and the reason says why, how much is left and how to resume. (It stayed `running`, which every list
        showed as at work.) With nothing left, it moves on as when the last run came in without a lease."""
        now = self.clock()
        if not self.leases.release(e.experiment_id, holder, now):
            return False
        current = self.experiments.get(e.experiment_id) or e
        if current.status == "running" and current.config.get("agent_kind") != "harness":
            left = len(self.pending(current))
            if left:
                self.set_status(current, "stopped",
                                f"{why or 'stopped'}: {holder} gave its lease back with {left} of {current.planned} "
                                f"planned runs not finished, and nobody runs it now; "
                                f"{resume_hint(current.experiment_id)}")
            else:
                self.after_runs(current)
        return True

    def can_resume(self, caller: Caller, e: Experiment, pending: list[dict[str, Any]]) -> bool:
        """Runs are left and nothing runs them: any status but a running one whose runner's lease is live
        (a runner killed mid-experiment leaves it `running`; once its lease runs out it is resumable, and
        before that by taking the lease over)."""
        if not pending or not self.can_change(caller, e):
            return False
        if e.status == "running":
            lease = self.leases.get(e.experiment_id)
            return lease is None or not lease.live(self.clock())
        return True

    def resume(self, caller: Caller, e: Experiment, holder: str | None, ttl: float, take_over: bool = False,
               budget_usd: float | None = None, max_tokens: int | None = None) -> dict[str, Any]:
        """Resume `e`'s pending runs. A harness experiment's limits (`budget_usd`, `max_tokens`) may be raised
        here: they hold over every pass, so one stopped by its budget needs a larger one to go on."""
        self.require_change(caller, e)
        pending = self.pending(e)
        if not pending:
            raise ApiError(409, f"experiment {e.experiment_id} has no runs left; score it with "
                                f"{evaluate_hint(e)}")
        harness = e.config.get("agent_kind") == "harness"
        if (budget_usd is not None or max_tokens is not None) and not harness:
            raise ApiError(400, f"experiment {e.experiment_id} runs a code agent: its runner holds the budget; "
                                "pass max_cost_usd / max_tokens to run_experiment(..., resume=N) "
                                "(`evalkit run … --resume N --max-cost-usd X`)")
        if budget_usd is not None or max_tokens is not None:
            settings = dict(e.config.get("run_settings") or {})
            if max_tokens is not None:
                settings["max_tokens"] = max_tokens
            e = dataclasses.replace(e, config={**e.config, "run_settings": settings,
                                               "budget_usd": e.config.get("budget_usd") if budget_usd is None
                                               else budget_usd})
        lease_view = None
        now = self.clock()
        if harness:
            holder = HARNESS_HOLDER
        elif not holder:
            raise ApiError(400, "say who resumes: {\"holder\": \"...\", \"ttl_seconds\": 60}")
        try:
            lease, _ = self.leases.acquire(e.experiment_id, holder, ttl if not harness else 365 * 86400, now,
                                           force=take_over and not harness)
        except LeaseRefused as exc:
            raise ApiError(409, str(exc)) from exc
        lease_view = {"holder": lease.holder, "expires_at": lease.expires_at}
        e = self.set_status(e, "running", f"resumed by {caller.name}")
        return {"experiment_id": e.experiment_id, "status": e.status, "lease": None if harness else lease_view,
                "pending": pending, "_experiment": e}

    # -- views -----------------------------------------------------------------------------
    def records(self, e: Experiment) -> ExperimentRecords:
        """The final runs and latest evaluations of `e` (a completed experiment's from the cache)."""
        entry = self._cached(e)
        return entry.records if entry is not None else self._read_records(e)

    def _cached(self, e: Experiment) -> CacheEntry | None:
        """The cache entry of a completed experiment, read now if missing or stale; None for any other status:
        a running experiment changes with every run, so an entry would only hold memory."""
        if e.status != "completed":
            return None
        token = row_token(self.store, e.experiment_id)
        evaluators, case_evaluators = e.evaluator_names, e.case_evaluators
        entry = self.records_cache.get(e.experiment_id, token, evaluators, case_evaluators)
        if entry is None:
            entry = self.records_cache.put(e.experiment_id, token, evaluators, case_evaluators,
                                           self._read_records(e, evaluators, case_evaluators))
        return entry

    def _read_records(self, e: Experiment, evaluators: list[str] | None = None,
                      case_evaluators: dict[str, list[str]] | None = None) -> ExperimentRecords:
        # The config's mappings are passed in when the caller has them: each property call copies 100,000 cases.
        return ExperimentRecords(columns=read_columns(self.store, e.experiment_id),
                                 experiment_id=str(e.experiment_id),
                                 evaluators=e.evaluator_names if evaluators is None else evaluators,
                                 case_evaluators=e.case_evaluators if case_evaluators is None else case_evaluators,
                                 dataset=e.dataset, dataset_version=e.dataset_version, planned=e.planned)

    def scorecard(self, e: Experiment) -> tuple[Scorecard, ExperimentRecords]:
        entry = self._cached(e)
        if entry is None:
            records = self._read_records(e)
            return build_scorecard(records), records
        records = entry.records
        return self.records_cache.derived(entry, ("scorecard",), lambda: build_scorecard(records)), records

    def incomplete(self, x: Experiment) -> Incomplete | None:
        """Why `x` is not whole enough to compare (stopped, runs missing, runs unscored), with the command that
        finishes it; None when it is."""
        left = self.unrecorded(x)
        if x.status == "stopped" or left:
            why = f"was stopped ({x.status_reason})" if x.status == "stopped" and x.status_reason else \
                "did not run every planned run"
            return Incomplete(f"experiment {x.experiment_id} {why}: {x.planned - left} of {x.planned} planned runs "
                              f"ran; {resume_hint(x.experiment_id)}", unscored=False)
        if self.unscored(x):
            return Incomplete(f"experiment {x.experiment_id} is not fully scored; finish it with {evaluate_hint(x)}",
                              unscored=True)
        return None

    def comparison(self, e: Experiment, baseline: Experiment, *, alpha: float, allow_incomplete: bool
                   ) -> Comparison:
        return self.comparison_and_records(e, baseline, alpha=alpha, allow_incomplete=allow_incomplete)[0]

    def comparison_and_records(self, e: Experiment, baseline: Experiment, *, alpha: float, allow_incomplete: bool
                               ) -> tuple[Comparison, ExperimentRecords, ExperimentRecords]:
        """The comparison, and the records of both sides it was computed from (read once)."""
        if not allow_incomplete:
            for x in (e, baseline):
                why = self.incomplete(x)
                if why is not None:
                    raise ApiError(409, why.reason + (" (or pass allow_incomplete=true)" if why.unscored else
                                                      ", or compare what ran with allow_incomplete=true "
                                                      "(`--allow-incomplete`)"))
        cand, base = self._cached(e), self._cached(baseline)
        cand_records = cand.records if cand is not None else self._read_records(e)
        base_records = base.records if base is not None else self._read_records(baseline)
        if cand is None or base is None:
            return compare(cand_records, base_records, alpha=alpha), cand_records, base_records
        # Keyed by the baseline's entry: a changed baseline (rows or config) is a new entry, so a new comparison.
        return self.records_cache.derived(cand, ("compare", base.serial, alpha),
                                          lambda: compare(cand_records, base_records, alpha=alpha)), \
            cand_records, base_records

    def summary(self, e: Experiment, progress: dict[str, Any] | None, scores: dict[str, float | None] | None
                ) -> dict[str, Any]:
        counts = (progress or {}).get("counts", {})
        recorded = sum(counts.values())
        completed = counts.get("completed", 0)
        cost = None if (progress or {}).get("unpriced") else (progress or {}).get("cost", 0.0)
        return {"experiment_id": e.experiment_id, "agent": e.agent_id, "workspace": e.workspace,
                "dataset": e.dataset, "dataset_version": e.dataset_version, "status": e.status,
                "status_reason": self._status_reason(e), "created_at": e.created_at, "created_by": e.created_by,
                "model": e.model or None, "name": e.config.get("name", ""),
                "progress": {"planned": e.planned, "recorded": recorded, "completed": completed,
                             "failed": counts.get("failed", 0), "timeout": counts.get("timeout", 0),
                             "cancelled": counts.get("cancelled", 0), "pending": e.planned - recorded},
                "scores": scores or {}, "cost_usd": cost}

    def _status_reason(self, e: Experiment) -> str:
        """The stored reason, unless it says a runner holds the lease: then who holds it now, or that its lease ran
        out. A runner killed (kill -9, a lost machine) gives nothing back, and "lease taken by sdk:…" read as if it
        still ran; a runner that took an expired lease over was not named."""
        if e.status != "running" or not e.status_reason.startswith(_LEASE_TAKEN):
            return e.status_reason
        lease = self.leases.get(e.experiment_id)
        now = self.clock()
        if lease is not None and lease.live(now):
            return f"{_LEASE_TAKEN}{lease.holder}"
        holder = lease.holder if lease is not None and lease.holder else e.status_reason[len(_LEASE_TAKEN):]
        expired = "" if lease is None else f" at {datetime.fromtimestamp(lease.expires_at, UTC):%Y-%m-%d %H:%M:%S} UTC"
        return (f"nobody runs it now: the lease of {holder} ran out{expired} (its runner stopped without giving it "
                f"back); {resume_hint(e.experiment_id)}")

    def scores(self, e: Experiment) -> dict[str, float | None]:
        """Mean (pass rate) per evaluator by the scorecard's counting rules, without its intervals."""
        return mean_scores(self.records(e))
