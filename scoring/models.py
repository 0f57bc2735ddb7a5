"""Request bodies of the scoring routes (pydantic at the HTTP boundary; docs/api.md is their reference)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from evalkit.scoring_hint import EVALUATOR_REF

from .compare import GateConfig


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LeaseRequest(_Body):
    holder: str = Field(min_length=1, max_length=200)
    ttl_seconds: float = Field(default=60.0, gt=0, le=24 * 3600)


class RunSettings(_Body):
    """How the service runs a harness agent's calls (`evalkit run` passes its flags here); each left out
    is the agent's setting or the service's default. A code agent's runner (the SDK) applies its own."""

    timeout_seconds: float | None = Field(default=None, gt=0, le=24 * 3600)
    retries: int | None = Field(default=None, ge=0, le=20)
    concurrency: int | None = Field(default=None, ge=1, le=1000)
    max_tokens: int | None = Field(default=None, ge=1)
    trajectory_wait_seconds: float | None = Field(default=None, ge=0, le=3600)


class CreateExperiment(_Body):
    agent: str
    dataset: str
    dataset_version: str | None = None
    case_ids: list[str] | None = None
    split: str | None = None
    repetitions: int = Field(default=1, ge=1, le=1000)
    model: str | None = None
    judge: dict[str, Any] | None = None
    evaluators: list[str] = Field(default_factory=list)
    evaluator_refs: dict[str, str] = Field(
        default_factory=dict, description="Python evaluator name → `module:name` that loads it (`evalkit evaluate "
        "--evaluator`): kept so that every \"finish scoring with …\" names the command that scores them")
    capabilities: dict[str, Any] = Field(default_factory=dict)
    budget_usd: float | None = Field(default=None, ge=0)
    name: str = ""
    description: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    evalkit_version: str | None = None
    credentials: dict[str, str] = Field(default_factory=dict)
    lease: LeaseRequest | None = None
    run_settings: RunSettings | None = None

    @field_validator("evaluator_refs")
    @classmethod
    def _refs(cls, refs: dict[str, str]) -> dict[str, str]:
        bad = sorted(name for name, ref in refs.items() if not EVALUATOR_REF.match(ref))
        if bad:
            raise ValueError(f"evaluator_refs of {', '.join(bad)}: write where each is loaded from as module:name "
                             "(e.g. my_evals:exact_match), without spaces")
        return refs


class RecordRun(_Body):
    lease_holder: str | None = None
    case_id: str
    repetition: int = Field(ge=0)
    attempt: int = Field(default=1, ge=1)
    session_id: str = Field(min_length=1)
    status: Literal["completed", "failed", "timeout", "cancelled"]
    answer: str | None = None
    output: Any = None
    error: str | None = None
    model: str | None = None
    started_at: float | None = None
    ended_at: float | None = None
    trajectory: dict[str, Any] | None = None
    trajectory_status: Literal["valid", "partial", "invalid", "unavailable"] | None = None
    metrics: dict[str, float | int | None] | None = None
    # The SDK records a run the moment its task returns, before its session has settled: the session is not
    # read then (it would be read twice); the same record is sent again, without this, once it has settled.
    trajectory_pending: bool = False


class PublishedEvaluation(_Body):
    run_id: str
    evaluator: str
    score: float | None = None
    passed: bool | None = None
    label: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None
    evaluator_version: str = ""
    cost_usd: float | None = 0.0


class PublishEvaluations(_Body):
    lease_holder: str | None = None
    evaluations: list[PublishedEvaluation]


class EvaluateRequest(_Body):
    evaluators: list[str] | None = None
    rescore: bool = False
    refetch_trajectories: bool = False
    credentials: dict[str, str] = Field(default_factory=dict)
    partial: bool = False


class ChangeExperiment(_Body):
    status: Literal["pending", "running", "evaluating", "completed", "failed", "cancelled", "stopped"] | None = None
    model: str | None = None
    name: str | None = Field(default=None, max_length=200)
    description: str | None = Field(default=None, max_length=10_000)
    reason: str = ""
    lease_holder: str | None = None


class ResumeRequest(_Body):
    holder: str | None = None
    ttl_seconds: float = Field(default=60.0, gt=0, le=24 * 3600)
    take_over: bool = Field(default=False, description="take a live lease over: its holder is known to be gone")
    budget_usd: float | None = Field(default=None, ge=0, description="(harness) the experiment's new budget, over "
                                     "every pass: what earlier passes spent counts")
    max_tokens: int | None = Field(default=None, ge=1, description="(harness) the experiment's new token limit, "
                                   "over every pass")


class RefetchRequest(_Body):
    statuses: list[Literal["partial", "unavailable", "invalid"]] = Field(
        default_factory=lambda: ["partial", "unavailable"])  # type: ignore[arg-type]


class GateRequest(GateConfig):
    baseline_id: int
    alpha: float = Field(default=0.05, gt=0, lt=1)


class PushDataset(_Body):
    cases: list[Any]
    description: str = ""
    git_revision: str | None = None
    # The Python evaluators the pusher declares (they run in the SDK, so the service cannot know them).
    # Given (the SDK and the CLI always give it), a case naming an evaluator that is none of these, a
    # built-in type, the judge or a workspace evaluator is refused; left out, names are not checked.
    python_evaluators: list[str] | None = None


class ReviewRequest(_Body):
    state: str
    note: str = ""
