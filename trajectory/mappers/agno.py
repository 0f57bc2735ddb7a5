"""Agno's conventions, as they arrive through OpenInference's Agno instrumentation.

An Agno agent or team run span carries Agno's own ids beside OpenInference's attributes:
`agno.agent` / `agno.team` (the name `graph.node.name` already gives), their `.id`, `agno.run.id`,
and `agno.tools` (the agent's tool names, whose definitions its LLM spans carry). They are
bookkeeping: read, never listed as unmapped.
"""

from __future__ import annotations

from evalkit.trajectory.mappers.reader import SpanReader

SCOPE = "openinference.instrumentation.agno"


def consume(reader: SpanReader) -> None:
    if reader.span.scope_name == SCOPE:
        reader.consume_prefix("agno.")
