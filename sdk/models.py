"""The public types of the SDK: what a task receives and returns, and what an experiment returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunStatus = Literal["completed", "failed", "timeout", "cancelled"]
TrajectoryStatus = Literal["valid", "partial", "invalid", "unavailable"]


class Fixture(BaseModel):
    """A file a case comes with: its name in the case, where it is on this machine, and what it is for."""

    model_config = ConfigDict(frozen=True)

    name: str
    path: Path
    context: str | None = None

    def read_text(self, encoding: str = "utf-8") -> str:
        return self.path.read_text(encoding=encoding)

    def read_bytes(self) -> bytes:
        return self.path.read_bytes()


class RunResult(BaseModel):
    """What a task may return when a plain answer is not enough.

    At least one of `answer`, `output` or `error` must be set. `session_id` says
    the agent traced elsewhere under that session; `trajectory` pushes a whole
    ATIF document instead of one built from spans.
    """

    model_config = ConfigDict(extra="forbid")

    answer: str | None = None
    output: dict[str, Any] | list[Any] | None = None
    model: str | None = None
    error: str | None = None
    session_id: str | None = None
    trajectory: dict[str, Any] | None = None


class RunSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

    case_id: str
    repetition: int
    status: RunStatus
    trajectory_status: TrajectoryStatus | None
    session_id: str | None
    answer: str | None = None
    output: Any = None
    error: str | None = None
    attempts: int = 1
    cost_usd: float | None = None
    tokens: int | None = None


class ExperimentResult(BaseModel):
    """What `run_experiment` returns: a dry run has no id and no url."""

    experiment_id: str | None
    url: str | None
    runs: list[RunSummary] = Field(default_factory=list)
    scorecard: dict[str, Any] | None = None
    budget: dict[str, Any] | None = None
    stopped_reason: str | None = None

    def failed(self) -> list[RunSummary]:
        return [r for r in self.runs if r.status != "completed"]


class JudgeSettings(BaseModel):
    """The LLM judge: an OpenAI-compatible endpoint. Its key comes from `credentials` in evalkit.yaml."""

    model_config = ConfigDict(extra="allow")

    base_url: str
    model: str
    samples: int | None = None
    rubric: str | None = None
