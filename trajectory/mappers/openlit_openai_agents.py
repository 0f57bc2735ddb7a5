"""OpenLIT's openai-agents instrumentation (scope `openlit.instrumentation.openai_agents`, as of openlit 1.45).

A tracing processor of openai-agents' own tracing that turns the SDK's spans into GenAI-looking ones; it skips
the SDK's model-call spans (response, generation), which OpenLIT's OpenAI client instrumentation reports (its
`chat <model>` spans, `trajectory/mappers/openlit.py`), under the turn span the processor makes current. What
each of its spans is, by `gen_ai.operation.name` and what it names:

- `invoke_workflow <trace name>`: the SDK's trace, one per `Runner.run`: groups the run, no agent;
- `invoke_agent` naming no agent (`gen_ai.agent.name` absent): the SDK's task and turn spans (span types it has
  no name for), which group a run's turns and a turn's model call and tools: no agent, no step;
- `invoke_agent <agent>` with `gen_ai.agent.source`: not an agent run but the SDK's handoff span, named after the
  agent handed to (`to_agent`), the source the agent handing off: the handoff the model's `transfer_to_…` call
  made;
- `invoke_agent <agent>`: an agent run (its tools' names as `gen_ai.tool.definitions`, its handoffs'
  as `gen_ai.agent.handoffs`);
- `execute_tool <tool>`: a function tool's execution, its arguments and result (`str(output)`: for a tool that
  raised, the failure function's text the model was sent) and no call id. The SDK runs a function tool only
  when the model's answer asked for it, in the turn span that holds that model call: so it is a call of that
  answer even when the call's span does not say so (`ToolExecution.asked_by_call_beside`): OpenLIT's OpenAI
  instrumentation keeps only the last `function_call` item of a non-streamed Responses answer
  (`process_response_response` overwrites `_response_tools` for each), so of parallel calls the others are on
  their tool spans alone;
- `create_agent <agent>`: an `Agent(...)` constructed (outside any run: a trace of its own): no step.

Every span carries the trace's `group_id` as `gen_ai.conversation.id` (the session, read by the builder) and
OpenLIT's bookkeeping (`gen_ai.client.operation.duration`, the SDK's version, the server OpenAI would be, the
resource's names).
"""

from __future__ import annotations

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import Operation, ToolExecution

SCOPE = "openlit.instrumentation.openai_agents"
_BOOKKEEPING = ("gen_ai.provider.name",)
# What an `Agent(...)` was built with, on its `create_agent` span: the agent's runs say what they were given.
_AGENT_SETUP = ("gen_ai.request.model", "gen_ai.system_instructions", "gen_ai.tool.definitions",
                "gen_ai.agent.handoffs")


def map_span(reader: SpanReader, emitter: str) -> Operation | None:
    """One span of the processor's, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    operation = otel_genai.operation_name(reader)
    if operation == "execute_tool":
        execution = otel_genai.tool_execution(reader, emitter)
        execution.asked_by_call_beside = True
        return execution
    if operation != "invoke_agent":  # the trace's `invoke_workflow`, an agent's `create_agent`
        reader.consume("gen_ai.workflow.name", *_AGENT_SETUP)
        return None
    if not reader.has("gen_ai.agent.name"):
        return None  # the SDK's task or turn span
    if reader.has("gen_ai.agent.source"):
        reader.consume("gen_ai.agent.source")
        return ToolExecution(span=reader.span, emitter=emitter, handoff_to=reader.text("gen_ai.agent.name") or "",
                             error=span_error(reader))
    reader.consume("gen_ai.agent.handoffs")  # its handoffs' names: each handoff is read on its own span
    return otel_genai.agent_run(reader, emitter)
