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

A handoff (langgraph-supervisor's, langgraph-swarm's) is a tool returning `Command(goto=<agent>, graph=PARENT)`,
read as any LangChain tracer records it in `langgraph_handoffs`: the tracer records the tool's metadata (the
`metadata` attribute, where the handoff's destination is) and the Command (`{"graph", "update", "resume", "goto"}`)
as the tool's output, the `ParentCommand` leaving the agent's graph as an exception of a run it still ends OK, and a
call's messages serialised as LangChain's `dumpd` writes them (`input.value`), with langgraph-supervisor's
transfer-back pair marked in their `response_metadata`.

A map-reduce graph's branches (a conditional edge's `Send`s, each a run of a node on a state of its own, at once) are
each a subagent named after its node (`langgraph_branches`).

Human in the loop (`langgraph_interrupts`): a node calling `interrupt()` (HumanInTheLoopMiddleware's `after_model`)
ends its run OK with the `GraphInterrupt` recorded as an exception event, the request in its message; the application
resumes the thread with `Command(resume=…)`, the input of the graph's next run.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import langchain_media, langgraph_branches, langgraph_handoffs, langgraph_interrupts
from evalkit.trajectory.mappers.langchain import serialized_kwargs, serialized_messages
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import STATUS_ERROR

OPENINFERENCE_SCOPE = "openinference.instrumentation.langchain"


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
    if _is_legacy_agent_graph(reader, metadata) or langgraph_branches.is_branch(reader, metadata):
        return "AGENT"  # a map-reduce branch (a node run a `Send` started) a subagent of its own
    if kind == "AGENT" and "langgraph_node" in metadata and metadata.get("lc_agent_name") != reader.span.name:
        return "CHAIN"  # the outermost graph's run keeps its kind: it is no node of another graph
    return kind


def graph_run(run: AgentRun, reader: SpanReader) -> AgentRun:
    """An agent graph's run: a legacy graph's is named by its span (the graph's name), a map-reduce branch's by its
    node (`langgraph_branches`). A handoff's Command
    leaves the graph as a `ParentCommand` raised to the parent graph, which the tracer records as an exception
    of a run it still ends OK: LangGraph's way of going to another node, no failure."""
    if run.name is None and _is_legacy_agent_graph(reader, _metadata(reader)):
        run.name = reader.span.name
    if run.name is None and langgraph_branches.is_branch(reader, _metadata(reader)):
        run = langgraph_branches.branch_run(run, reader.span.name)
    answer = langgraph_interrupts.resume_answer(reader.span.attributes.get("input.value"))
    if answer is not None:
        # A Command resuming the thread: no question, the person's answer to what the run before it asked.
        run.resumed_with, run.input_text = answer, None
    error = run.error
    if error is not None and reader.span.status_code != STATUS_ERROR and langgraph_handoffs.left_for_parent(error):
        run.error = None
    return run


def tool(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    """A tool's run, read with the metadata the tracer recorded for it: a handoff tool's is a handoff, a Command's
    result the ToolMessage its update ends with (`langgraph_handoffs.tool`); a ToolMessage of content blocks holding
    an image, its parts (`langchain_media`)."""
    execution = langgraph_handoffs.tool(execution, _metadata(reader))
    execution.result_parts = langchain_media.tool_result_parts(execution.result)
    return execution


def drop_handoff_back(call: LlmCall, input_value: Any) -> None:
    """Take langgraph-supervisor's made-up transfer-back pair out of a call's input: the run it ends is the
    worker's, which the trajectory shows as the handoff call's subagent. Read from the call's serialised
    messages (`input.value`), the flattened ones having no `response_metadata`; only when both lists agree."""
    if not isinstance(input_value, str) or langgraph_handoffs.HANDOFF_BACK not in input_value:
        return
    serialized = serialized_messages(input_value, "messages")
    if not isinstance(serialized, list) or len(serialized) != len(call.input_messages):
        return
    kept = []
    for message, raw in zip(call.input_messages, serialized, strict=True):
        kwargs = serialized_kwargs(raw)
        if not langgraph_handoffs.is_handoff_back(kwargs.get("response_metadata") if kwargs is not None else None):
            kept.append(message)
    call.input_messages = kept
