"""Scoring an experiment: Python evaluators here, the service's own evaluators there, then the scorecard."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from evalkit.scoring_hint import finish_scoring_hint
from evalkit.sdk.client import ServiceError, ServiceUnreachable
from evalkit.sdk.evaluators import PythonEvaluator
from evalkit.sdk.service import Service


class ScoringError(RuntimeError):
    """Scoring stopped midway; the message says how to finish it."""

    def __init__(self, experiment_id: int, evaluators: Sequence[PythonEvaluator], cause: str, *,
                 rescore: bool = False, declared: Mapping[str, str | None] | None = None) -> None:
        # Every Python evaluator the experiment declared (`declared`, from its config) must be passed to finish,
        # not only those this call had; the ones at hand say best where they are loaded from.
        python = {**(declared or {}), **{e.name: e.ref or (declared or {}).get(e.name) for e in evaluators}}
        how = finish_scoring_hint(experiment_id, python, rescore=rescore)
        super().__init__(f"scoring experiment {experiment_id} stopped: {cause}. The runs are recorded; finish "
                         f"scoring with {how}")
        self.experiment_id = experiment_id


def check_evaluators(evaluators: Sequence[Any]) -> list[PythonEvaluator]:
    checked: list[PythonEvaluator] = []
    for item in evaluators:
        if not isinstance(item, PythonEvaluator):
            raise TypeError(f"evaluators takes functions decorated with @evalkit.evaluator; got {item!r}. "
                            "The service's evaluators (built-ins, HTTP, the judge) are named by the cases")
        checked.append(item)
    names = [e.name for e in checked]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two evaluators are named {', '.join(duplicates)}; give one another name: "
                         "@evaluator(name=...)")
    return checked


async def refuse_clashes(service: Service, workspace: str, evaluators: Sequence[PythonEvaluator]) -> None:
    remote = set(await service.workspace_evaluators(workspace))
    clashes = sorted(e.name for e in evaluators if e.name in remote)
    if clashes:
        raise ValueError(f"Python evaluator {', '.join(clashes)} has the name of an evaluator of workspace "
                         f"{workspace}; rename it with @evaluator(name=...)")


def _values(run: dict[str, Any], experiment_id: int) -> dict[str, Any]:
    metadata = {"case_id": run.get("case_id"), "repetition": run.get("repetition"),
                "experiment_id": experiment_id, "session_id": run.get("session_id"),
                "status": run.get("status"), "tags": (run.get("metadata") or {}).get("tags"),
                **(run.get("metadata") or {})}
    return {"input": run.get("input"), "answer": run.get("answer"), "output": run.get("output"),
            "expected": run.get("expected"), "rubric": run.get("rubric"), "trajectory": run.get("trajectory"),
            "metadata": metadata, "run": run}


async def run_python_evaluators(service: Service, experiment_id: int, evaluators: Sequence[PythonEvaluator],
                                holder: str | None, *, rescore: bool = False, concurrency: int = 8) -> int:
    """Score every run a Python evaluator applies to and has not scored; returns how many were published."""
    if not evaluators:
        return 0
    by_name = {e.name: e for e in evaluators}
    runs = await service.to_score(experiment_id, list(by_name), rescore=rescore)
    gate = asyncio.Semaphore(concurrency)

    async def one(run: dict[str, Any], ev: PythonEvaluator) -> dict[str, Any]:
        async with gate:
            evaluation = await ev.judge(_values(run, experiment_id))
        return {"run_id": run["run_id"], "evaluator": ev.name, "evaluator_version": ev.version, "cost_usd": 0.0,
                **evaluation.model_dump()}

    jobs = [one(run, by_name[name]) for run in runs for name in run.get("evaluators", list(by_name))
            if name in by_name]
    published = 0
    batch: list[dict[str, Any]] = []
    for result in asyncio.as_completed(jobs):
        batch.append(await result)
        if len(batch) >= 200:
            published += (await service.publish(experiment_id, batch, holder)).get("recorded", len(batch))
            batch = []
    if batch:
        published += (await service.publish(experiment_id, batch, holder)).get("recorded", len(batch))
    return published


async def score_experiment(service: Service, experiment_id: int, evaluators: Sequence[PythonEvaluator],
                           holder: str | None, credentials: dict[str, str], *, partial: bool = False,
                           rescore: bool = False, declared: Mapping[str, str | None] | None = None
                           ) -> dict[str, Any]:
    """Python evaluators, then the service's; errors become a ScoringError that says how to finish."""
    try:
        published = await run_python_evaluators(service, experiment_id, evaluators, holder, rescore=rescore)
        body: dict[str, Any] = {"evaluators": None, "rescore": rescore, "refetch_trajectories": False,
                                "credentials": credentials}
        if partial:
            body["partial"] = True
        result = await service.evaluate(experiment_id, body)
    except (ServiceError, ServiceUnreachable) as exc:
        raise ScoringError(experiment_id, evaluators, str(exc), rescore=rescore, declared=declared) from exc
    result["python_evaluations"] = published
    return result
