"""Semantic Kernel's own diagnostics (scopes `semantic_kernel.…`): the GenAI conventions, and SK's ways.

With `SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS[_SENSITIVE]` SK writes `invoke_agent
<name>`, `chat.completions`/`chat <model>` and `execute_tool <plugin>-<function>` spans in the GenAI
conventions, read by the GenAI mapper: a call's messages (sensitive only) are log records linked to its
span, `event.name` `gen_ai.{system,user,assistant,tool}.message` / `gen_ai.choice` with SK's message as
JSON for body; a tool span carries the call's arguments and result. What is SK's own:

- the finish reason is `gen_ai.response.finish_reason`, one string, SK's enum members joined by commas
  (`FinishReason.TOOL_CALLS`): the reasons when no `gen_ai.choice` record gave them;
- `server.address` is the service's base URL: no step's;
- a chat call asked for functions runs in an `AutoFunctionInvocationLoop` span (const.py
  `AUTO_FUNCTION_INVOCATION_SPAN_NAME`, around the calls and the functions they ask for): SK's own loop, no
  call, its `sk.available_functions` the functions the model may call. Its log records are SK's debug lines
  ("processing 2 tool calls in parallel.", no event name), which the GenAI reading would take for a call's
  messages;
- an `invoke_agent` span's `gen_ai.output.messages` restates its last call's answer (the same setting
  turns on the agent and the model spans: an agent span always has its calls under it);
- a `HandoffOrchestration` gives each member agent a `Handoff` plugin, and the model's `Handoff-transfer_to_<agent>`
  call starts that agent's run: its function only names the actor's next agent (returning None), then the
  orchestration runs the receiving agent's `invoke_agent` beside the calling one's, not under it. To the builder
  that is a delegation (`ToolExecution.delegates_to`), not a handoff: the receiving agent carries on no
  conversation of the calling one's (each member's actor keeps a thread of its own, sent the task when the
  orchestration starts and the answers other members publish), so the question it is sent is asked it anew;
- an orchestration runs its agents as actors on an agent runtime (`InProcessRuntime`), which traces its own
  messaging (tracer `agent_runtime <runtime>`: `create` / `publish` / `process` / `ack` spans, `messaging.*`
  keys) around the actors' work: SK's bookkeeping, no step.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "semantic-kernel"
SCOPE_PREFIX = "semantic_kernel."
# `TraceHelper`'s tracer for an agent runtime's messaging (`agent_runtime InProcessRuntime`).
RUNTIME_SCOPE_PREFIX = "agent_runtime "
# `HandoffAgentActor._add_handoff_functions`: plugin `Handoff` (HANDOFF_PLUGIN_NAME), a function
# `transfer_to_<agent>` for each agent a member may hand off to, named `<plugin>-<function>` to the model.
_HANDOFF_PREFIX = "Handoff-transfer_to_"
_FUNCTION_INVOCATION_LOOP = "AutoFunctionInvocationLoop"
_FINISH_REASON = "gen_ai.response.finish_reason"
_ENUM_PREFIX = "FinishReason."


def detect(span: Span) -> bool:
    return span.scope_name.startswith((SCOPE_PREFIX, RUNTIME_SCOPE_PREFIX))


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    if reader.span.scope_name.startswith(RUNTIME_SCOPE_PREFIX):
        reader.consume_prefix("messaging.")
        return None
    if reader.span.name == _FUNCTION_INVOCATION_LOOP:
        reader.consume("sk.available_functions")
        return None
    reader.consume("server.address")
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
    if isinstance(operation, ToolExecution) and operation.name and operation.name.startswith(_HANDOFF_PREFIX):
        operation.delegates_to = operation.name.removeprefix(_HANDOFF_PREFIX)
    return operation


def _reason(member: str) -> str:
    """`FinishReason.TOOL_CALLS` -> `tool_calls`, the value the provider sent."""
    return member.strip().removeprefix(_ENUM_PREFIX).lower()
