"""The HTTP evaluator: a run is POSTed to a URL that answers with a verdict.

The contract (version 1) is documented in docs/evaluators.md:

request  {"contract": 1, "evaluator": str, "input": any, "answer": str|null,
          "output": any, "expected": any, "rubric": str|null,
          "trajectory": object|null, "metadata": object}
response {"score": number|null, "passed": bool|null, "label": str|null,
          "explanation": str|null, "metadata": object|null}
          — at least one of score and passed; or {"error": str} when the
          evaluator cannot judge this run.

Transport failures, refusals and replies outside the contract become an
Evaluation with `error` set that says which, never an exception.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from .base import Evaluation, EvaluationInput, Evaluator, EvaluatorConfig
from .http_retry import HttpCallError, RetryPolicy, post_json

__all__ = ["CONTRACT_VERSION", "HttpEvaluator", "HttpEvaluatorConfig", "HttpVerdict"]

CONTRACT_VERSION = 1


class HttpEvaluatorConfig(EvaluatorConfig):
    url: str = Field(description="http(s) URL the runs are POSTed to")
    headers: dict[str, str] = Field(
        default_factory=dict, description="extra headers; secrets belong in credentials, not here"
    )
    timeout_seconds: float = Field(default=30.0, gt=0)
    max_attempts: int = Field(default=3, ge=1, le=10)
    backoff_seconds: float = Field(default=0.5, ge=0)
    include_trajectory: bool = True

    @field_validator("url")
    @classmethod
    def _http_url(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"url must start with http:// or https://, got {v!r}")
        return v


class HttpVerdict(BaseModel):
    """A reply of the contract. Unknown keys are ignored so evaluators may add more."""

    model_config = ConfigDict(extra="ignore")

    score: float | None = None
    passed: bool | None = None
    label: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] | None = None
    error: str | None = None

    @field_validator("score")
    @classmethod
    def _finite(cls, v: float | None) -> float | None:
        if v is not None and not math.isfinite(v):
            raise ValueError("score must be a finite number")
        return v

    @model_validator(mode="after")
    def _has_verdict(self) -> HttpVerdict:
        if self.error is None and self.score is None and self.passed is None:
            raise ValueError('the reply has neither "score" nor "passed" (nor "error")')
        return self


class HttpEvaluator(Evaluator[HttpEvaluatorConfig]):
    type = "http"
    version = f"contract-{CONTRACT_VERSION}"
    config_model = HttpEvaluatorConfig

    def __init__(
        self,
        config: HttpEvaluatorConfig,
        *,
        name: str | None = None,
        secret_headers: Mapping[str, str] | None = None,
        session: aiohttp.ClientSession | None = None,
    ) -> None:
        """`secret_headers` (e.g. Authorization) come from credentials and are kept out
        of the config, which is stored with the experiment. `session`: reuse one
        aiohttp session across calls; default, a session per call."""
        super().__init__(config, name=name)
        self._headers = {**config.headers, **(secret_headers or {})}
        self._session = session
        self._policy = RetryPolicy(
            timeout_seconds=config.timeout_seconds,
            max_attempts=config.max_attempts,
            backoff_seconds=config.backoff_seconds,
        )

    def request_body(self, item: EvaluationInput) -> dict[str, Any]:
        return {
            "contract": CONTRACT_VERSION,
            "evaluator": self.name,
            "input": item.input,
            "answer": item.answer,
            "output": item.output,
            "expected": item.expected,
            "rubric": item.rubric,
            "trajectory": item.trajectory if self.config.include_trajectory else None,
            "metadata": item.metadata,
        }

    async def evaluate(self, item: EvaluationInput) -> Evaluation:
        url = self.config.url
        try:
            reply = await post_json(
                url,
                self.request_body(item),
                headers=self._headers,
                policy=self._policy,
                session=self._session,
                what=f"HTTP evaluator {self.name!r} at",
            )
        except HttpCallError as exc:
            return Evaluation.failure(str(exc), url=url, attempts=exc.attempts, status=exc.status)
        meta = {"url": url, "attempts": reply.attempts}
        if not isinstance(reply.body, dict):
            return Evaluation.failure(
                f"HTTP evaluator {self.name!r} at {url} replied with JSON that is not an object; "
                'the contract expects {"score": ..., "passed": ..., ...} (see docs/evaluators.md)',
                **meta,
            )
        try:
            verdict = HttpVerdict.model_validate(reply.body)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors()
            )
            return Evaluation.failure(
                f"HTTP evaluator {self.name!r} at {url} replied outside the contract: {problems} "
                "(see docs/evaluators.md)",
                **meta,
            )
        if verdict.error is not None:
            return Evaluation.failure(
                f"HTTP evaluator {self.name!r} could not judge the run: {verdict.error}", **meta
            )
        return Evaluation(
            score=verdict.score if verdict.score is not None else (1.0 if verdict.passed else 0.0),
            passed=verdict.passed,
            label=verdict.label,
            explanation=verdict.explanation,
            metadata={**(verdict.metadata or {}), **meta},
        )
