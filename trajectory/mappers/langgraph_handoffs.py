"""LangGraph's handoffs between agents, as a LangChain tracer records them, whichever it is (OpenInference's,
OpenLLMetry's): the handoff tool, the Command it returns, the ParentCommand that Command leaves the agent's graph with
and langgraph-supervisor's made-up transfer-back pair. Each tracer's module reads where its tracer puts them
(`langgraph_openinference`, `openllmetry_langgraph`) and hands them here.

langgraph-supervisor and langgraph-swarm hand over with a tool returning `Command(goto=<agent>, graph=PARENT)`: the
agent runs as the next node of the outer graph, beside the run handing over, not under the tool. The tool's run
names the agent in the metadata LangChain gives it (`__handoff_destination`, langgraph_supervisor.handoff's
METADATA_KEY_HANDOFF_DESTINATION; langgraph-swarm's handoff tools use the same key), and its output is the Command,
whose update ends with the ToolMessage the model is shown. Any tool may return a `Command(update=…)` to change the
graph's state as well as answer (LangGraph's "update state from tools": Deep Agents' `write_todos` and `task`): the
model is shown the ToolMessage its update ends with too.

A `Command(graph=PARENT)` leaves the agent's graph as a `ParentCommand` raised to the parent graph: LangGraph's way of
going to another node, which the tracers record as an exception of the agent's run, no failure.

When a supervisor's worker is done, langgraph-supervisor appends a made-up pair to the shared history
(`create_handoff_back_messages`: an AIMessage calling `transfer_back_to_<supervisor>` and its ToolMessage, both
`response_metadata.__is_handoff_back`): no model made that call and no tool ran it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from evalkit.trajectory.mappers import tool_results
from evalkit.trajectory.operations import ErrorInfo, ToolExecution

HANDOFF_DESTINATION = "__handoff_destination"  # langgraph_supervisor.handoff.METADATA_KEY_HANDOFF_DESTINATION
HANDOFF_BACK = "__is_handoff_back"  # langgraph_supervisor.handoff.METADATA_KEY_IS_HANDOFF_BACK
PARENT_COMMAND = "langgraph.errors.ParentCommand"
_TOOL_MESSAGE = "langchain.ToolMessage"  # `tool_results.unwrap`'s wrapper: a ToolMessage in either serialisation


def tool(execution: ToolExecution, metadata: Mapping[str, Any]) -> ToolExecution:
    """A tool's run, given the metadata LangChain ran it with: a handoff tool's (`__handoff_destination`) is a
    handoff to that agent. A tool returning a Command is shown to the model as its update's ToolMessage: that is the
    result, for the call it names."""
    destination = metadata.get(HANDOFF_DESTINATION)
    if isinstance(destination, str) and destination:
        execution.handoff_to = destination
    command = execution.result
    update = command.get("update") if isinstance(command, dict) and "goto" in command else None
    messages = update.get("messages") if isinstance(update, dict) else None
    shown = messages[-1] if isinstance(messages, list) and messages else None
    output = tool_results.unwrap(shown) if isinstance(shown, dict) else None
    if output is not None and output.wrapper == _TOOL_MESSAGE:
        execution.result = shown
        if output.call_id:
            execution.call_id = output.call_id
    return execution


def left_for_parent(error: ErrorInfo) -> bool:
    """Whether an agent run's error is only the `ParentCommand` a handoff's Command left its graph with."""
    return bool(error.exceptions) and all(exception.get("type") == PARENT_COMMAND for exception in error.exceptions)


def is_handoff_back(response_metadata: Any) -> bool:
    """Whether a message is one of langgraph-supervisor's made-up transfer-back pair, by its `response_metadata`."""
    return isinstance(response_metadata, dict) and response_metadata.get(HANDOFF_BACK) is True
