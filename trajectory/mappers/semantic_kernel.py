"""Semantic Kernel's own diagnostics (scopes `semantic_kernel.…`): the GenAI conventions, and SK's ways.

With `SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS[_SENSITIVE]` SK writes `invoke_agent
<name>`, `chat.completions`/`chat <model>` and `execute_tool <plugin>-<function>` spans in the GenAI
conventions, read by the GenAI mapper: a call's messages (sensitive only) are log records linked to its
span, `event.name` `gen_ai.{system,user,assistant,tool}.message` / `gen_ai.choice` with SK's message as
JSON for body; a tool span carries the call's arguments and result. What is SK's own:

- the finish reason is `gen_ai.response.finish_reason`, one string, SK's enum members joined by commas
  (`FinishReason.TOOL_CALLS`): the reasons when no `gen_ai.choice` record gave them;
- `server.address` is the service's base URL, `sk.available_functions` (on the
  `AutoFunctionInvocationLoop` span) the functions the model may call: neither is a step's;
- an `invoke_agent` span's `gen_ai.output.messages` restates its last call's answer (the same setting
  turns on the agent and the model spans: an agent span always has its calls under it).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation
from evalkit.trajectory.span import LogRecord, Span

NAME = "semantic-kernel"
SCOPE_PREFIX = "semantic_kernel."
_FINISH_REASON = "gen_ai.response.finish_reason"
_ENUM_PREFIX = "FinishReason."


def detect(span: Span) -> bool:
    return span.scope_name.startswith(SCOPE_PREFIX)


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("server.address", "sk.available_functions")
    finish = reader.text(_FINISH_REASON) if _FINISH_REASON in reader.attributes else None
    reader.consume(_FINISH_REASON)
    operation = otel_genai.map_span(reader, logs)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, AgentRun):
        reader.consume("gen_ai.output.messages")
    if isinstance(operation, LlmCall) and not operation.finish_reasons and finish:
        operation.finish_reasons = [_reason(part) for part in finish.split(",") if part.strip()]
    return operation


def _reason(member: str) -> str:
    """`FinishReason.TOOL_CALLS` -> `tool_calls`, the value the provider sent."""
    return member.strip().removeprefix(_ENUM_PREFIX).lower()
