"""Microsoft Agent Framework's own telemetry (`agent_framework.observability`, scope `agent_framework`).

Its `invoke_agent <name>`, `chat <model>` and `execute_tool <function>` spans are the GenAI conventions
(the latest by default, v1.36 with `OTEL_SEMCONV_STABILITY_OPT_IN` not naming `gen_ai_latest_experimental`),
read by the GenAI mapper; with sensitive data on, each call's messages are also v1.36 event log records
(`gen_ai.user.message`, … `gen_ai.choice`), which the GenAI mapper reads only when the span has none. What
is the framework's own bookkeeping, read here so that it is not reported unmapped:

- `server.address` on a call is the client's base URL (`service_url`), `agent_framework.function.
  invocation.duration` on a tool span its duration: neither is a step's;
- an `invoke_agent` span restates its run: `gen_ai.provider.name` (v1.36: `gen_ai.system`) is the framework
  (`microsoft.agent_framework`, `AGENT_PROVIDER_NAME`), not the model's provider; `gen_ai.output.messages` is
  the run's response (every call's answer and tool result, each also on its own span), the finish reasons
  and response id its last call's, `gen_ai.request.*` the agent's default options its calls were asked with
  (`gen_ai.request.choice.count` 1 on every span). Its calls' spans are always under it: the agent's chat
  client carries the same telemetry layer. Of the response, only its tool results are read
  (`AgentRun.tool_results`): a handoff orchestration's middleware answers a `handoff_to_<agent>` call itself
  (`{"handoff_to": "<agent>"}`, its `MiddlewareTermination` ending the run) with no `execute_tool` span, and the
  agent span's response is the one record of that answer.

Its workflows (`agent_framework._workflows`: `WorkflowBuilder` and the orchestrations built on it, such as
`HandoffBuilder`) are traced by the same layer. A run is an `invoke_workflow <name>` span (operation
`invoke_workflow`, the workflow's name `gen_ai.workflow.name` when it was given one), each message an executor
handles an `executor.process <executor>` span under it, with `message.send` (a message sent, to every edge or to
`message.destination_executor_id`) and `edge_group.process <kind>` (a message routed) spans; `workflow.build` is
the builder's, in a trace of its own. An agent's executor runs it inside its `executor.process` span, so a
workflow run's agent runs lie side by side under it, in the order the workflow ran them. Read as nothing, the
run left its agents' runs side by side with no run above them: one trajectory named for the first, the others'
system prompts steps in its middle, a handoff's receiving agent's work the delegating one's. The run is the
orchestrator's, an agent the app built (`AgentRun.app_agent`): the trajectory, each agent run a subagent it
delegated to, in order. The run records no input or output (the user's message is in each agent's trajectory),
and the routing spans are the workflow's bookkeeping, no steps.

A group chat whose manager is an agent (`GroupChatBuilder(orchestrator_agent=…)`) has no executor for it: the
workflow's start executor is an `AgentBasedGroupChatOrchestrator` (its id the manager's name, `executor.type` on its
`executor.process` spans) that runs the manager itself, each round, inside its own `executor.process` span, and acts
on its answer (the JSON `{terminate, reason, next_speaker, final_message}`: the chosen participant's executor runs
next). The participants are not asked to decide and the manager is no participant (the valid names it is given are
the participants'); its conversation is the group's, carried on across rounds and runs (its session re-sends every
earlier decision and what each participant answered). Read as an agent's run, each round was a subagent `manager`
the workflow delegated to beside the participants, re-showing the whole conversation each time. Its runs are the
orchestrator's own (`orchestrator_runs`): its calls the workflow's steps, each decision answered by the run of the
participant it chose; what a participant said, re-sent to the manager (as an assistant message, its author dropped),
is that delegation's result, not a message of the workflow's again (the builder's rule for a delegated run's answer).

Magentic (`MagenticBuilder(manager_agent=…)`) is alike: its start executor, a `MagenticOrchestrator` (id
`magentic_orchestrator`), runs the manager agent inside its own `executor.process` spans, each call on a fresh session
with the context the orchestrator keeps: the facts survey and the plan (the task ledger), a JSON progress ledger each
round (whether the request is satisfied, who acts next, the instruction it is given), then the final answer, the
workflow's output. Its runs are the orchestrator's own too: the workflow's steps, each ledger that chose a participant
answered by its run. The manager is shown each participant's whole response (its tool calls and their results, then
its answer) and the instruction it gave it as its own (assistant) message: that delegation's work and request, in the
participant's trajectory, not the workflow's steps again (the builder's rules for a delegated run's work).
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import parse_messages
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, Operation
from evalkit.trajectory.span import LogRecord, Span

NAME = "agent-framework"
SCOPE = "agent_framework"
WORKFLOW_OPERATION = "invoke_workflow"
_WORKFLOW_NAME = "gen_ai.workflow.name"
# The workflow's bookkeeping: its identity and definition (on `invoke_workflow` and `workflow.build`), which executor
# handled which message (`executor.process`), how messages were sent and routed (`message.send`,
# `edge_group.process`).
_WORKFLOW_BOOKKEEPING = (
    "workflow.id",
    "workflow.description",
    "workflow.definition",
    "workflow_builder.name",
    "workflow_builder.description",
    "executor.id",
    "executor.type",
    "message.type",
    "message.payload_type",
    "message.source_id",
    "message.target_id",
    "message.destination_executor_id",
    "edge_group.type",
    "edge_group.id",
    "edge_group.delivered",
    "edge_group.delivery_status",
)
# A run's or a build's failure, as events beside the exception (`error.type`, `error.message`; `build.error.*`).
_WORKFLOW_ERROR_EVENTS = ("workflow.error", "build.error")
# The orchestrators that run an agent of their own to decide each round (their `executor.type`): an agent-managed group
# chat's, and Magentic's (its `StandardMagenticManager`'s agent: the plan, each progress ledger, the final answer).
_ORCHESTRATORS_RUNNING_AN_AGENT = frozenset({"AgentBasedGroupChatOrchestrator", "MagenticOrchestrator"})
_RESTATED_BY_AGENT_SPAN = (
    "gen_ai.provider.name",
    "gen_ai.system",
    "gen_ai.output.messages",
    "gen_ai.response.finish_reasons",
    "gen_ai.response.id",
)


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("server.address", "agent_framework.function.invocation.duration", *_WORKFLOW_BOOKKEEPING)
    reader.read_events(*_WORKFLOW_ERROR_EVENTS)
    if reader.text("gen_ai.operation.name") == WORKFLOW_OPERATION:
        return workflow_run(reader)
    operation = otel_genai.map_span(reader, logs)
    if operation is None:
        return None
    operation.emitter = NAME
    if isinstance(operation, AgentRun):
        operation.tool_results = [part for message in parse_messages(reader.get("gen_ai.output.messages"), "assistant")
                                  for part in message.tool_results]
        reader.consume(*_RESTATED_BY_AGENT_SPAN)
        reader.consume_prefix("gen_ai.request.")
    return operation


def workflow_run(reader: SpanReader) -> AgentRun:
    """A workflow's run: the orchestrator, its agents' runs its subagents (see above)."""
    reader.consume(*otel_genai.IDENTITY_KEYS)
    return AgentRun(span=reader.span, emitter=NAME, name=reader.text(_WORKFLOW_NAME), error=span_error(reader),
                    app_agent=True)


def orchestrator_runs(spans: Sequence[Span]) -> set[tuple[str, str]]:
    """The agent spans an orchestrator ran as its own decision (see above), by (trace id, span id): each an
    `invoke_agent` span right under an `executor.process` span of an orchestrator that runs an agent."""
    orchestrating = {(span.trace_id, span.span_id) for span in spans
                     if span.scope_name == SCOPE and span.name.startswith("executor.process")
                     and span.attributes.get("executor.type") in _ORCHESTRATORS_RUNNING_AN_AGENT}
    if not orchestrating:
        return set()
    return {(span.trace_id, span.span_id) for span in spans
            if (span.trace_id, span.parent_span_id) in orchestrating
            and span.attributes.get("gen_ai.operation.name") == "invoke_agent"}
