"""Pydantic models of ATIF, the Agent Trajectory Interchange Format (Harbor RFC 0001).

They mirror Harbor's own models (`harbor.models.trajectories`, v1.8): every object forbids
unknown keys, so custom data goes in `extra`. We emit `ATIF-v1.7` and accept documents
of v1.0 through v1.8. The model validators repeat the cross-field rules so that
`Trajectory.model_validate` is as strict as Harbor; `validate.py` reports the same
rules as a list of located errors instead of the first exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

EMITTED_VERSION: Literal["ATIF-v1.7"] = "ATIF-v1.7"
AUDIO_VERSION: Literal["ATIF-v1.8"] = "ATIF-v1.8"  # the first with audio content parts
SchemaVersion = Literal[
    "ATIF-v1.0",
    "ATIF-v1.1",
    "ATIF-v1.2",
    "ATIF-v1.3",
    "ATIF-v1.4",
    "ATIF-v1.5",
    "ATIF-v1.6",
    "ATIF-v1.7",
    "ATIF-v1.8",
]
ACCEPTED_VERSIONS: tuple[str, ...] = SchemaVersion.__args__  # type: ignore[attr-defined]

ImageMediaType = Literal["image/jpeg", "image/png", "image/gif", "image/webp"]
AUDIO_MEDIA_TYPES = (
    "audio/wav",
    "audio/mpeg",
    "audio/mp4",
    "audio/aac",
    "audio/ogg",
    "audio/flac",
    "audio/webm",
    "audio/aiff",
)
# Harbor normalises these before checking the enum, so a pushed v1.8 document may carry them.
AUDIO_MEDIA_TYPE_ALIASES: dict[str, str] = {
    "audio/mp3": "audio/mpeg",
    "audio/mpga": "audio/mpeg",
    "audio/x-mpeg": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-m4a": "audio/mp4",
    "audio/m4a": "audio/mp4",
    "audio/x-aac": "audio/aac",
    "audio/x-flac": "audio/flac",
    "audio/x-aiff": "audio/aiff",
}


def _normalise_audio_media_type(value: Any) -> Any:
    if isinstance(value, str):
        lowered = value.strip().lower()
        return AUDIO_MEDIA_TYPE_ALIASES.get(lowered, lowered)
    return value


AudioMediaType = Annotated[
    Literal[
        "audio/wav",
        "audio/mpeg",
        "audio/mp4",
        "audio/aac",
        "audio/ogg",
        "audio/flac",
        "audio/webm",
        "audio/aiff",
    ],
    BeforeValidator(_normalise_audio_media_type),
    WithJsonSchema({"type": "string", "enum": [*AUDIO_MEDIA_TYPES, *AUDIO_MEDIA_TYPE_ALIASES]}),
]


def version_for(steps: Sequence[dict[str, Any]], subagents: Sequence[dict[str, Any]] = ()) -> str:
    """The version a document of these steps and embedded subagents declares: AUDIO_VERSION where a step's message or
    a tool result holds an audio part, or a subagent declares it (a reader of an earlier version knows no audio part),
    else EMITTED_VERSION."""
    def holds_audio(content: Any) -> bool:
        return isinstance(content, list) and any(isinstance(part, dict) and part.get("type") == "audio"
                                                 for part in content)

    for step in steps:
        if holds_audio(step.get("message")) or any(
                holds_audio(result.get("content")) for result in (step.get("observation") or {}).get("results") or ()):
            return AUDIO_VERSION
    if any(sub.get("schema_version") == AUDIO_VERSION for sub in subagents):
        return AUDIO_VERSION
    return EMITTED_VERSION


def is_iso_timestamp(value: str) -> bool:
    """Harbor's own check: `datetime.fromisoformat` after turning a trailing Z into +00:00."""
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ImageSource(_Strict):
    media_type: ImageMediaType
    path: str = Field(description="Relative or absolute file path, or URL, of the image.")


class AudioSource(_Strict):
    media_type: AudioMediaType
    path: str = Field(description="Relative or absolute file path, or URL, of the audio.")
    duration_sec: float | None = Field(default=None, ge=0)


class ContentPart(_Strict):
    """One element of a multimodal message or observation content (v1.6+; audio v1.8+)."""

    type: Literal["text", "image", "audio"]
    text: str | None = None
    source: ImageSource | AudioSource | None = None

    @model_validator(mode="after")
    def _payload_matches_type(self) -> ContentPart:
        if self.type == "text":
            if self.text is None or self.source is not None:
                raise ValueError("a text ContentPart needs `text` and no `source`")
            return self
        if self.source is None or self.text is not None:
            raise ValueError(f"a {self.type} ContentPart needs `source` and no `text`")
        expected = ImageSource if self.type == "image" else AudioSource
        if not isinstance(self.source, expected):
            raise ValueError(f"a {self.type} ContentPart needs an {expected.__name__}")
        return self


class ToolCall(_Strict):
    tool_call_id: str
    function_name: str
    arguments: dict[str, Any] = Field(description="JSON object of arguments; may be empty.")
    extra: dict[str, Any] | None = None


class SubagentTrajectoryRef(_Strict):
    trajectory_id: str | None = Field(
        default=None, description="Embedded form: an entry of subagent_trajectories."
    )
    trajectory_path: str | None = Field(default=None, description="File, URL or database reference.")
    session_id: str | None = Field(default=None, description="Informational only, never a resolution key.")
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _resolvable(self) -> SubagentTrajectoryRef:
        if self.trajectory_id is None and self.trajectory_path is None:
            raise ValueError("a subagent trajectory ref needs trajectory_id or trajectory_path")
        return self


class ObservationResult(_Strict):
    source_call_id: str | None = Field(
        default=None, description="The tool_call_id answered; null for non-tool events."
    )
    content: str | list[ContentPart] | None = None
    subagent_trajectory_ref: list[SubagentTrajectoryRef] | None = None
    extra: dict[str, Any] | None = None


class Observation(_Strict):
    results: list[ObservationResult]


class Metrics(_Strict):
    prompt_tokens: int | None = Field(default=None, description="All input tokens, cached ones included.")
    completion_tokens: int | None = Field(default=None, description="Generated tokens, reasoning included.")
    cached_tokens: int | None = Field(default=None, description="Subset of prompt_tokens read from cache.")
    cost_usd: float | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    extra: dict[str, Any] | None = None


class FinalMetrics(_Strict):
    total_prompt_tokens: int | None = None
    total_completion_tokens: int | None = None
    total_cached_tokens: int | None = None
    total_cost_usd: float | None = None
    total_steps: int | None = Field(default=None, ge=0)
    extra: dict[str, Any] | None = None


class Agent(_Strict):
    name: str
    version: str
    model_name: str | None = None
    tool_definitions: list[dict[str, Any]] | None = None
    extra: dict[str, Any] | None = None


AGENT_ONLY_FIELDS = ("model_name", "reasoning_effort", "reasoning_content", "tool_calls", "metrics")


class Step(_Strict):
    step_id: int = Field(ge=1, description="Position in `steps`, starting at 1.")
    timestamp: str | None = Field(default=None, description="ISO 8601.")
    source: Literal["system", "user", "agent"]
    model_name: str | None = None
    reasoning_effort: str | float | None = None
    message: str | list[ContentPart]
    reasoning_content: str | None = None
    tool_calls: list[ToolCall] | None = None
    observation: Observation | None = None
    metrics: Metrics | None = None
    llm_call_count: int | None = Field(default=None, ge=0)
    is_copied_context: bool | None = None
    extra: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _cross_field_rules(self) -> Step:
        if self.timestamp is not None and not is_iso_timestamp(self.timestamp):
            raise ValueError(f"timestamp {self.timestamp!r} is not ISO 8601")
        if self.source != "agent":
            for name in AGENT_ONLY_FIELDS:
                if getattr(self, name) is not None:
                    raise ValueError(f"`{name}` is only allowed on agent steps")
        if self.source == "agent" and self.llm_call_count == 0:
            if self.metrics is not None or self.reasoning_content is not None:
                raise ValueError("llm_call_count == 0 forbids metrics and reasoning_content")
        if self.observation is not None:
            call_ids = {call.tool_call_id for call in self.tool_calls or ()}
            for result in self.observation.results:
                if result.source_call_id is not None and result.source_call_id not in call_ids:
                    raise ValueError(
                        f"source_call_id {result.source_call_id!r} names no tool call of this step"
                    )
        return self


class Trajectory(_Strict):
    schema_version: SchemaVersion = EMITTED_VERSION
    session_id: str | None = None
    trajectory_id: str | None = Field(default=None, description="Required and unique on embedded subagents.")
    agent: Agent
    steps: list[Step] = Field(min_length=1)
    notes: str | None = None
    final_metrics: FinalMetrics | None = None
    continued_trajectory_ref: str | None = None
    extra: dict[str, Any] | None = None
    subagent_trajectories: list[Trajectory] | None = None

    @model_validator(mode="after")
    def _ids_in_order_and_unique(self) -> Trajectory:
        for position, step in enumerate(self.steps, start=1):
            if step.step_id != position:
                raise ValueError(f"steps[{position - 1}].step_id is {step.step_id}, expected {position}")
        seen: set[str] = set()
        for index, sub in enumerate(self.subagent_trajectories or ()):
            if sub.trajectory_id is None:
                raise ValueError(f"subagent_trajectories[{index}] needs a trajectory_id")
            if sub.trajectory_id in seen:
                raise ValueError(
                    f"subagent_trajectories[{index}].trajectory_id {sub.trajectory_id!r} is repeated"
                )
            seen.add(sub.trajectory_id)
        return self

    def to_json_dict(self) -> dict[str, Any]:
        """The document as JSON-ready data, unset fields left out (as Harbor writes it)."""
        return self.model_dump(mode="json", exclude_none=True)


Trajectory.model_rebuild()
