"""What a dry run prints: the answer, and what the service made of the session."""

from __future__ import annotations

import json
from typing import Any

from evalkit.sdk.binding import Outcome
from evalkit.sdk.client import ServiceError
from evalkit.sdk.progress import ProgressReport
from evalkit.sdk.service import Service


def _short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def session_lines(summary: dict[str, Any] | None) -> list[str]:
    if not summary:
        return ["spans: none arrived (is the task's tracing pointed at evalkit?)"]
    nested = summary.get("summary")
    info: dict[str, Any] = nested if isinstance(nested, dict) else summary
    count = info.get("span_count", len(summary.get("spans") or []))
    kinds = info.get("spans_by_kind") or info.get("by_kind") or info.get("span_kinds") or {}
    kinds_text = ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) if isinstance(kinds, dict) else str(kinds)
    unmapped = info.get("unmapped_attributes") or []
    lines = [f"spans: {count}" + (f" ({kinds_text})" if kinds_text else ""),
             f"mapping version: {info.get('mapping_version') or 'built-in'}",
             "unmapped attributes: " + (", ".join(map(str, unmapped)) if unmapped else "none")]
    return lines


class DryRunReport:
    def __init__(self, service: Service, report: ProgressReport) -> None:
        self.service = service
        self.report = report

    async def show(self, agent: str, case_id: str, session_id: str, outcome: Outcome,
                   trajectory_status: str | None) -> None:
        lines = [f"── case {case_id} (session {session_id})"]
        if outcome.status == "completed":
            lines.append(f"answer: {_short(outcome.answer if outcome.answer is not None else outcome.output)}")
        else:
            lines.append(f"{outcome.status}: {outcome.error}")
        try:
            summary = await self.service.session(agent, session_id)
        except ServiceError as exc:
            summary = None
            lines.append(f"(the session could not be read: {exc})")
        lines.extend(session_lines(summary))
        steps: int | str = "?"
        if outcome.trajectory is not None:
            trajectory_status = "pushed"
            steps = len(outcome.trajectory.get("steps") or [])
        else:
            try:
                status, document = await self.service.trajectory(agent, session_id, 0)
                trajectory_status = trajectory_status or status
                steps = len((document or {}).get("steps") or [])
            except ServiceError as exc:
                lines.append(f"(the trajectory could not be read: {exc})")
        lines.append(f"trajectory: {trajectory_status or 'unavailable'}, {steps} step(s)")
        self.report.say("\n".join(lines))
