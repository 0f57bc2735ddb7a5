"""OpenLLMetry's LlamaIndex instrumentation (opentelemetry-instrumentation-llamaindex): a workflow agent's run and
its tool steps.

The instrumentation makes a span of every LlamaIndex dispatcher span: the run a `<workflow class>.workflow` span
(`traceloop.span.kind` workflow), each step and each call under it a `<class>.task` span (kind task), their
`traceloop.entity.input` / `traceloop.entity.output` the call's bound arguments and result as JSON (the input is
often missing: a step's arguments hold the workflow `Context`, which does not serialise). A call of llama-index's
`OpenAI` class makes no span of its own: opentelemetry-instrumentation-openai's `openai.chat` span is that call.

A workflow agent's `call_tool` step (`BaseWorkflowAgent.call_tool`, a task span like every other step) is where a
tool the model asked for runs. The instrumentation names the tool there (`tool.name`, `tool.arguments` as JSON), and
the step's output is LlamaIndex's `ToolCallResult`: `{tool_name, tool_kwargs, tool_id, tool_output, return_direct}`,
`tool_id` the id of the model's call and `tool_output` the `ToolOutput` LlamaIndex made of what the tool returned,
or of the exception it raised (`is_error`: the model is shown the exception's text as the result). That step is the
tool's execution. The `FunctionTool.task` span under it is the tool function's own call: it records no call id, and
for a tool that raised it is never exported (the instrumentation's `prepare_to_drop_span` does not end it); it stays a
task of the step.

A single agent's run (`FunctionAgent.workflow`) names no agent either, but its output, when recorded, is the
`StopEvent` of its run, `{"result": AgentOutput}`, whose `current_agent_name` is the agent's name (LlamaIndex's
`FunctionAgent(name=…)`); without it the session's agent is the service's name. A streamed run's workflow span
(0.62.4) records no output: no run, its steps the session agent's all the same.

An `AgentWorkflow` (agents handing off to each other) makes no span per agent: every step of every agent is an
`AgentWorkflow.task` beside the others under its one workflow span, the agent named only in step outputs
(`current_agent_name` of the AgentInput and AgentSetup a step returns, of the `run_agent_step` AgentOutput that holds
each `openai.chat` span, not recorded when streamed, and of the StopEvent's). The `handoff` tool's `call_tool` step is
a handoff (`llamaindex.handoff_target`), and `step_agents` names each step's agent: the builder makes the steps after
a handoff the receiving agent's run, a subagent the handoff call started (capture
`llamaindex_openllmetry_agent-workflow`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.llamaindex import handoff_target
from evalkit.trajectory.mappers.messages import parse_arguments
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, Operation, ToolExecution
from evalkit.trajectory.span import Span

SCOPE = "opentelemetry.instrumentation.llamaindex"  # `get_tracer(__name__)` of the instrumentation's package
_AGENT_WORKFLOW = "AgentWorkflow.workflow"  # `{class name}.workflow`: LlamaIndex's multi-agent workflow
TOOL_NAME = "tool.name"  # set on the `call_tool` step's span (and by the legacy agents' AgentToolCallEvent)


def map_entity(reader: SpanReader, kind: str | None, emitter: str) -> Operation | None:
    """A LlamaIndex agent's run or tool step; None for any other span (a task of no step, or not LlamaIndex's)."""
    if reader.span.scope_name != SCOPE:
        return None
    if kind == "task" and reader.has(TOOL_NAME):
        return tool_step(reader, emitter)
    if kind == "workflow":
        return agent_run(reader, emitter)
    return None


def agent_run(reader: SpanReader, emitter: str) -> AgentRun | None:
    """A single agent's run (`FunctionAgent.workflow`, `ReActAgent.workflow`, …): named by the agent its
    `AgentOutput` names (`current_agent_name`), its answer the output's response text.

    An `AgentWorkflow` is not one agent: its output names the agent that answered last, not the one it started
    with, and its input (which agent it started with) is not recorded. Nor is a workflow whose result is no
    agent's output."""
    if reader.span.name == _AGENT_WORKFLOW:
        return None
    output = parse_json(reader.get("traceloop.entity.output"))
    result = output.get("result") if isinstance(output, dict) else None
    if not isinstance(result, dict):
        return None
    name = result.get("current_agent_name")
    if not isinstance(name, str) or not name:
        return None
    reader.consume_prefix("traceloop.")
    return AgentRun(span=reader.span, emitter=emitter, name=name, output_text=_response_text(result),
                    error=span_error(reader))


def _response_text(result: dict[str, Any]) -> str | None:
    """The text of the AgentOutput's `response`, a ChatMessage dump (its text blocks)."""
    response = result.get("response")
    blocks = response.get("blocks") if isinstance(response, dict) else None
    if not isinstance(blocks, list):
        return None
    texts = [str(block["text"]) for block in blocks if isinstance(block, dict) and block.get("block_type") == "text"
             and isinstance(block.get("text"), str)]
    return "\n".join(texts) if texts else None


def tool_step(reader: SpanReader, emitter: str) -> ToolExecution:
    """The tool's execution: named by the step, its call id and result (a ToolOutput, which the builder unwraps to
    what the model was shown and whether it failed) from the step's ToolCallResult."""
    output = parse_json(reader.get("traceloop.entity.output"))
    call_result: dict[str, Any] = output if isinstance(output, dict) and "tool_output" in output else {}
    call_id = call_result.get("tool_id")
    arguments = parse_arguments(reader.get("tool.arguments"))
    if arguments is None:
        arguments = call_result.get("tool_kwargs")
    reader.consume("tool.description")  # the legacy agents' AgentToolCallEvent: the tool's docstring
    reader.consume_prefix("traceloop.")
    name = reader.text(TOOL_NAME) or call_result.get("tool_name")
    return ToolExecution(
        span=reader.span,
        emitter=emitter,
        name=name,
        call_id=call_id if isinstance(call_id, str) and call_id else None,
        arguments=arguments,
        result=call_result.get("tool_output"),
        error=span_error(reader),
        handoff_to=handoff_target(name, arguments),
    )


def step_agents(spans: Sequence[Span]) -> dict[tuple[str, str], str | None]:
    """Each step span of an AgentWorkflow (the task spans under its workflow span) and the agent its output names,
    None for a step whose output names none (a `call_tool` step's ToolCallResult, a step that returned nothing or
    whose output was not recorded)."""
    workflows = {(span.trace_id, span.span_id) for span in spans
                 if span.name == _AGENT_WORKFLOW and span.scope_name == SCOPE}
    if not workflows:
        return {}
    return {(span.trace_id, span.span_id): _current_agent(span)
            for span in spans if (span.trace_id, span.parent_span_id) in workflows and span.scope_name == SCOPE}


def _current_agent(step: Span) -> str | None:
    """The `current_agent_name` of the event a step returned: an AgentInput, AgentSetup or AgentOutput, or the
    StopEvent holding the last AgentOutput as its `result`."""
    output = parse_json(step.attributes.get("traceloop.entity.output"))
    event = output.get("result", output) if isinstance(output, dict) else None
    name = event.get("current_agent_name") if isinstance(event, dict) else None
    return name if isinstance(name, str) and name else None
