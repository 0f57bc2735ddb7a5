"""The whole path from a session's spans to a priced, validated ATIF trajectory."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from evalkit.trajectory.build import build_trajectory
from evalkit.trajectory.cost import apply_costs
from evalkit.trajectory.overrides import MappingOverrides
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.span import LogRecord, Span
from evalkit.trajectory.validate import ValidationIssue, errors_only, validate_trajectory


@dataclass
class SessionTrajectory:
    data: dict[str, Any]  # the ATIF document
    unmapped_attributes: list[str]
    emitters: list[str]
    warnings: list[str]
    mapping_version: str
    issues: list[ValidationIssue] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not errors_only(self.issues)

    def document(self) -> dict[str, Any]:
        return self.data


def trajectory_from_spans(
    spans: Sequence[Span],
    logs: Sequence[LogRecord] = (),
    *,
    overrides: MappingOverrides | None = None,
    prices: PriceBook | None = None,
    agent_name: str | None = None,
    agent_version: str | None = None,
    session_id: str | None = None,
) -> SessionTrajectory:
    built = build_trajectory(
        spans,
        logs,
        overrides=overrides,
        agent_name=agent_name,
        agent_version=agent_version,
        session_id=session_id,
    )
    document = apply_costs(built.document, prices or PriceBook())
    return SessionTrajectory(
        data=document,
        unmapped_attributes=built.unmapped_attributes,
        emitters=built.emitters,
        warnings=built.warnings,
        mapping_version=built.mapping_version,
        issues=validate_trajectory(document),
    )
