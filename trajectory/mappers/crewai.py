"""CrewAI's shapes, as OpenInference's crewai instrumentation records them.

A crew run is a CHAIN span `Crew_<id>.kickoff` (`crew_key`, `crew_agents`, `crew_tasks`, its
inputs in `crew_inputs`, its result a CrewOutput in `output.value`); each task an agent carries
out is an AGENT span `<role>._execute_core` (`graph.node.id` the agent's role, `task_key`,
`task_id`; its output a TaskOutput). A crew orchestrates agents: its run is the session's agent,
each task's agent a subagent. What a crew or task said is the `raw` text of its output.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import SpanReader, parse_json

_BOOKKEEPING = ("crew_key", "crew_id", "crew_agents", "crew_tasks", "crew_inputs", "task_key", "task_id")
# A CrewAI tool's settings, on its TOOL span.
_TOOL_SETTINGS = ("tool.cache_function", "tool.current_usage_count", "tool.description_updated",
                  "tool.result_as_answer")


def is_crewai(reader: SpanReader) -> bool:
    return reader.has("crew_key")


def is_crew_run(reader: SpanReader) -> bool:
    return is_crewai(reader) and reader.span.name.endswith(".kickoff")


def consume(reader: SpanReader) -> None:
    reader.consume(*_BOOKKEEPING)


def consume_tool(reader: SpanReader) -> None:
    reader.consume(*_TOOL_SETTINGS)


def crew_input(reader: SpanReader) -> str | None:
    inputs = parse_json(reader.get("crew_inputs"))
    return render(inputs) if inputs else None


def raw_output(value: Any) -> str | None:
    """A CrewOutput's / TaskOutput's `raw` text; None for anything else."""
    output = parse_json(value)
    raw = output.get("raw") if isinstance(output, dict) else None
    return render(raw) if raw is not None else None
