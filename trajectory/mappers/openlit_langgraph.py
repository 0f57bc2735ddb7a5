"""OpenLIT's LangGraph and LangChain instrumentations (scopes `openlit.instrumentation.langgraph` and
`openlit.instrumentation.langchain`, as of openlit 1.45), as they record a LangGraph agent's run.

The LangGraph one wraps LangGraph itself (openlit/instrumentation/langgraph):

- `Pregel.invoke` / `stream`: `invoke_workflow <graph>` (`… stream`), the graph's name as `gen_ai.workflow.name`, the
  thread id as `gen_ai.conversation.id`: one graph run, one turn of the conversation. The graph is the agent
  (`create_react_agent(…, name=…)` names it): its run, named so. What else it records restates the run's last call
  (model, tokens, response id) or is its own summary of the state (node and message counts, and as
  `gen_ai.output.messages` every assistant text of the state, earlier turns' too; streamed, every chunk's text
  concatenated, tool messages' too): not what the agent answered, which its last call says. `Pregel.stream` is
  wrapped twice (as `langgraph.pregel` and `langgraph.pregel.main` export it), so a streamed run is two such spans,
  one inside the other: the outer one holds the run and does nothing itself (the builder's synthetic root).
- each node added with `StateGraph.add_node` (a tool node aside): `invoke_agent <node>` (`gen_ai.agent.id` the node's
  name), the state's last three messages in and the node's last message out, that message's model and tokens.
  A node is a step of the graph, not an agent (`create_react_agent`'s model node is named `agent`): no run, no
  step; its model call is its `chat` span's.
- `StateGraph.compile`: `create_agent <graph>`, a trace of its own, the graph's nodes and edges: no step.

The LangChain one is a callback handler on every callback manager (openlit/instrumentation/langchain):

- `chat <model>`: the call, as the GenAI conventions say (`trajectory/mappers/openlit.py` reads what is OpenLIT's).
  Its `gen_ai.input.messages` keep each message's role and content only (`build_input_messages_from_langchain`): an
  answer made of tool calls is an assistant message with empty text, and a tool message names no call. The empty
  message is left out (it says nothing; the answer is its own call's step); the results, whose ids are lost,
  come from the tool spans.
- `execute_tool <tool>`: the tool's run, its input as `str()` of the arguments dict (a Python repr), its output as
  `str()` of the ToolMessage ToolNode made (`content='…' name='…' tool_call_id='…'`, pydantic's `str`). The call id
  it sets is the callback's run id, replaced by the ToolMessage's `tool_call_id` when the tool returned: the run id
  of a tool that raised is no call's id (its call is found by name and arguments; what the model was shown for it,
  ToolNode's error text, is only in the next call's input).
- `invoke_agent <chain>` / `invoke_workflow <chain>`: a chain the handler names an agent for the word in its name (a
  node called `agent`) or a graph it saw start: LangGraph's own spans say what runs; no run, no step.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai, python_repr
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import parse_arguments
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

LANGGRAPH_SCOPE = "openlit.instrumentation.langgraph"
LANGCHAIN_SCOPE = "openlit.instrumentation.langchain"
_BOOKKEEPING = ("gen_ai.request.stream", "gen_ai.framework.error.message")
# A `chat` span restates its answer's tool calls, comma-joined (`common_chat_logic`).
_RESTATED_TOOL_CALLS = ("gen_ai.tool.name", "gen_ai.tool.call.id", "gen_ai.tool.call.arguments")


def is_langgraph(span: Span) -> bool:
    return span.scope_name in (LANGGRAPH_SCOPE, LANGCHAIN_SCOPE)


def map_span(reader: SpanReader, logs: Sequence[LogRecord], emitter: str) -> Operation | None:
    """One span of either instrumentation, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    operation = otel_genai.operation_name(reader)
    if reader.span.scope_name == LANGGRAPH_SCOPE:
        reader.consume_prefix("gen_ai.")  # a graph's or node's restatement of its calls (see above)
        return graph_run(reader, emitter) if operation == "invoke_workflow" else None
    if operation == "execute_tool":
        return tool_run(reader, emitter)
    if operation in ("invoke_agent", "invoke_workflow"):
        reader.consume_prefix("gen_ai.")  # the chain's input and output state, as Python reprs
        return None
    found = otel_genai.map_span(reader, logs)
    if isinstance(found, LlmCall):
        reader.consume(*_RESTATED_TOOL_CALLS)
        found.input_messages = [m for m in found.input_messages if not _emptied_answer(m)]
    return found


def graph_run(reader: SpanReader, emitter: str) -> AgentRun:
    """A graph's run: the agent's, named after the graph."""
    return AgentRun(span=reader.span, emitter=emitter, name=reader.text("gen_ai.workflow.name"),
                    model=reader.text("gen_ai.response.model"), error=span_error(reader))


def tool_run(reader: SpanReader, emitter: str) -> ToolExecution:
    """A tool's run: its arguments and the ToolMessage it returned read from their Python `str()`."""
    execution = otel_genai.tool_execution(reader, emitter)
    raw = reader.attributes.get("gen_ai.tool.call.arguments")
    arguments = python_repr.literal(raw)
    execution.arguments = arguments if isinstance(arguments, dict) else parse_arguments(raw)
    message = tool_message(reader.attributes.get("gen_ai.tool.call.result"))
    execution.result = message if message is not None else execution.result
    # The callback's run id unless the ToolMessage gave the model's call id (see above).
    execution.call_id = message["tool_call_id"] if message is not None else None
    return execution


def tool_message(value: Any) -> dict[str, Any] | None:
    """`str()` of a LangChain ToolMessage as the model dump `tool_results.unwrap` reads (content, call id, status);
    None for anything else (a tool's output that is no ToolMessage)."""
    fields = python_repr.model_fields(value) if isinstance(value, str) else None
    if fields is None or "content" not in fields or not isinstance(fields.get("tool_call_id"), str):
        return None
    return {"type": "tool", **fields}


def _emptied_answer(message: Message) -> bool:
    """An assistant message OpenLIT wrote with its tool calls dropped: no text, nothing else."""
    return message.role == "assistant" and all(part.kind == "text" and not part.text for part in message.parts)
