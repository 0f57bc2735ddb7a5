"""Strands Agents' own spans as OpenInference's Strands span processor rewrites them.

`openinference-instrumentation-strands-agents` is a span processor, no instrumentation of its own: as each
span of Strands' tracer (scope `strands.telemetry.tracer`) ends, it writes OpenInference attributes beside
Strands' and strips Strands' `gen_ai.*` span events, where Strands' default conventions keep the messages
(processor.py `on_end`, `_strip_genai_events`). So such a span is read by `openinference` first (its messages
are the only ones left) and by `strands` after it, which fills what OpenInference's reading lacks (a tool
call's id from `gen_ai.tool.call.id`) and flags a failed tool by `gen_ai.tool.status`.

What the processor writes of its own:
- every agent span's `graph.node.id` is `strands_agent`, whatever the agent (`_set_graph_node_attributes`):
  a node of Phoenix's graph, not a name. The agent's name is Strands' `gen_ai.agent.name`.
- an answer's finish reason on its output message (`llm.output_messages.<i>.message.finish_reason`): the
  only place left for it, Strands' `gen_ai.choice` event being stripped.
- restatements, read on purpose and mapped to nothing: an agent span's question and answer as messages
  (`input.value` / `output.value` say them), its model, `llm.system` / `llm.provider` "strands-agents" (the
  SDK, not the model's provider) and its tools' names with a description made up from each
  (`llm.tools.<i>.tool.description` "Tool: <name>"); an event-loop cycle's (CHAIN) messages, which are its
  model call's; a tool span's call as an assistant input message and its id as `tool.call_id`; the graph
  node ids.
"""

from __future__ import annotations

from evalkit.trajectory.mappers.reader import SpanReader, dig, indexed, unflatten
from evalkit.trajectory.mappers.strands import SCOPE
from evalkit.trajectory.operations import LlmCall

# The agent span's: its turn's messages and model, the SDK as `llm.system` / `llm.provider`, its tools' names.
_AGENT_RESTATED = ("llm.input_messages.", "llm.output_messages.", "llm.model_name", "llm.system", "llm.provider",
                   "llm.tools.", "graph.node.")
# An event-loop cycle's: its model call's messages, the first user message or the answer's text as its I/O.
_CYCLE_RESTATED = ("llm.input_messages.", "llm.output_messages.", "input.value", "output.value", "graph.node.")
# A tool span's: the model's call of it as an input message, and the call's id (Strands' `gen_ai.tool.call.id`).
_TOOL_RESTATED = ("llm.input_messages.", "tool.call_id", "graph.node.")


def is_converted(reader: SpanReader) -> bool:
    """A span of Strands' tracer that carries OpenInference's attributes: the processor rewrote it."""
    return reader.span.scope_name == SCOPE


def consume(reader: SpanReader, kind: str) -> None:
    """Read the processor's restatements of a span of this `kind` (`openinference.span.kind`)."""
    if not is_converted(reader):
        return
    restated = {"AGENT": _AGENT_RESTATED, "CHAIN": _CYCLE_RESTATED, "TOOL": _TOOL_RESTATED}.get(kind, ("graph.node.",))
    reader.consume_prefix(*restated)


def agent_name(reader: SpanReader) -> str | None:
    """The agent's name for a converted agent span (Strands' own), not the processor's `strands_agent`."""
    return reader.text("gen_ai.agent.name") if is_converted(reader) else None


def llm_call(reader: SpanReader, call: LlmCall) -> LlmCall:
    """A converted call with the finish reasons of its output messages (the processor writes no `llm.finish_reason`)."""
    if not is_converted(reader) or call.finish_reasons:
        return call
    messages = unflatten(reader.prefixed("llm.output_messages."))
    reasons = [dig(message, "message", "finish_reason") for message in indexed(messages)]
    call.finish_reasons = [str(reason) for reason in reasons if reason]
    return call
