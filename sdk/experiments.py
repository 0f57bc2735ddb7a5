"""evaluate_experiment: score an experiment again, without running the agent."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import IO, Any

from evalkit.scoring_hint import finish_scoring_hint, python_evaluator_refs
from evalkit.sdk.client import ServiceClient, ServiceError, ServiceUnreachable
from evalkit.sdk.config import connection, load_project
from evalkit.sdk.evaluators import PythonEvaluator
from evalkit.sdk.interrupt import run_blocking
from evalkit.sdk.lease import holder_gone
from evalkit.sdk.models import ExperimentResult, RunSummary
from evalkit.sdk.progress import ProgressReport
from evalkit.sdk.scoring import ScoringError, check_evaluators, score_experiment
from evalkit.sdk.service import Service


def evaluate_experiment(*, experiment_id: int | str, evaluators: Sequence[PythonEvaluator] = (),
                        refetch_trajectories: bool = False, **options: Any) -> ExperimentResult:
    return run_blocking("evaluate_experiment", lambda: aevaluate_experiment(
        experiment_id=experiment_id, evaluators=evaluators, refetch_trajectories=refetch_trajectories, **options))


async def aevaluate_experiment(*, experiment_id: int | str, evaluators: Sequence[PythonEvaluator] = (),
                               refetch_trajectories: bool = False, rescore: bool = False, partial: bool = False,
                               url: str | None = None, token: str | None = None,
                               output: IO[str] | None = None) -> ExperimentResult:
    """Score experiment `experiment_id` again: its declared Python evaluators here, the service's there.

    `refetch_trajectories` first re-reads runs whose trajectory was partial or unavailable. Failed and
    timed-out runs are results; an experiment with runs not yet run (no attempt recorded) is refused
    unless `partial=True`, with what to do.
    """
    checked = check_evaluators(evaluators)
    experiment = int(experiment_id)
    report = ProgressReport(output, live=False)
    async with ServiceClient(connection(url, token)) as client:
        service = Service(client)
        info = await service.experiment(experiment)
        config = info.get("config") or {}
        declared = set(config.get("code_evaluators") or [])
        # name → where it is loaded from (None when not recorded): what a "finish with …" hint names.
        refs = python_evaluator_refs(config)
        undeclared = sorted(e.name for e in checked if e.name not in declared)
        if undeclared:
            raise ValueError(f"experiment {experiment} did not declare the Python evaluator(s) "
                             f"{', '.join(undeclared)} (it declared: {', '.join(sorted(declared)) or 'none'}); "
                             "an experiment is scored by what it was created with")
        await _check_lease(service, experiment, info, bool(checked),
                           finish_scoring_hint(experiment, refs, rescore=rescore, partial=partial))
        missing = sorted(declared - {e.name for e in checked})
        if missing:
            report.say(f"note: experiment {experiment} declares Python evaluator(s) {', '.join(missing)} that "
                       "were not passed; their scores stay missing until they are: "
                       f"{finish_scoring_hint(experiment, refs, rescore=rescore, partial=partial)}")
        try:
            if refetch_trajectories:
                try:
                    refetched = await service.refetch(experiment)
                except (ServiceError, ServiceUnreachable) as exc:
                    raise ScoringError(experiment, checked, str(exc), rescore=rescore, declared=refs) from exc
                report.say(f"refetched {refetched.get('refetched', 0)} trajectories: "
                           f"{refetched.get('changed') or {}}")
            progress = info.get("progress") or {}
            left = int(progress.get("planned") or 0) - int(progress.get("recorded") or 0)
            if left > 0 and not partial:
                raise ValueError(f"experiment {experiment} has {left} run(s) not yet run; finish them with "
                                 f"run_experiment(..., resume={experiment}) (or `evalkit run … --resume "
                                 f"{experiment}`), or score what is there with "
                                 f"{finish_scoring_hint(experiment, refs, partial=True)}")
            result = await score_experiment(service, experiment, checked, None, load_project().judge_keys(),
                                            partial=partial, rescore=rescore, declared=refs)
        except asyncio.CancelledError:
            # Ctrl-C (asyncio.run cancels this coroutine): say how to finish, as run_experiment says how to resume
            # (then evaluate_experiment ends the script with status 130, see interrupt.run_blocking).
            report.say(str(ScoringError(experiment, checked, "interrupted before it finished", rescore=rescore,
                                        declared=refs)))
            raise
        card = await service.scorecard(experiment)
        try:
            report.say(await service.scorecard_text(experiment))
        except (ServiceError, ServiceUnreachable):
            pass
        url_of = service.experiment_url(experiment)
        report.say(f"experiment {experiment}: {url_of} ({result.get('status')})")
        runs = []
        for run in await service.runs(experiment):
            runs.append(RunSummary(case_id=run["case_id"], repetition=int(run["repetition"]), status=run["status"],
                                   trajectory_status=run.get("trajectory_status"), session_id=run.get("session_id"),
                                   answer=run.get("answer"), output=run.get("output"), error=run.get("error"),
                                   attempts=int(run.get("attempt") or 1)))
        return ExperimentResult(experiment_id=str(experiment), url=url_of,
                                runs=sorted(runs, key=lambda r: (r.case_id, r.repetition)), scorecard=card)


async def _check_lease(service: Service, experiment: int, info: dict[str, Any], publishes: bool,
                       finish: str) -> None:
    """Python verdicts are published only when no runner holds the experiment's lease: the service refuses them
    from anyone else (the service's own evaluators run whoever holds it).

    A runner of this machine killed while it scored (`kill -9`) left its lease live, and it can never renew it:
    it is given back on its behalf, as resuming takes such a lease over at once. Before, every Python evaluator
    ran, each verdict was refused until the lease ran out, and the error said to run this same command again.
    A live runner is said up front, before any Python evaluator runs."""
    lease = info.get("lease") or {}
    holder = str(lease.get("holder") or "")
    if not holder or lease.get("expired") or (info.get("config") or {}).get("agent_kind") == "harness":
        return  # a harness experiment's lease is the service's own; it takes verdicts published beside it
    if holder_gone(holder):
        await service.release(experiment, holder, reason="its runner is gone")
        return
    if not publishes:
        return
    expires = lease.get("expires_at")
    when = ""
    if expires is not None:
        left = max(0, round(float(expires) - time.time()))
        when = f" until {time.strftime('%H:%M:%S %Z', time.localtime(float(expires)))} (in {left} s)"
    raise ValueError(f"experiment {experiment} is being run by {holder}{when}, which scores it when its runs are "
                     "done; wait for it to finish, or if that runner is gone (killed, its machine down), once its "
                     f"lease has run out finish scoring with {finish}")
