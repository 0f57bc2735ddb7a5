"""A LlamaIndex `AgentWorkflow` (agents handing off to each other): its `handoff` tool, and which agent each of its
steps is as OpenInference's llama-index instrumentation records them (OpenLLMetry's records: `openllmetry_llamaindex`).

An AgentWorkflow gives each agent that may hand off LlamaIndex's `handoff` tool, `to_agent` the agent that takes the
conversation over (the Context keeps it the current agent, into the next run of the workflow too). It makes no span
per agent: every step of every agent (`init_run`, `setup_agent`, `run_agent_step` holding the model's call,
`parse_agent_output`, `call_tool` holding the tool's, `aggregate_tool_results`) is a span beside the others under the
workflow's, the agent named only in the step's event: OpenInference writes the event a step got (`input.value`, JSON
of its bound arguments, `ev` the event's repr) and the one it returned (`output.value`, the repr, cut short when
long), whose `current_agent_name='…'` is the agent then current. The builder makes a handoff's following steps the
receiving agent's run (`registry.Emitter.step_agents`).

A single workflow agent's run (`FunctionAgent.run`, `ReActAgent.run`: a CHAIN span, no AGENT one) is the same
workflow with one agent, its steps (`BaseWorkflowAgent.setup_agent`, …) the spans under the run's, and names its agent
nowhere else: the run's own output is its StopEvent's repr cut short before the AgentOutput's `current_agent_name`.
The steps' events name it (`FunctionAgent(name=…)`), and the session's agent is named so (`lone_agent`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span

OPENINFERENCE_SCOPE = "openinference.instrumentation.llama_index"
HANDOFF_TOOL = "handoff"  # `llama_index.core.agent.workflow.multi_agent_workflow.handoff`
_WORKFLOW_RUN = "AgentWorkflow.run"  # `{class name}.{method}`: the run, its steps the spans under it
_RUN = ".run"  # any workflow's run (`Workflow.run`), a single agent's named for its class (`FunctionAgent.run`)
# The field as a pydantic event's repr writes it (a name holding no quote); the last in a text is the event's own,
# its messages before it.
_CURRENT_AGENT = re.compile(r"current_agent_name='([^']+)'")


def handoff_target(tool: str | None, arguments: Any) -> str | None:
    """The agent a call of LlamaIndex's `handoff` tool hands the conversation to; None for any other call."""
    target = arguments.get("to_agent") if tool == HANDOFF_TOOL and isinstance(arguments, dict) else None
    return target if isinstance(target, str) and target else None


def openinference_tool(execution: ToolExecution) -> ToolExecution:
    """A tool's span (`FunctionTool.acall`): the `handoff` tool's a handoff to the agent its arguments name."""
    execution.handoff_to = handoff_target(execution.name, execution.arguments)
    return execution


def step_agents(spans: Sequence[Span]) -> dict[tuple[str, str], str | None]:
    """Each step span of an AgentWorkflow run and the agent its events name: the one it returned (the agent current
    after it: `aggregate_tool_results` returns the receiving agent's input after a handoff), else the one it got;
    None for a step whose events name none (`call_tool`'s ToolCall, a step that returned nothing)."""
    runs = {(span.trace_id, span.span_id) for span in spans
            if span.name == _WORKFLOW_RUN and span.scope_name == OPENINFERENCE_SCOPE}
    if not runs:
        return {}
    return {(span.trace_id, span.span_id): _named(span.attributes.get("output.value"))
            or _named(span.attributes.get("input.value"))
            for span in spans if (span.trace_id, span.parent_span_id) in runs}


def _named(text: Any) -> str | None:
    found = _CURRENT_AGENT.findall(text) if isinstance(text, str) else None
    return found[-1] if found else None


def lone_agent(spans: Sequence[Span]) -> str | None:
    """The agent a single workflow agent's run names (any workflow's run but an AgentWorkflow's, whose agents take
    turns): the first its steps' events name, None where no step of such a run names one (a workflow of no agent's,
    whose events have no `current_agent_name`)."""
    runs = {(span.trace_id, span.span_id) for span in spans
            if span.scope_name == OPENINFERENCE_SCOPE and span.name.endswith(_RUN) and span.name != _WORKFLOW_RUN}
    if not runs:
        return None
    return next((name for span in spans if (span.trace_id, span.parent_span_id) in runs
                 and (name := _named(span.attributes.get("output.value"))
                      or _named(span.attributes.get("input.value")))), None)
