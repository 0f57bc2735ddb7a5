"""LangGraph's graphs as OpenLLMetry's LangChain instrumentation (opentelemetry-instrumentation-langchain 0.62) records
them: a handoff between agents, read by the rules every LangChain tracer shares (`langgraph_handoffs`).

The instrumentation is a LangChain callback handler plus wrappers around LangGraph's graphs. The callback records a
run's metadata key by key as association properties (`traceloop.association.properties.<key>`): a handoff tool's run
names the agent it hands to there (`__handoff_destination`). Its `execute_tool` span's output
(`traceloop.entity.output`, read by `openllmetry._decorated_tool`) is the tool's Command, the update's messages as
LangChain's `dumpd` serialises them. The graph wrappers open an `invoke_agent <agent>` span per agent graph's run and
end it in ERROR when the graph raises, a `ParentCommand` too: the status message is the Command, the exception event
`langgraph.errors.ParentCommand`, as on each `execute_task` span the Command leaves (the tools node, the agent's
node). They also open a `goto <node>` span for a Command going to another node (`langgraph.command.goto_node`,
`langgraph.command.source_node`): the same Command's destination, whatever node it goes to, so not what makes a
handoff.

The `invoke_agent` span is named for the graph's run name or else the graph's own (`graph.get_name()`), which for a
graph compiled without one (`StateGraph.compile()`, `create_agent` or Deep Agents' `create_deep_agent` given no
`name`) is LangGraph's default, `LangGraph`: no agent's name, as OpenInference's record of the same run names none.
"""

from __future__ import annotations

from evalkit.trajectory.mappers import langgraph_handoffs
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, ToolExecution

LANGCHAIN_SCOPE = "opentelemetry.instrumentation.langchain"
_RUN_METADATA = "traceloop.association.properties."
_EXCEPTION = "exception"
DEFAULT_GRAPH_NAME = "LangGraph"  # `Pregel.name`'s default: the name of a graph compiled without one


def consume(reader: SpanReader) -> None:
    """What a Command leaves on the spans it passes through, read: its `goto` span's nodes, and the `ParentCommand`
    a span ended with (its exception event and `error.type`), which is no failure."""
    reader.consume("langgraph.command.goto_node", "langgraph.command.source_node")
    events = [event for event in reader.span.events if event.name == _EXCEPTION]
    if events and all(event.attributes.get("exception.type") == langgraph_handoffs.PARENT_COMMAND for event in events):
        reader.read_events(_EXCEPTION)
        reader.consume("error.type")


def tool(execution: ToolExecution, reader: SpanReader) -> ToolExecution:
    """A tool's run, read with the metadata LangChain ran it with (its association properties): a handoff tool's is a
    handoff, a Command's result the ToolMessage its update ends with (`langgraph_handoffs.tool`)."""
    return langgraph_handoffs.tool(execution, reader.prefixed(_RUN_METADATA))


def agent_run(run: AgentRun) -> AgentRun:
    """An agent graph's run: one the handoff's Command left (its span ended in ERROR on the `ParentCommand`) did not
    fail; one of a graph compiled without a name (LangGraph's default) names no agent."""
    if run.error is not None and langgraph_handoffs.left_for_parent(run.error):
        run.error = None
    if run.name == DEFAULT_GRAPH_NAME:
        run.name = None
    return run
