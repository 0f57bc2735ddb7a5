"""What every evaluator takes and returns.

An evaluator is built once from its config and then judges runs: it receives an
`EvaluationInput` (the case and what the run produced) and returns an
`Evaluation`. Evaluators never raise for a run they cannot judge — an endpoint
that is down, a verdict that will not parse — they return an Evaluation with
`error` set, so one bad run never stops the scoring of an experiment. They do
raise `EvaluatorConfigError` when built from a config that cannot work.
"""

from __future__ import annotations

import builtins
import hashlib
import json
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "Evaluation",
    "EvaluationInput",
    "Evaluator",
    "EvaluatorConfig",
    "EvaluatorConfigError",
    "Target",
    "TokenUsage",
    "select_target",
]


class EvaluatorConfigError(ValueError):
    """An evaluator spec or config that cannot work; the message says what to change."""


class EvaluationInput(BaseModel):
    """One run, as an evaluator sees it.

    `answer` is the run's text answer, `output` its structured output (a task may
    return either or both). `trajectory` is the run's ATIF trajectory as a dict, or
    None when there is none (status `unavailable`). `rubric` is the case's rubric,
    for judges.
    """

    model_config = ConfigDict(extra="forbid")

    input: Any = None
    answer: str | None = None
    output: Any = None
    expected: Any = None
    rubric: str | None = None
    trajectory: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class TokenUsage(BaseModel):
    model_config = ConfigDict(extra="forbid")

    input_tokens: int = 0
    output_tokens: int = 0


class Evaluation(BaseModel):
    """An evaluator's verdict on one run.

    `error` set means the evaluator could not judge; score and passed are then None.
    `cost_usd`: the evaluator's own spend; 0.0 for code checks, None when it spent
    money nobody priced (an LLM judge without a price).
    """

    model_config = ConfigDict(extra="forbid")

    score: float | None = None
    passed: bool | None = None
    label: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    usage: TokenUsage | None = None
    cost_usd: float | None = 0.0

    @classmethod
    def verdict(
        cls, passed: bool, explanation: str, *, label: str | None = None, **metadata: Any
    ) -> Evaluation:
        """A pass/fail verdict; its score is 1.0 or 0.0 so that score-based views agree."""
        return cls(
            score=1.0 if passed else 0.0,
            passed=passed,
            label=label or ("pass" if passed else "fail"),
            explanation=explanation,
            metadata=metadata,
        )

    @classmethod
    def failure(cls, error: str, **metadata: Any) -> Evaluation:
        return cls(error=error, label="error", explanation=error, metadata=metadata)


class EvaluatorConfig(BaseModel):
    """Base of every evaluator's config: unknown keys are refused, so a typo in a
    spec fails when the evaluator is built, not silently at scoring time."""

    model_config = ConfigDict(extra="forbid", frozen=True)


ConfigT = TypeVar("ConfigT", bound=EvaluatorConfig)


class Evaluator(ABC, Generic[ConfigT]):
    """Base of all evaluators.

    `type` names the kind in specs (`{"type": "regex", ...}`); `version` changes
    whenever the same config could judge a run differently, so stored evaluations
    can be told apart and caches keyed by it stay correct.
    """

    type: ClassVar[str]
    version: ClassVar[str]
    config_model: ClassVar[builtins.type[EvaluatorConfig]]

    def __init__(self, config: ConfigT, *, name: str | None = None) -> None:
        self.config = config
        self.name = name or self.type

    @property
    def fingerprint(self) -> str:
        """A short hash of type, version and config: equal fingerprints judge alike."""
        blob = json.dumps(
            {"type": self.type, "version": self.version, "config": self.config.model_dump(mode="json")},
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    @abstractmethod
    async def evaluate(self, item: EvaluationInput) -> Evaluation: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, version={self.version!r})"


Target = Literal["answer", "output"]
_MISSING = object()


def select_target(item: EvaluationInput, target: Target, path: str | None) -> tuple[Any, str | None]:
    """The value a check looks at: the answer or the structured output, optionally a
    field inside it by dotted path (`result.items.0.name`). Returns (value, problem);
    problem says why there is nothing to check."""
    value: Any = item.answer if target == "answer" else item.output
    if value is None:
        return None, f"the run has no {target}"
    if not path:
        return value, None
    if target == "answer" and isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None, f"path {path!r} given but the answer is not JSON"
    current: Any = value
    for part in path.split("."):
        if isinstance(current, dict):
            current = current.get(part, _MISSING)
        elif (
            isinstance(current, list)
            and part.lstrip("-").isdigit()
            and -len(current) <= int(part) < len(current)
        ):
            current = current[int(part)]
        else:
            current = _MISSING
        if current is _MISSING:
            return None, f"the {target} has no field {path!r} (stopped at {part!r})"
    return current, None
