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

Human in the loop (`langgraph_interrupts`): the callback has no `on_interrupt` (LangChain calls it and logs the
AttributeError), so a node calling `interrupt()` (HumanInTheLoopMiddleware's `after_model`) is recorded as a node run
that failed: its `execute_task` span ends in ERROR (`error.type` `GraphInterrupt`, `gen_ai.task.status` `failure`) with
the `GraphInterrupt` as its exception event, the request in its message, while the graph's runs end OK. The
application resumes the thread with `Command(resume=…)`: the graph's `<graph>.workflow` span records it as its input
(`traceloop.entity.input`'s `inputs`), a child of the `invoke_agent` span that is the agent's run. The tool node runs
a tool call inside the agent middleware's `wrap_tool_call`, after the tool's own run (its `execute_tool` span, whose
output is the tool's return) has ended: what the middleware makes of the return (HumanInTheLoopMiddleware prepends a
notice to the result of a call a reviewer edited) is only in the next chat call's input
(`openllmetry_langchain.read_call`).

A map-reduce graph's branches (a conditional edge's `Send`s, each a run of a node on a state of its own, at once) are
each a subagent named after its node (`langgraph_branches`). The instrumentation records such a run as any node's, an
`execute_task <node>` span (`traceloop.span.kind` task): the node in `traceloop.entity.name`, LangGraph's metadata
(`langgraph_triggers` `["__pregel_push"]`, `langgraph_node`) in its association properties, what it was sent (the
`Send`'s arg) its entity input's `inputs`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from evalkit.trajectory.mappers import langgraph_branches, langgraph_handoffs, langgraph_interrupts
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, Interrupt, ToolExecution
from evalkit.trajectory.span import Span

LANGCHAIN_SCOPE = "opentelemetry.instrumentation.langchain"
_RUN_METADATA = "traceloop.association.properties."
_EXCEPTION = "exception"
DEFAULT_GRAPH_NAME = "LangGraph"  # `Pregel.name`'s default: the name of a graph compiled without one
_RESUMING_INPUT = '{"inputs": {"graph"'  # a graph run's entity input that is a Command, as the callback dumps it


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


def branch(reader: SpanReader, emitter: str) -> AgentRun | None:
    """A node's run a `Send` started (a map-reduce branch): an agent run named after its node, a subagent of the
    graph's; None for any other node's run (a tool node's `Send` of a tool call is no branch)."""
    node = reader.text("traceloop.entity.name")
    entity_input = parse_json(reader.span.attributes.get("traceloop.entity.input"))
    sent = entity_input.get("inputs") if isinstance(entity_input, dict) else None
    if node is None or not langgraph_branches.is_sent_node_run(reader.prefixed(_RUN_METADATA), node, sent):
        return None
    return langgraph_branches.branch_run(AgentRun(span=reader.span, emitter=emitter, error=span_error(reader)), node)


def interrupt(reader: SpanReader, emitter: str) -> Interrupt | None:
    """A node's run that stopped the graph to ask a person (its `GraphInterrupt`), if it did; the ERROR it ended in is
    that stop, no failure."""
    paused = langgraph_interrupts.interrupt(reader, emitter)
    if paused is not None:
        reader.consume("error.type")
    return paused


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The session's agent runs resumed with a person's answer: the answer the graph's `workflow` span records as its
    input (a `Command(resume=…)`) is that of the `invoke_agent` run holding it (or of the workflow's own run)."""
    runs_by_key = {(run.span.trace_id, run.span.span_id): run for run in runs}
    for span in spans:
        raw = span.attributes.get("traceloop.entity.input")
        if span.scope_name != LANGCHAIN_SCOPE or not isinstance(raw, str) or not raw.startswith(_RESUMING_INPUT):
            continue
        record = parse_json(raw)
        answer = langgraph_interrupts.command_answer(record.get("inputs") if isinstance(record, dict) else None)
        run = runs_by_key.get((span.trace_id, span.span_id)) or runs_by_key.get((span.trace_id, span.parent_span_id))
        if answer is not None and run is not None and run.resumed_with is None:
            # No question: the person's answer to what the run before it asked.
            run.resumed_with, run.input_text = answer, None
