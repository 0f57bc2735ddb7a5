"""Server-side scoring: run the service's evaluators (built-ins, HTTP, workspace evaluators, the judge)
over an experiment's final runs and turn the verdicts into stored evaluations.

Only `completed` runs are judged: a failed or timed-out run counts as a failure
in the scorecard whatever an evaluator would say, and a cancelled one not at all.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from evalkit.trajectory.prices import PriceBook, TokenCounts

from .datasets import Case
from .evaluations import StoredEvaluation
from .evaluators import EvaluationInput, Evaluator, EvaluatorConfigError, build_evaluator
from .evaluators.judge import JudgePricing
from .runs import Run

JUDGE = "judge"


@dataclass(frozen=True)
class ServerJudge:
    """The service's default judge (EVALKIT_JUDGE_BASE_URL / _MODEL / _API_KEY)."""

    base_url: str
    model: str
    api_key: str | None

    def config(self) -> dict[str, Any]:
        return {"base_url": self.base_url, "model": self.model}


def server_judge(extra: Mapping[str, str], environ: Mapping[str, str] = os.environ) -> ServerJudge | None:
    """Read once at start, from the settings' `extra` first, then the environment."""
    def get(name: str) -> str | None:
        return extra.get(name.lower().removeprefix("evalkit_")) or extra.get(name) or environ.get(name)

    base_url, model = get("EVALKIT_JUDGE_BASE_URL"), get("EVALKIT_JUDGE_MODEL")
    if not base_url or not model:
        return None
    return ServerJudge(base_url.rstrip("/"), model, get("EVALKIT_JUDGE_API_KEY"))


def judge_spec(judge: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "judge", "name": JUDGE, "config": dict(judge)}


def evaluator_version(evaluator: Evaluator[Any]) -> str:
    return f"{evaluator.type}/{evaluator.version}/{evaluator.fingerprint}"


# Hosts of providers' own APIs: a judge there is priced as that provider's model. Elsewhere (a gateway, a
# self-hosted server) the model's name alone says, as for an agent's call whose span names no provider.
_PROVIDER_HOSTS = {
    "api.openai.com": "openai", "api.anthropic.com": "anthropic", "generativelanguage.googleapis.com": "google",
    "api.mistral.ai": "mistral", "api.groq.com": "groq", "api.deepseek.com": "deepseek", "api.x.ai": "x-ai",
    "api.together.xyz": "together", "api.fireworks.ai": "fireworks", "openrouter.ai": "openrouter",
}


def judge_pricing(prices: PriceBook) -> JudgePricing:
    """A judge's spend priced by the book that prices the agents' calls (prices.yaml, then genai-prices)."""
    def price(model: str, base_url: str, usage: Any) -> tuple[float, str] | None:
        provider = _PROVIDER_HOSTS.get((urlsplit(base_url).hostname or "").lower())
        priced = prices.cost(TokenCounts(usage.input_tokens, usage.output_tokens), model, provider)
        return None if priced is None else (float(priced.usd), priced.source)
    return price


def build_all(specs: Mapping[str, Mapping[str, Any]], credentials: Mapping[str, str],
              session: aiohttp.ClientSession, prices: PriceBook | None = None,
              ) -> tuple[dict[str, Evaluator[Any]], dict[str, str]]:
    """Evaluators by name, and the names that could not be built with why. `prices` prices a judge whose spec
    gives no price."""
    built: dict[str, Evaluator[Any]] = {}
    broken: dict[str, str] = {}
    pricing = judge_pricing(prices) if prices is not None else None
    for name, spec in specs.items():
        try:
            built[name] = build_evaluator({**spec, "name": name}, credentials=credentials, session=session,
                                          judge_pricing=pricing)
        except EvaluatorConfigError as exc:
            broken[name] = str(exc)
    return built, broken


def evaluation_input(run: Run, case: Case, experiment_id: int) -> EvaluationInput:
    return EvaluationInput(input=case.input, answer=run.answer, output=run.output, expected=case.expected,
                           rubric=case.rubric, trajectory=run.trajectory,
                           metadata={"experiment_id": experiment_id, "case_id": run.case_id,
                                     "repetition": run.repetition, "tags": case.tags, **case.metadata})


async def score(experiment_id: int, runs: list[Run], cases: Mapping[str, Case],
                case_evaluators: Mapping[str, list[str]],
                evaluators: Mapping[str, Evaluator[Any]], broken: Mapping[str, str], *,
                skip: set[tuple[str, str]], concurrency: int = 8) -> list[StoredEvaluation]:
    """Judge every (completed run, applicable evaluator) pair not in `skip`."""
    gate = asyncio.Semaphore(concurrency)
    jobs: list[tuple[Run, str]] = []
    for run in runs:
        if run.status != "completed" or run.case_id not in cases:
            continue
        for name in case_evaluators.get(run.case_id, []):
            if (name in evaluators or name in broken) and (run.run_id, name) not in skip:
                jobs.append((run, name))

    async def one(run: Run, name: str) -> StoredEvaluation:
        if name in broken:
            return StoredEvaluation(run.run_id, name, label="error", error=broken[name], explanation=broken[name])
        evaluator = evaluators[name]
        async with gate:
            try:
                verdict = await evaluator.evaluate(evaluation_input(run, cases[run.case_id], experiment_id))
            except Exception as exc:  # an evaluator bug must not stop the experiment's scoring
                return StoredEvaluation(run.run_id, name, label="error", error=f"{type(exc).__name__}: {exc}",
                                        evaluator_version=evaluator_version(evaluator))
        metadata = dict(verdict.metadata)
        if verdict.usage is not None:
            metadata["usage"] = verdict.usage.model_dump()
        return StoredEvaluation(run.run_id, name, verdict.score, verdict.passed, verdict.label, verdict.explanation,
                                metadata, verdict.error, evaluator_version(evaluator), verdict.cost_usd)

    return list(await asyncio.gather(*(one(r, n) for r, n in jobs)))
