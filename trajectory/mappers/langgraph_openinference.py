"""LangGraph's graphs as OpenInference's LangChain tracer records them: which run is an agent's, a tool, a handoff.

The tracer names a span's kind AGENT for any run whose name contains "agent" (`_tracer.py`: `"agent" in
run.name.lower()`), whatever the run is, and by its run type otherwise. So the kind alone misleads:

- a tool run named so is AGENT (`transfer_to_booking_agent`, langgraph-supervisor's handoff tool);
- a graph's node is AGENT when its name says so: the legacy `create_react_agent`'s model node `agent`, and each
  node langgraph-supervisor's `create_supervisor` runs a worker in (named after the worker) with its
  `call_agent` wrapper inside;
- an agent's graph is AGENT or CHAIN by its name alone (`booking_agent`, `travel_supervisor`).

`create_agent` graphs say which runs are their agent's (`metadata.lc_agent_name`, read by `openinference.py`).
A legacy `create_react_agent` graph says nothing of the kind; what marks its run is where LangGraph ran it: a
graph added as a node (or invoked in a node named after it) runs as a subgraph, and LangGraph gives the subgraph
the namespace of the node running it (`metadata.checkpoint_ns` is the node's own `langgraph_checkpoint_ns`);
an agent's graph runs on a conversation (`{"messages": [...]}`). Its name is the agent's (`create_react_agent`'s
`name`, `create_supervisor`'s `supervisor_name`).

langgraph-supervisor hands over with a tool returning `Command(goto=<worker>, graph=PARENT)`: the worker runs as
the next node of the outer graph, beside the supervisor's run, not under the tool. The tool's run names the
worker (`metadata.__handoff_destination`, the tool's metadata; langgraph-swarm's handoff tools use the same key)
and its output is the Command, whose update ends with the ToolMessage the model is shown. When the worker is
done the library appends a made-up pair to the shared history (`create_handoff_back_messages`: an AIMessage
calling `transfer_back_to_<supervisor>` and its ToolMessage, both `response_metadata.__is_handoff_back`): no
model made that call and no tool ran it; the worker's run ending is its end.

Any tool may return a `Command(update=…)` to change the graph's state as well as answer (LangGraph's "update state
from tools"): the tracer records the Command (`{"graph", "update", "resume", "goto"}`) as the tool's output, and the
model is shown the ToolMessage its update ends with. Deep Agents' `write_todos` (the todos) and `task` (the subagent's
files, its last answer as the ToolMessage) answer so.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.langchain import serialized_kwargs, serialized_messages
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import STATUS_ERROR

OPENINFERENCE_SCOPE = "openinference.instrumentation.langchain"
_HANDOFF_DESTINATION = "__handoff_destination"  # langgraph_supervisor.handoff.METADATA_KEY_HANDOFF_DESTINATION
_HANDOFF_BACK = "__is_handoff_back"  # langgraph_supervisor.handoff.METADATA_KEY_IS_HANDOFF_BACK
_PARENT_COMMAND = "langgraph.errors.ParentCommand"


def _metadata(reader: SpanReader) -> dict[str, Any]:
    metadata = parse_json(reader.span.attributes.get("metadata"))
    return metadata if isinstance(metadata, dict) else {}


def _is_legacy_agent_graph(reader: SpanReader, metadata: dict[str, Any]) -> bool:
    """A subgraph's run on a conversation, named as the node running it, from a graph naming no agent
    (`lc_agent_name`): a legacy `create_react_agent`'s, or any agent graph a node runs as its subgraph."""
    namespace = metadata.get("checkpoint_ns")
    if "lc_agent_name" in metadata or not namespace or namespace != metadata.get("langgraph_checkpoint_ns"):
        return False
    if metadata.get("langgraph_node") != reader.span.name:
        return False
    state = parse_json(reader.span.attributes.get("input.value"))
    return isinstance(state, dict) and isinstance(state.get("messages"), list)


def span_kind(reader: SpanReader, kind: str) -> str:
    """The span's kind as LangGraph ran it: TOOL for a tool's run, AGENT for an agent graph's run, CHAIN for a
    run inside a graph the tracer marked AGENT by its name only (a node, a node's wrapper)."""
    if reader.has("tool.name"):
        return "TOOL"
    raw = reader.span.attributes.get("metadata")
    if kind == "CHAIN" and not (isinstance(raw, str) and "checkpoint_ns" in raw and "lc_agent_name" not in raw):
        return kind  # most spans: a chain no subgraph's run could be (looked for without decoding the metadata)
    if kind not in ("AGENT", "CHAIN"):
        return kind
    metadata = _metadata(reader)
    if _is_legacy_agent_graph(reader, metadata):
        return "AGENT"
    if kind == "AGENT" and "langgraph_node" in metadata and metadata.get("lc_agent_name") != reader.span.name:
        return "CHAIN"  # the outermost graph's run keeps its kind: it is no node of another graph
    return kind


def graph_run(run: AgentRun, reader: SpanReader) -> AgentRun:
    """An agent graph's run: a legacy graph's is named by its span (the graph's name). A handoff's Command
    leaves the graph as a `ParentCommand` raised to the parent graph, which the tracer records as an exception
    of a run it still ends OK: LangGraph's way of going to another node, no failure."""
    if run.name is None and _is_legacy_agent_graph(reader, _metadata(reader)):
        run.name = reader.span.name
    error = run.error
    if error is not None and reader.span.status_code != STATUS_ERROR and error.exceptions and all(
            exception.get("type") == _PARENT_COMMAND for exception in error.exceptions):
        run.error = None
    return run


def tool(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    """A handoff tool's run (`__handoff_destination`) is a handoff to that agent. A tool returning a Command (a
    handoff's, Deep Agents' `task` and `write_todos`) is shown to the model as its update's ToolMessage: that is the
    result, for the call it names."""
    destination = _metadata(reader).get(_HANDOFF_DESTINATION)
    if isinstance(destination, str) and destination:
        execution.handoff_to = destination
    command = execution.result
    update = command.get("update") if isinstance(command, dict) and "goto" in command else None
    messages = update.get("messages") if isinstance(update, dict) else None
    shown = messages[-1] if isinstance(messages, list) and messages else None
    if isinstance(shown, dict) and shown.get("type") == "tool":
        execution.result = shown
        data = shown.get("data")
        call_id = data.get("tool_call_id") if isinstance(data, dict) else None
        if isinstance(call_id, str) and call_id:
            execution.call_id = call_id
    return execution


def drop_handoff_back(call: LlmCall, input_value: Any) -> None:
    """Take langgraph-supervisor's made-up transfer-back pair out of a call's input: the run it ends is the
    worker's, which the trajectory shows as the handoff call's subagent. Read from the call's serialised
    messages (`input.value`), the flattened ones having no `response_metadata`; only when both lists agree."""
    if not isinstance(input_value, str) or _HANDOFF_BACK not in input_value:
        return
    serialized = serialized_messages(input_value, "messages")
    if not isinstance(serialized, list) or len(serialized) != len(call.input_messages):
        return
    kept = []
    for message, raw in zip(call.input_messages, serialized, strict=True):
        kwargs = serialized_kwargs(raw)
        metadata = kwargs.get("response_metadata") if kwargs is not None else None
        if not (isinstance(metadata, dict) and metadata.get(_HANDOFF_BACK) is True):
            kept.append(message)
    call.input_messages = kept
