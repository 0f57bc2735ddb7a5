"""Per-agent mapping overrides: how one agent's spans differ from what the mappers assume.

Stored and versioned by the service; applied by the builder. `version` is reported on
every trajectory built with them (`extra.mapping_version`), "built-in" without them.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

BUILT_IN_VERSION = "built-in"

# Where a custom attribute's value may go.
_TARGET = re.compile(
    r"^(step\.extra\.[\w.-]+|metrics\.extra\.[\w.-]+|trajectory\.extra\.[\w.-]+|agent\.extra\.[\w.-]+"
    r"|step\.model_name|step\.reasoning_effort|agent\.name|agent\.version|agent\.model_name|session_id)$"
)


class MappingOverrides(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str | None = Field(default=None, description="Version label reported as extra.mapping_version.")
    session_id_attribute: str | None = Field(
        default=None, description="Span attribute holding the session id, tried before the built-in ones."
    )
    agent_name_attribute: str | None = Field(default=None, description="Span attribute naming the agent.")
    attribute_map: dict[str, str] = Field(
        default_factory=dict,
        description=(
            "Custom attribute -> ATIF target: step.extra.<key>, metrics.extra.<key>, step.model_name, "
            "step.reasoning_effort, agent.name, agent.version, agent.model_name, agent.extra.<key>, "
            "trajectory.extra.<key>, session_id."
        ),
    )
    ignore_span_names: list[str] = Field(
        default_factory=list, description="Span names (shell globs) dropped before mapping."
    )

    @field_validator("attribute_map")
    @classmethod
    def _known_targets(cls, value: dict[str, str]) -> dict[str, str]:
        for attribute, target in value.items():
            if not _TARGET.match(target):
                raise ValueError(f"attribute {attribute!r}: unknown ATIF target {target!r}")
        return value

    @property
    def label(self) -> str:
        return self.version or "custom"
