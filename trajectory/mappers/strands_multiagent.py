"""Strands Agents' multi-agent orchestrators (`strands.multiagent`): a Swarm's or a Graph's run is an agent run.

`Swarm` and `Graph` open one span per invocation (tracer.py `start_multiagent_span`: `invoke_swarm`,
`invoke_graph`, operation name the same), the root of the run's trace, carrying the orchestrator's
`trace_attributes` (the session id) and the task it was given; each node's agent is an `invoke_agent` span
under it, one after another (a swarm's handoff only records whom to run next; the swarm runs that agent once
the one handing off has finished; a graph runs a node once the nodes it depends on have, on a message it writes
from the task and their answers). Read as an agent run, the orchestrator is the trajectory: the task a user
step, each node's agent a subagent it delegated to, in the order they ran. Unread, its nodes' work was one
agent's, the first node's name on all of it, and the task was in no step. A graph keeps its node agents'
messages from one invocation to the next (a swarm resets them), so a node's later run re-sends its earlier
ones: copied context in that run's subagent. Checked against the `strands_native_swarm` and
`strands_native_graph` captures (a graph of two nodes one after the other: none of a batch run concurrently).

The task is recorded as the span's `gen_ai.user.message` event (`content`: the text, or a list task's content
blocks as JSON) under Strands' default conventions; under `gen_ai_latest_experimental` as
`gen_ai.input.messages` in a `gen_ai.client.inference.operation.details` event, or on the span itself with
`gen_ai_span_attributes_only`. The orchestrator's answer is recorded nowhere (1.62 never calls
`end_swarm_span`): its last node's is, as a run that delegated answers (build.py).
"""

from __future__ import annotations

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import prompt_text
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun

# operation name -> the orchestrator, as `start_multiagent_span(task, instance)` names it (`invoke_{instance}`)
ORCHESTRATORS = {"invoke_swarm": "swarm", "invoke_graph": "graph"}
_TASK_EVENT = "gen_ai.user.message"
_DETAILS = "gen_ai.client.inference.operation.details"
_INPUT = "gen_ai.input.messages"


def orchestrator_run(reader: SpanReader, emitter: str) -> AgentRun | None:
    """A Swarm's or Graph's invocation as an agent run named for its kind; None for any other span."""
    kind = ORCHESTRATORS.get(reader.text("gen_ai.operation.name") or "")
    if kind is None:
        return None
    # "strands-agents" (`gen_ai.provider.name` under the latest conventions): the framework, not a model's provider.
    reader.consume("gen_ai.system", "gen_ai.provider.name")
    return AgentRun(span=reader.span, emitter=emitter, name=kind, input_text=_task(reader), error=span_error(reader))


def _task(reader: SpanReader) -> str | None:
    if reader.has(_INPUT):
        return prompt_text(reader.get(_INPUT))
    for event in reader.span.events:
        if event.name == _DETAILS and _INPUT in event.attributes:
            reader.read_events(_DETAILS)
            return prompt_text(event.attributes[_INPUT])
        if event.name == _TASK_EVENT:
            reader.read_events(_TASK_EVENT)
            content = event.attributes.get("content")
            blocks = parse_json(content)
            # A text task is written as it is, a list task as its content blocks' JSON (the event says not which:
            # a text that is a JSON list reads as blocks).
            return prompt_text([{"role": "user", "content": blocks if isinstance(blocks, list) else content}])
    return None
