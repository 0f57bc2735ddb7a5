"""LangGraph's map-reduce branches, as the LangChain tracers record them: each a subagent of its own.

A conditional edge returning `Send(node, arg)`s (the Graph API's map-reduce) runs the node once per `Send`, at once,
each run on the `arg` it was sent (its own state, not the graph's). LangGraph marks such a run a push
(`metadata.langgraph_triggers == ["__pregel_push"]`, `metadata.langgraph_node` its node) and a tracer records the run
with its metadata and the `arg` as its input: OpenInference's as a CHAIN span named after its node (`metadata`,
`input.value`), OpenLLMetry's as an `execute_task <node>` span (`traceloop.entity.name` the node, the metadata key by
key as association properties, the `arg` its entity input's `inputs`: `openllmetry_langgraph`). A branch calling a
model holds a conversation of its own, beside its siblings': read as one agent's steps they interleave in the order
the calls started (one branch's tool call after another's answer, its instructions shown once for all). Each branch
is an agent run instead, named after its node, a subagent of the graph: its instructions, its question, its calls and
results in its own trajectory, its last answer the branch's result.

`create_agent` dispatches each tool call to its ToolNode by a `Send` too, its span under the agent's graph
(`metadata.lc_agent_name`); a legacy ToolNode's push is sent the tool call (a list of them, or LangGraph's
`{"__type": "tool_call_with_context", …}`). Neither is a branch: a tool's run answers its call in the agent's
trajectory.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun

_PUSH = ["__pregel_push"]  # LangGraph's trigger of a node run a `Send` started (langgraph/_internal/_constants.py)


def is_branch(reader: SpanReader, metadata: dict[str, Any]) -> bool:
    """Whether the span is a node's run a `Send` started on a state of its own, no agent's tool node, as OpenInference
    records it: the span named after the run, its input what it was sent."""
    return is_sent_node_run(metadata, reader.span.name, parse_json(reader.span.attributes.get("input.value")))


def is_sent_node_run(metadata: dict[str, Any], run_name: str | None, sent: Any) -> bool:
    """Whether a run (its metadata, its name, what it was sent) is a node's run a `Send` started on a state of its
    own, no agent's tool node."""
    # A JSON list in OpenInference's metadata, an OTLP array attribute in OpenLLMetry's association properties.
    if list(metadata.get("langgraph_triggers") or ()) != _PUSH or "lc_agent_name" in metadata:
        return False
    if metadata.get("langgraph_node") != run_name:
        return False  # a run inside the node (its model call, a tool), which LangGraph's metadata names too
    return isinstance(sent, dict) and "__type" not in sent


def branch_run(run: AgentRun, node: str) -> AgentRun:
    """A branch's run, named after its node. What it was sent (the `Send`'s arg) and returned (its state update) are
    the graph's plumbing, no one's words: its question is its first call's, its answer its last call's."""
    run.name = node
    run.input_text = None
    run.output_text = None
    return run
