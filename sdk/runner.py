"""run_experiment: call the task once per case and repetition, traced, recorded, scored.

The service is the journal: every attempt is recorded there as it finishes,
so a runner killed at any moment loses at most the calls in flight, and
`resume=` runs exactly what the service says is left.
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
import uuid
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from evalkit.scoring_hint import evaluator_flags, python_evaluator_refs
from evalkit.sdk.binding import PROTOCOL, BoundTask, Outcome, TaskCall
from evalkit.sdk.budget import Budget
from evalkit.sdk.client import ServiceClient, ServiceError, ServiceUnreachable
from evalkit.sdk.config import Project, connection, load_project
from evalkit.sdk.datasets import LocalDataset, read_dataset
from evalkit.sdk.dry_run import DryRunReport
from evalkit.sdk.evaluators import PythonEvaluator
from evalkit.sdk.fixtures import FixtureCache
from evalkit.sdk.interrupt import run_blocking
from evalkit.sdk.lease import LeaseKeeper, LeaseLost, lease_ttl_seconds, new_holder, resume_lease, stop_reason
from evalkit.sdk.models import ExperimentResult, JudgeSettings, RunSummary
from evalkit.sdk.progress import ProgressReport
from evalkit.sdk.provenance import git_revision, versions
from evalkit.sdk.scoring import ScoringError, check_evaluators, refuse_clashes, score_experiment
from evalkit.sdk.service import Service, dataset_workspace
from evalkit.sdk.sync import sync_dataset
from evalkit.sdk.tracing import RunTracer
from evalkit.sdk.transport import otlp_endpoint

RETRY_BASE_SECONDS = 0.5


def run_experiment(*, dataset: str, agent: str, task: Callable[..., Any], **options: Any) -> ExperimentResult:
    """Run `task` over a dataset's cases as a new experiment, and score it (see arun_experiment)."""
    return run_blocking("run_experiment", lambda: arun_experiment(dataset=dataset, agent=agent, task=task, **options))


@dataclass
class Plan:
    """What one experiment (or dry run) runs, and with what."""

    experiment_id: int | None
    agent: str
    cases: dict[str, dict[str, Any]]
    work: list[tuple[str, int, int]]  # (case_id, repetition, first attempt)
    model: str | None
    dataset_workspace: str
    local: LocalDataset | None
    holder: str | None = None
    lease: LeaseKeeper | None = None
    summaries: list[RunSummary] = field(default_factory=list)


async def arun_experiment(
    *, dataset: str, agent: str, task: Callable[..., Any], workspace: str | None = None,
    evaluators: Sequence[PythonEvaluator] = (), repetitions: int = 1, concurrency: int | None = None,
    case_ids: Sequence[str] | None = None, split: str | None = None, model: str | None = None,
    resume: int | None = None, dry_run: bool | int = False, trajectory_wait_seconds: float | None = None,
    judge: JudgeSettings | dict[str, Any] | None = None, timeout: float | None = None, retries: int = 0,
    max_cost_usd: float | None = None, max_tokens: int | None = None, name: str = "", description: str = "",
    take_over: bool = False, url: str | None = None, token: str | None = None, output: IO[str] | None = None,
    progress: bool | None = None,
) -> ExperimentResult:
    """Run `task` once per selected case and repetition, record each call as a run of a new experiment
    (or of experiment `resume`), and score it. Each parameter is described in docs/sdk.md ("Parameters").
    `take_over=True` resumes although another runner's lease is
    live (it is known to be gone); a runner of this host whose process is gone is taken over without it."""
    bound = BoundTask(task)
    checked = check_evaluators(evaluators)
    if repetitions < 1:
        raise ValueError("repetitions must be ≥ 1")
    if retries < 0:
        raise ValueError("retries must be ≥ 0")
    # Before these two were refused, concurrency=0 quietly ran the agent's default, and timeout=0 recorded a
    # whole experiment of `timeout` runs.
    if concurrency is not None and concurrency < 1:
        raise ValueError(f"concurrency must be ≥ 1 (got {concurrency}); leave it out for the agent's "
                         "max_concurrent_runs")
    if timeout is not None and timeout <= 0:
        raise ValueError(f"timeout must be more than 0 seconds (got {timeout:g}); leave it out for no timeout")
    if model is not None and not bound.takes_model:
        warnings.warn(f"model={model!r} is recorded on the experiment, but task {bound.name} has no `model` "
                      "parameter, so it cannot use it", stacklevel=2)
    judge_settings = JudgeSettings.model_validate(judge) if isinstance(judge, dict) else judge
    budget = Budget(max_cost_usd, max_tokens)
    dataset, agent = _qualify(dataset, workspace), _qualify(agent, workspace)
    if "@" not in agent:
        raise ValueError(f"agent {agent!r} must be written name@workspace (or pass workspace=...)")
    project = load_project()
    if judge_settings is not None:
        # The judge's key named by `credentials.judges` must resolve: an `env:` reference to an unset variable
        # is a ConfigError naming it, not a judge called without its key (every verdict an error).
        project.judge_key(judge_settings.base_url)
    report = ProgressReport(output, live=progress)
    async with ServiceClient(connection(url, token)) as client:
        service = Service(client)
        agent_info = await service.agent(agent)
        if agent_info.get("archived"):
            raise ValueError(f"agent {agent} is archived; it takes no new experiments")
        wait_seconds = float(trajectory_wait_seconds if trajectory_wait_seconds is not None
                             else agent_info.get("trajectory_wait_seconds", 30))
        slots = int(concurrency or agent_info.get("max_concurrent_runs") or 4)
        tracer = await _tracer(service, project, agent)
        local = _local_dataset(project, dataset)
        if local is not None and "@" not in dataset:
            # A local folder is pushed to the agent's workspace, where its experiments are, not the
            # caller's personal one.
            dataset = f"{dataset}@{agent.partition('@')[2]}"
        try:
            if dry_run:
                count = 1 if dry_run is True else int(dry_run)
                plan = await _dry_plan(service, dataset, agent, local, case_ids, split, count, model)
                dry = DryRunReport(service, report)
                await _run_all(plan, bound, service, tracer, report, budget, slots, wait_seconds, timeout, retries,
                               dry=dry)
                return ExperimentResult(experiment_id=None, url=None, runs=_sorted(plan.summaries),
                                        budget=budget.report())
            if checked:
                await refuse_clashes(service, agent.partition("@")[2], checked)
            plan = await _experiment_plan(service, project, dataset, agent, local, checked, resume, case_ids,
                                          split, repetitions, model, judge_settings, name, description, budget,
                                          take_over)
            return await _run_experiment(plan, bound, service, tracer, report, budget, slots, wait_seconds,
                                         timeout, retries, checked, project)
        finally:
            report.close()
            await asyncio.to_thread(tracer.close)


def _qualify(name: str, workspace: str | None) -> str:
    return f"{name}@{workspace}" if workspace and "@" not in name else name


def _local_dataset(project: Project, dataset: str) -> LocalDataset | None:
    folder = project.dataset_folder(dataset)
    return read_dataset(folder, dataset, project.fixtures_dir) if folder is not None else None


async def _tracer(service: Service, project: Project, agent: str) -> RunTracer:
    endpoint, key = await otlp_endpoint(service, project, agent)
    return RunTracer.to_service(endpoint, key)


def _select(cases: list[dict[str, Any]], case_ids: Sequence[str] | None, split: str | None) -> list[dict[str, Any]]:
    selected = cases
    if case_ids is not None:
        known = {c["id"] for c in cases}
        missing = [c for c in case_ids if c not in known]
        if missing:
            raise ValueError(f"case_ids not in the dataset: {', '.join(missing)}")
        wanted = set(case_ids)
        selected = [c for c in selected if c["id"] in wanted]
    if split is not None:
        selected = [c for c in selected if split in (c.get("tags") or [])]
    if not selected:
        raise ValueError(f"no case is selected (case_ids={case_ids}, split={split!r})")
    return selected


async def _dry_plan(service: Service, dataset: str, agent: str, local: LocalDataset | None,
                    case_ids: Sequence[str] | None, split: str | None, count: int, model: str | None) -> Plan:
    if local is not None:
        cases = [c.wire() for c in local.cases]
    else:
        cases = list((await service.dataset(dataset))["cases"])
    selected = _select(cases, case_ids, split)[:max(1, count)]
    return Plan(None, agent, {c["id"]: c for c in selected}, [(c["id"], 0, 1) for c in selected], model,
                dataset_workspace(dataset), local)


async def _experiment_plan(service: Service, project: Project, dataset: str, agent: str, local: LocalDataset | None,
                           evaluators: list[PythonEvaluator], resume: int | None, case_ids: Sequence[str] | None,
                           split: str | None, repetitions: int, model: str | None, judge: JudgeSettings | None,
                           name: str, description: str, budget: Budget, take_over: bool = False) -> Plan:
    holder, ttl = new_holder(), lease_ttl_seconds()
    if resume is not None:
        data = await resume_lease(service, int(resume), holder, ttl, take_over)
        experiment_id = int(data["experiment_id"])
        # A killed runner recorded its last runs as their calls returned, before their sessions settled: read
        # those sessions again now, so that they are scored on their settled trajectories.
        await service.refetch(experiment_id)
        pinned = await service.pinned_cases(experiment_id)
        info = await service.experiment(experiment_id)
        config = info.get("config") or {}
        declared = set(config.get("code_evaluators") or [])
        undeclared = sorted(e.name for e in evaluators if e.name not in declared)
        if undeclared:
            await service.release(experiment_id, holder)
            raise ValueError(f"experiment {experiment_id} did not declare the Python evaluator(s) "
                             f"{', '.join(undeclared)}; resume it with the evaluators it was created with "
                             f"({', '.join(sorted(declared)) or 'none'})")
        missing = sorted(declared - {e.name for e in evaluators})
        if missing:
            # Resumed without them, the new runs were left unscored by them: the experiment stayed `evaluating`,
            # and the runner ended with exit 0 and a scorecard note.
            await service.release(experiment_id, holder)
            refs = python_evaluator_refs(config)
            flags = " ".join(evaluator_flags(refs))
            raise ValueError(f"experiment {experiment_id} declares the Python evaluator(s) {', '.join(missing)}, "
                             f"not passed here; resume it with every evaluator it was created with "
                             f"({', '.join(refs)}): run_experiment(..., resume={experiment_id}) or "
                             f"`evalkit run … {flags} --resume {experiment_id}`")
        if config.get("agent") and config["agent"] != agent:
            await service.release(experiment_id, holder)
            raise ValueError(f"experiment {experiment_id} belongs to agent {config['agent']}, not {agent}")
        # The budget is the experiment's, not this runner's: every attempt already recorded counts (read once the
        # resume is accepted, after the refetch, so settled), else a runner killed near its max_cost_usd, or
        # stopped by it, and resumed with the same budget would spend it all again.
        for run in await service.runs(experiment_id, attempts="all"):
            budget.add(run.get("metrics"), run.get("model"))
        lease = data.get("lease") or {}
        plan = Plan(experiment_id, agent, {c["id"]: c for c in pinned["cases"]},
                    [(p["case_id"], int(p["repetition"]), int(p.get("attempt") or 1)) for p in data["pending"]],
                    config.get("model") if model is None else model, dataset_workspace(config.get("dataset", dataset)),
                    local, holder)
        plan.lease = LeaseKeeper(service, experiment_id, holder, ttl, lease.get("expires_at"))
        return plan
    dataset_version = None
    provenance: dict[str, Any] = {"versions": versions(), "retries_policy": None,
                                  "max_tokens": budget.max_tokens, "max_cost_usd": budget.max_cost_usd}
    if local is not None:
        pushed = await sync_dataset(service, local, dataset, python_evaluators=[e.name for e in evaluators])
        dataset_version = pushed.get("version")
        provenance["dataset_content_hash"] = local.content_hash
        provenance["dataset_git_revision"] = local.git_revision
    script = sys.modules.get("__main__")
    script_folder = Path(getattr(script, "__file__", None) or ".").resolve().parent
    provenance["git_sha"] = git_revision(script_folder)
    credentials = project.judge_keys()
    body: dict[str, Any] = {
        "agent": agent, "dataset": dataset, "dataset_version": dataset_version,
        "case_ids": list(case_ids) if case_ids is not None else None, "split": split, "repetitions": repetitions,
        "model": model, "judge": judge.model_dump(exclude_none=True) if judge else None,
        "evaluators": [e.name for e in evaluators],
        "evaluator_refs": {e.name: e.ref for e in evaluators if e.ref}, "budget_usd": budget.max_cost_usd, "name": name,
        "description": description, "metadata": provenance, "evalkit_version": versions()["evalkit"],
        "credentials": credentials, "lease": {"holder": holder, "ttl_seconds": ttl}}
    created = await service.create_experiment(body)
    experiment_id = int(created["experiment_id"])
    for dropped in created.get("dropped") or []:
        warnings.warn(f"case {dropped.get('case_id')} was dropped: {dropped.get('reason')}", stacklevel=3)
    pinned = await service.pinned_cases(experiment_id)
    pending = await service.pending_runs(experiment_id)
    lease = created.get("lease") or {}
    plan = Plan(experiment_id, agent, {c["id"]: c for c in pinned["cases"]},
                [(p["case_id"], int(p["repetition"]), int(p.get("attempt") or 1)) for p in pending], model,
                dataset_workspace(dataset), local, holder)
    plan.lease = LeaseKeeper(service, experiment_id, holder, ttl, lease.get("expires_at"))
    return plan


async def _run_experiment(plan: Plan, bound: BoundTask, service: Service, tracer: RunTracer,
                          report: ProgressReport, budget: Budget, slots: int, wait_seconds: float,
                          timeout: float | None, retries: int, evaluators: list[PythonEvaluator],
                          project: Project) -> ExperimentResult:
    assert plan.experiment_id is not None and plan.lease is not None
    experiment_id = plan.experiment_id
    url = service.experiment_url(experiment_id)
    plan.lease.start()
    finished = False
    all_ran = False  # every planned run is recorded and the experiment moved on to scoring
    failure: BaseException | None = None
    try:
        stopped = await _run_all(plan, bound, service, tracer, report, budget, slots, wait_seconds, timeout,
                                 retries)
        plan.lease.check()
        report.close()
        if stopped:
            # Said once every run in flight has settled: the spend quoted is the final one, not the one seen
            # when the last run was refused.
            stopped = await _mark_stopped(service, experiment_id, plan, budget)
            report.say(f"stopped: {stopped}. Resume with run_experiment(..., resume={experiment_id}) or "
                       f"`evalkit run … --resume {experiment_id}` (with a larger budget)")
        else:
            await _mark_ran(service, experiment_id, plan.holder)
            all_ran = True
        # Failed and timed-out runs are results; only runs left unrun by an early stop (the budget) make
        # the scoring partial, and the user asked for that stop.
        await score_experiment(service, experiment_id, evaluators, plan.holder, project.judge_keys(),
                               partial=stopped is not None)
        card = await service.scorecard(experiment_id)
        try:
            report.say(await service.scorecard_text(experiment_id))
        except (ServiceError, ServiceUnreachable):
            pass
        report.say(f"spend: {budget.describe()}")
        report.say(f"experiment {experiment_id}: {url}")
        runs = [_summary(r) for r in await service.runs(experiment_id)]
        finished = True
        return ExperimentResult(experiment_id=str(experiment_id), url=url, runs=_sorted(runs), scorecard=card,
                                budget=budget.report(), stopped_reason=stopped)
    except BaseException as exc:
        failure = exc
        raise
    finally:
        # Said before the lease is given back: after Ctrl-C this is what the person waits for.
        if not finished and all_ran:
            # Nothing is left to run, so resuming is refused ("no runs left"): what is left is scoring.
            report.say(str(ScoringError(experiment_id, evaluators, "interrupted before it finished")))
        elif not finished and not plan.lease.lost.is_set():
            report.say(f"experiment {experiment_id} did not finish; resume it with "
                       f"run_experiment(..., resume={experiment_id}) or `evalkit run … --resume {experiment_id}`")
        kept = await plan.lease.stop(release=True, hurry=not finished, why=stop_reason(failure))
        if kept is not None and not finished:
            report.say(kept)


async def _mark_stopped(service: Service, experiment_id: int, plan: Plan, budget: Budget) -> str:
    """The budget stopped the runner before every planned run ran: the experiment is `stopped`, saying why and
    planned vs ran, so that it never looks finished. Returns that reason."""
    info = await service.experiment(experiment_id)
    progress = info.get("progress") or {}
    planned, ran = int(progress.get("planned") or 0), int(progress.get("recorded") or 0)
    reason = f"{budget.exhausted() or 'budget reached'}; {ran} of {planned} planned runs ran"
    if info.get("status") in ("running", "pending"):
        await service.set_status(experiment_id, "stopped", plan.holder, reason)
    return reason


async def _mark_ran(service: Service, experiment_id: int, holder: str | None) -> None:
    """Every planned run has its final attempt here: the experiment moves on to evaluating.

    While this runner holds the lease the service keeps the experiment running (a retry may still
    come for any slot); only the runner knows it is done, so it says so.
    """
    info = await service.experiment(experiment_id)
    if info.get("status") in ("running", "pending"):
        failed = sum(1 for case in info.get("cases") or [] for run in case.get("runs") or []
                     if run.get("status") != "completed")
        await service.set_status(experiment_id, "evaluating", holder,
                                 f"the runner ran every planned run ({failed} not completed)")


def _summary(run: dict[str, Any]) -> RunSummary:
    metrics = run.get("metrics") or {}
    tokens = (metrics.get("input_tokens") or 0) + (metrics.get("output_tokens") or 0)
    return RunSummary(case_id=run["case_id"], repetition=int(run["repetition"]), status=run["status"],
                      trajectory_status=run.get("trajectory_status"), session_id=run.get("session_id"),
                      answer=run.get("answer"), output=run.get("output"), error=run.get("error"),
                      attempts=int(run.get("attempt") or 1), cost_usd=metrics.get("cost_usd"), tokens=tokens or None)


def _sorted(runs: list[RunSummary]) -> list[RunSummary]:
    return sorted(runs, key=lambda r: (r.case_id, r.repetition))


async def _run_all(plan: Plan, bound: BoundTask, service: Service, tracer: RunTracer, report: ProgressReport,
                   budget: Budget, slots: int, wait_seconds: float, timeout: float | None, retries: int,
                   dry: DryRunReport | None = None) -> str | None:
    """Run every planned (case, repetition); returns why scheduling stopped early, or None."""
    fixtures = FixtureCache(service, plan.dataset_workspace, plan.local)
    gate = asyncio.Semaphore(max(1, slots))
    title = (f"dry run of {len(plan.work)} case(s) for {plan.agent}" if dry else
             f"experiment {plan.experiment_id}: {len(plan.work)} run(s) of {plan.agent}, {slots} at once")
    report.start(len(plan.work), title)
    stopped: str | None = None
    running: set[asyncio.Task[None]] = set()
    lost = plan.lease.lost if plan.lease is not None else asyncio.Event()

    errors: list[BaseException] = []

    async def one(case_id: str, repetition: int, first_attempt: int) -> None:
        # The slot is freed once the task returns: `concurrency` bounds task calls, not trajectory waits.
        slot = _Slot(gate)
        try:
            await _run_one(plan, bound, service, tracer, report, budget, case_id, repetition, first_attempt,
                           wait_seconds, timeout, retries, fixtures, slot, dry)
        except Exception as exc:
            # The service refused or vanished: stop scheduling; the first error is raised below.
            errors.append(exc)
        finally:
            slot.release()

    for case_id, repetition, attempt in plan.work:
        await gate.acquire()
        if lost.is_set() or errors:
            gate.release()
            break
        stopped = budget.exhausted()
        if stopped:
            gate.release()
            break
        job = asyncio.get_running_loop().create_task(one(case_id, repetition, attempt))
        running.add(job)
        job.add_done_callback(running.discard)
    waiter: asyncio.Future[Any] = asyncio.ensure_future(lost.wait())
    try:
        while running:
            watched: list[asyncio.Future[Any]] = [*running, waiter]
            await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            if waiter.done() or errors:
                for job in list(running):
                    job.cancel()
                await asyncio.gather(*running, return_exceptions=True)
                break
    finally:
        waiter.cancel()
    if plan.lease is not None:
        plan.lease.check()
    if errors:
        raise errors[0]
    return stopped


class _Slot:
    """One run's hold on the concurrency gate: taken for each task call, given back once."""

    def __init__(self, gate: asyncio.Semaphore) -> None:
        self.gate = gate
        self.held = True  # the scheduler acquired it before starting the run

    async def acquire(self) -> None:
        if not self.held:
            await self.gate.acquire()
            self.held = True

    def release(self) -> None:
        if self.held:
            self.held = False
            self.gate.release()


async def _run_one(plan: Plan, bound: BoundTask, service: Service, tracer: RunTracer, report: ProgressReport,
                   budget: Budget, case_id: str, repetition: int, first_attempt: int, wait_seconds: float,
                   timeout: float | None, retries: int, fixtures: FixtureCache, slot: _Slot,
                   dry: DryRunReport | None) -> None:
    case = plan.cases[case_id]
    files = await fixtures.for_case(case)
    report.run_started()
    attempt = first_attempt
    while True:
        await slot.acquire()
        session_id = uuid.uuid4().hex
        metadata = {"session_id": session_id, "experiment_id": plan.experiment_id, "case_id": case_id,
                    "repetition": repetition, "tags": list(case.get("tags") or []), "attempt": attempt}
        call = TaskCall(input=case.get("input"), files=files, model=plan.model, metadata=metadata)
        started = time.time()
        with tracer.root_span(session_id=session_id, case_id=case_id, repetition=repetition,
                              experiment_id=str(plan.experiment_id) if plan.experiment_id else None,
                              input=case.get("input"), attempt=attempt) as span:
            outcome = await bound.invoke(call, timeout)
            tracer.record_outcome(span, status=outcome.status, answer=outcome.answer, output=outcome.output,
                                  error=outcome.error, returned_session_id=outcome.session_id)
        ended = time.time()
        read_session = outcome.session_id or session_id
        if dry is not None:
            slot.release()
            trajectory_status = await _settle(service, tracer, plan.agent, read_session, outcome, wait_seconds)
            await dry.show(plan.agent, case_id, read_session, outcome, trajectory_status)
            plan.summaries.append(RunSummary(case_id=case_id, repetition=repetition, status=outcome.status,  # type: ignore[arg-type]
                                             trajectory_status=trajectory_status, session_id=read_session,  # type: ignore[arg-type]
                                             answer=outcome.answer, output=outcome.output, error=outcome.error))
            report.run_finished(case_id, repetition, outcome.status, trajectory_status, None)
            return
        assert plan.experiment_id is not None and plan.lease is not None
        plan.lease.check()
        # Recorded the moment the call returns, before its spans are flushed or its session settles (seconds
        # later): a runner killed now keeps this run, so a kill (or Ctrl-C) loses at most the calls in flight.
        # Every attempt is recorded as it ends (the service is the journal; the highest attempt is the final
        # one): a runner killed between retries keeps what it did, and resume goes on from the next attempt.
        record = {
            "lease_holder": plan.holder, "case_id": case_id, "repetition": repetition, "attempt": attempt,
            "session_id": read_session, "status": outcome.status, "answer": outcome.answer,
            "output": outcome.output, "error": outcome.error, "model": outcome.model or plan.model,
            "started_at": started, "ended_at": ended, "trajectory": outcome.trajectory,
            "trajectory_status": None, "metrics": None}
        # The session is read once, when it has settled (below), not now as well.
        stored = await _record_attempt(plan, service, {**record, "trajectory_pending": outcome.trajectory is None})
        # What the task did decides a retry; a run the service failed (a reused session id) would fail again.
        # It is decided now, without waiting for the failed attempt's session: the delay said is the delay.
        retryable = outcome.status in ("failed", "timeout") and not (outcome.error or "").startswith(PROTOCOL)
        if retryable and attempt < first_attempt + retries and not budget.exhausted():
            slot.release()
            delay = RETRY_BASE_SECONDS * 2 ** (attempt - first_attempt) * (0.8 + 0.4 * random.random())
            report.run_retrying(case_id, repetition, attempt, outcome.error, delay)
            await asyncio.sleep(delay)
            attempt += 1
            continue
        if not budget.limited:
            # With a budget the slot is held until the run's spend is known (its session settled), so that
            # at most `concurrency` runs are ever unaccounted for when the next one is allowed to start.
            slot.release()
        # The trajectory follows: once the session settles the same record is sent again, and the service
        # reads the settled session into the run (status, steps, tokens, cost).
        trajectory_status = await _settle(service, tracer, plan.agent, read_session, outcome, wait_seconds)
        if outcome.trajectory is None:
            plan.lease.check()
            stored = await _record_attempt(plan, service, {
                **record, "trajectory_status": "partial" if trajectory_status == "partial" else None})
        budget.add(stored.get("metrics"), stored.get("model"))
        slot.release()
        status = str(stored.get("status") or outcome.status)
        error = stored.get("error") or outcome.error
        note = f"attempt {attempt}" if attempt > 1 else None
        if error and status != "completed":
            note = f"{note + ': ' if note else ''}{error[:200]}"
        metrics = stored.get("metrics") or {}
        used_tokens = metrics.get("input_tokens") or metrics.get("output_tokens")
        priced = metrics.get("cost_usd") is not None or not used_tokens
        report.run_finished(case_id, repetition, status, stored.get("trajectory_status"), metrics.get("cost_usd"),
                            priced, note)
        return


async def _record_attempt(plan: Plan, service: Service, body: dict[str, Any]) -> dict[str, Any]:
    """Record one attempt of a slot (again: its settled trajectory); returns the stored run. A refused lease
    stops the runner."""
    assert plan.experiment_id is not None and plan.lease is not None
    try:
        answer = await service.record_run(plan.experiment_id, body)
    except ServiceError as exc:
        if exc.status == 409 and "lease" in exc.message:
            plan.lease.reason = exc.message
            plan.lease.lost.set()
            raise LeaseLost(plan.experiment_id, exc.message) from exc
        raise
    return answer  # type: ignore[no-any-return]


async def _settle(service: Service, tracer: RunTracer, agent: str, session_id: str, outcome: Outcome,
                  wait_seconds: float) -> str | None:
    """Flush the spans and wait for the session to settle; the status it reached (None: pushed trajectory)."""
    await asyncio.to_thread(tracer.flush)
    if outcome.trajectory is not None:
        return None
    try:
        status, _ = await service.trajectory(agent, session_id, wait_seconds)
    except ServiceError as exc:
        if exc.status in (404, 501):
            return "unavailable"
        raise
    return status
