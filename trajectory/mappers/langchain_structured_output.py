"""LangChain v1 `create_agent`'s structured output (`response_format`) under OpenInference: the output tool's calls,
LangChain's answers to them, and the object the run answered.

`create_agent(..., response_format=ToolStrategy(Schema))` binds the schema as one more tool, named for it: the model
answers by calling it, and no tool runs. The agent's `model` node parses the arguments itself (`factory.py`,
`_handle_model_output`) and adds a ToolMessage answering the call to the state, beside the model's message:
"Returning structured response: …" with the parsed object as the state's `structured_response`, or, arguments that do
not validate, `handle_errors`' message ("Error: <the validation error>\\n Please fix your mistakes.", with no
`status="error"`) and the model asked again. `ProviderStrategy(Schema)` binds the provider's JSON-schema response
format instead: the model's text is the JSON, parsed into `structured_response`, and no ToolMessage is added.

OpenInference's LangChain tracer records the `model` node's run as a CHAIN span around the chat model's LLM span, its
`output.value` what the node returned: a list of Commands whose `update` holds the node's messages (the model's, then
LangChain's answers) and `structured_response` (null but on the call it was parsed from; the key only where the agent
has a response format). Nothing else records that LangChain, not a tool, answered the call: with no tool span, the
answers were results read from later calls' inputs, a rejected output's unflagged (the message carrying it says
"success"), and the last answer of a session none (no call re-sends it); the output tool was one of the agent's tools.

So (`complete_calls`, `complete_runs`, by the model node holding each call):
- the output tool's call stays the model's call, with its arguments (what the model answered and later calls re-send),
  marked `extra.output_tool` (no tool of the agent's: answered by the framework, nothing ran), and its definition is
  not the agent's (still in the step's `extra.request`, as the model was sent it);
- a call whose answer LangChain parsed holds the run's answer as its step's `extra.structured_output` (the object, as
  the update records it): ToolStrategy's accepted call, ProviderStrategy's JSON answer (its text stays the message);
- LangChain's answer rejecting an output is that call's result flagged as an error, as the model was shown it; its
  answer accepting one is the call's result, from the run's model node where no later call re-sends it.

Seen in a real capture: tests/captures/langgraph_openinference_structured-output (LangChain 1.5.2, langchain-openai
1.8.1, OpenInference's LangChain instrumentation 0.1.80).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from evalkit.trajectory.mappers.langgraph_openinference import OPENINFERENCE_SCOPE
from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Part
from evalkit.trajectory.span import Span

# create_agent's node calling the model (`factory.py`: `graph.add_node("model", …)`).
_MODEL_NODE = "model"
# The ATIF tool call's `extra` key marking the run's output tool, as pydantic-ai's (`pydantic_ai_output_tools.MARK`).
OUTPUT_TOOL = "output_tool"
# Only a node of an agent given a response format returns this key (its state schema's), so most spans are passed by
# this look at their text, never decoded.
_STRUCTURED_KEY = '"structured_response"'

SpanKey = tuple[str, str]


@dataclass
class _NodeOutput:
    """What a model node returned beyond the model's message: LangChain's answers to its output tool's calls (call
    id -> the ToolMessage's text), and the object parsed from the model's answer (None: nothing parsed)."""

    answers: dict[str, str] = field(default_factory=dict)
    answer_names: dict[str, str] = field(default_factory=dict)
    structured: Any = None


def _node_output(span: Span) -> _NodeOutput | None:
    """A create_agent model node's update, from its `output.value` (`[{"graph", "update", "resume", "goto"}]`); None
    for any other span."""
    if span.scope_name != OPENINFERENCE_SCOPE or span.name != _MODEL_NODE:
        return None
    value = span.attributes.get("output.value")
    if not isinstance(value, str) or _STRUCTURED_KEY not in value:
        return None
    commands = parse_json(value)
    updates = [c.get("update") for c in commands if isinstance(c, dict)] if isinstance(commands, list) else []
    found: _NodeOutput | None = None
    for update in updates:
        if not isinstance(update, dict) or "structured_response" not in update:
            continue
        found = found or _NodeOutput()
        if update["structured_response"] is not None:
            found.structured = update["structured_response"]
        messages = [m.get("data") for m in update.get("messages") or () if isinstance(m, dict)]
        asked = {str(c.get("id")) for m in messages if isinstance(m, dict) and m.get("type") == "ai"
                 for c in m.get("tool_calls") or () if isinstance(c, dict)}
        for message in messages:
            if isinstance(message, dict) and message.get("type") == "tool" and message.get("tool_call_id") in asked:
                # Added by the node itself, beside the call it answers: no tool ran.
                call_id = str(message["tool_call_id"])
                found.answers[call_id] = render(message.get("content"))
                found.answer_names[call_id] = str(message.get("name") or "")
    return found


def _node_outputs(spans: Sequence[Span]) -> dict[SpanKey, _NodeOutput]:
    found: dict[SpanKey, _NodeOutput] = {}
    for span in spans:
        output = _node_output(span)
        if output is not None:
            found[(span.trace_id, span.span_id)] = output
    return found


def _holding_node(span: Span, nodes: dict[SpanKey, _NodeOutput], by_key: dict[SpanKey, Span]) -> _NodeOutput | None:
    """The model node a call's span is under (its parent, or further up where a runnable wraps the model)."""
    key: SpanKey = (span.trace_id, span.parent_span_id or "")
    while key[1]:
        if key in nodes:
            return nodes[key]
        parent = by_key.get(key)
        if parent is None or parent.attributes.get("openinference.span.kind") == "AGENT":
            return None
        key = (parent.trace_id, parent.parent_span_id or "")
    return None


def _marked_output_calls(message: Message, call_ids: set[str]) -> Message:
    """`message` with its calls of the output tool marked; a new message (messages may be shared between calls)."""
    if not any(part.kind == "tool_call" and part.call_id in call_ids for part in message.parts):
        return message
    parts = [replace(part, extra={**(part.extra or {}), OUTPUT_TOOL: True})
             if part.kind == "tool_call" and part.call_id in call_ids else part for part in message.parts]
    return Message(message.role, parts, name=message.name)


def _flagged_rejections(message: Message, rejected: set[str]) -> Message:
    """`message` with LangChain's answers rejecting an output flagged as failed results; a new message."""
    if not any(part.kind == "tool_result" and part.call_id in rejected and not part.error for part in message.parts):
        return message
    parts = [replace(part, error=True) if part.kind == "tool_result" and part.call_id in rejected else part
             for part in message.parts]
    return Message(message.role, parts, name=message.name)


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each LangChain call of an agent with a response format given what its model node records: its output tool's
    calls marked, the object parsed from its answer, the rejections the later calls re-send flagged, the output tool's
    definition no tool of the agent's."""
    langchain = [call for call in calls if call.span.scope_name == OPENINFERENCE_SCOPE]
    nodes = _node_outputs(spans) if langchain else {}
    if not nodes:
        return
    by_key = {(span.trace_id, span.span_id): span for span in spans}
    output_tools: set[str] = set()
    rejected: set[str] = set()
    for call in langchain:
        node = _holding_node(call.span, nodes, by_key)
        if node is None:
            continue
        if node.structured is not None:
            call.extra["structured_output"] = node.structured
        answered = {part.call_id for message in call.output_messages for part in message.tool_calls
                    if part.call_id in node.answers}
        if not answered:
            continue
        call.output_messages = [_marked_output_calls(message, answered) for message in call.output_messages]
        names = (node.answer_names[call_id] for call_id in answered if call_id)
        output_tools.update(name for name in names if name)
        if node.structured is None:
            rejected.update(call_id for call_id in answered if call_id)
    for call in langchain:
        if output_tools:
            call.tool_definitions = [d for d in call.tool_definitions
                                     if (d.get("function") or {}).get("name") not in output_tools]
        if rejected:
            call.input_messages = [_flagged_rejections(message, rejected) for message in call.input_messages]


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """Each LangChain agent run given LangChain's answers accepting its output tool's calls, recorded only by its
    model nodes (`AgentRun.tool_results`: for a call no later input answers, the session's last)."""
    langchain = {(run.span.trace_id, run.span.span_id): run for run in runs
                 if run.span.scope_name == OPENINFERENCE_SCOPE}
    if not langchain:
        return
    for span in spans:
        run = langchain.get((span.trace_id, span.parent_span_id or ""))
        node = _node_output(span) if run is not None else None
        if run is None or node is None or node.structured is None:
            continue
        run.tool_results.extend(Part("tool_result", call_id=call_id, name=node.answer_names[call_id] or None,
                                     text=text) for call_id, text in node.answers.items())
