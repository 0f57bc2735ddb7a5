"""From an evaluator spec (a type and its config) to a ready evaluator.

A spec is what experiments store and cases name:

    {"type": "regex", "name": "cites-source", "config": {"pattern": "\\[\\d+\\]"}}

The config may also be given flat, beside `type` and `name`:

    {"type": "max_steps", "max_steps": 20}

Secrets never sit in a spec: the judge's API key and an HTTP evaluator's bearer
token come from `credentials`, keyed by the judge's `base_url` or the HTTP
evaluator's `url`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .base import Evaluator, EvaluatorConfigError
from .builtin import BUILTIN_EVALUATORS
from .http import HttpEvaluator, HttpEvaluatorConfig
from .judge import JudgeConfig, JudgePricing, LLMJudge

__all__ = ["EVALUATOR_TYPES", "EvaluatorSpec", "build_evaluator", "parse_spec"]

_ALL: tuple[type[Evaluator[Any]], ...] = (*BUILTIN_EVALUATORS, HttpEvaluator, LLMJudge)
EVALUATOR_TYPES: dict[str, type[Evaluator[Any]]] = {cls.type: cls for cls in _ALL}


class EvaluatorSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    type: str
    name: str | None = Field(default=None, description="default: the type")
    config: dict[str, Any] = Field(default_factory=dict)


def parse_spec(spec: EvaluatorSpec | Mapping[str, Any]) -> EvaluatorSpec:
    if isinstance(spec, EvaluatorSpec):
        return spec
    if not isinstance(spec, Mapping) or "type" not in spec:
        raise EvaluatorConfigError(
            f"an evaluator spec is a mapping with a 'type' (one of {', '.join(sorted(EVALUATOR_TYPES))}), "
            f"got {spec!r}"
        )
    data = dict(spec)
    if "config" not in data:
        flat = {k: v for k, v in data.items() if k not in {"type", "name"}}
        data = {"type": data["type"], "name": data.get("name"), "config": flat}
    try:
        return EvaluatorSpec.model_validate(data)
    except ValidationError as exc:
        raise EvaluatorConfigError(f"invalid evaluator spec {spec!r}: {exc}") from exc


def _config_error(spec: EvaluatorSpec, exc: ValidationError) -> EvaluatorConfigError:
    problems = "; ".join(
        f"{'.'.join(map(str, e['loc'])) or 'config'}: {e['msg']}" for e in exc.errors(include_url=False)
    )
    return EvaluatorConfigError(
        f"evaluator {spec.name or spec.type!r} of type {spec.type!r}: invalid config: {problems} "
        "(the config keys of each type are in docs/evaluators.md)"
    )


def build_evaluator(
    spec: EvaluatorSpec | Mapping[str, Any],
    *,
    credentials: Mapping[str, str] | None = None,
    session: aiohttp.ClientSession | None = None,
    judge_pricing: JudgePricing | None = None,
) -> Evaluator[Any]:
    """Build the evaluator a spec describes; raises EvaluatorConfigError when it cannot work.

    `credentials`: API keys by URL (judge `base_url`, HTTP evaluator `url`; a
    trailing slash does not matter). `session`: an aiohttp session the network
    evaluators reuse. `judge_pricing`: prices a judge whose spec gives no `price`.
    """
    parsed = parse_spec(spec)
    cls = EVALUATOR_TYPES.get(parsed.type)
    if cls is None:
        raise EvaluatorConfigError(
            f"unknown evaluator type {parsed.type!r}; known types: {', '.join(sorted(EVALUATOR_TYPES))}"
        )
    try:
        config = cls.config_model.model_validate(parsed.config)
    except ValidationError as exc:
        raise _config_error(parsed, exc) from exc
    keys = {k.rstrip("/"): v for k, v in (credentials or {}).items()}
    if isinstance(config, JudgeConfig):
        return LLMJudge(config, name=parsed.name, api_key=keys.get(config.base_url), session=session,
                        pricing=judge_pricing)
    if isinstance(config, HttpEvaluatorConfig):
        key = keys.get(config.url.rstrip("/"))
        secret = {"Authorization": f"Bearer {key}"} if key else None
        return HttpEvaluator(config, name=parsed.name, secret_headers=secret, session=session)
    return cls(config, name=parsed.name)
