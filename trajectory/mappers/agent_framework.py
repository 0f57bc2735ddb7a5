"""Microsoft Agent Framework's own telemetry (`agent_framework.observability`, scope `agent_framework`).

Its `invoke_agent <name>`, `chat <model>` and `execute_tool <function>` spans are the GenAI conventions
(the latest by default, v1.36 with `OTEL_SEMCONV_STABILITY_OPT_IN` not naming `gen_ai_latest_experimental`),
read by the GenAI mapper; with sensitive data on, each call's messages are also v1.36 event log records
(`gen_ai.user.message`, … `gen_ai.choice`), which the GenAI mapper reads only when the span has none. What
is the framework's own bookkeeping, read here so that it is not reported unmapped:

- `server.address` on a call is the client's base URL (`service_url`), `agent_framework.function.
  invocation.duration` on a tool span its duration: neither is a step's;
- an `invoke_agent` span restates its run: `gen_ai.provider.name` (v1.36: `gen_ai.system`) is the framework
  (`microsoft.agent_framework`, `AGENT_PROVIDER_NAME`), not the model's provider; `gen_ai.output.messages` is
  the run's response (every call's answer and tool result, each also on its own span), the finish reasons
  and response id its last call's, `gen_ai.request.*` the agent's default options its calls were asked with
  (`gen_ai.request.choice.count` 1 on every span). Its calls' spans are always under it: the agent's chat
  client carries the same telemetry layer.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, Operation
from evalkit.trajectory.span import LogRecord, Span

NAME = "agent-framework"
SCOPE = "agent_framework"
_RESTATED_BY_AGENT_SPAN = (
    "gen_ai.provider.name",
    "gen_ai.system",
    "gen_ai.output.messages",
    "gen_ai.response.finish_reasons",
    "gen_ai.response.id",
)


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("server.address", "agent_framework.function.invocation.duration")
    operation = otel_genai.map_span(reader, logs)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, AgentRun):
        reader.consume(*_RESTATED_BY_AGENT_SPAN)
        reader.consume_prefix("gen_ai.request.")
    return operation
