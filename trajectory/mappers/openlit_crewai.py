"""OpenLIT's CrewAI instrumentation (scope `openlit.instrumentation.crewai`), as it records a crew's run.

It wraps CrewAI's classes (openlit/instrumentation/crewai: `WORKFLOW_OPERATIONS`, `DETAILED_OPERATIONS`) and
names each span `<gen_ai.operation.name> <entity>`:

- `Crew.kickoff`: `invoke_workflow <crew name>`, `gen_ai.workflow.name`, the process as
  `gen_ai.execution.mode`, the crew's agents and task count (`gen_ai.crewai.crew.*`), its result
  (`str(CrewOutput)`, the raw text) in `gen_ai.output.messages`, and CrewOutput's token summary as
  `gen_ai.usage.*` (every call of the crew again: its LLM calls' spans count them). The crew orchestrates
  agents: its run is the session's agent, each task's agent a subagent (as `crewai.py` reads the
  OpenInference and OpenLLMetry shapes). CrewAI's default crew name, `crew`, names nothing: then the
  service's.
- `Task._execute_core` and `Agent.kickoff`: `invoke_agent <role>`, the agent's `gen_ai.agent.name` and
  `gen_ai.agent.id`, the task description as `gen_ai.input.messages`, its result (`str(TaskOutput)`) as
  `gen_ai.output.messages`, the agent's tools as `gen_ai.tool.definitions` and its backstory as
  `gen_ai.system_instructions`. The backstory is one line of the system prompt CrewAI builds ("You are
  <role>. <backstory>\\nYour personal goal is: …"), which the call spans record whole: not a system
  message of its own.
- `Flow.kickoff` and `Flow._execute_method`: `invoke_workflow <flow>` and `invoke_agent <method>`. CrewAI
  1.x runs each agent's loop as a Flow of its own (`AgentExecutor`: `generate_plan`,
  `call_llm_native_tools`, `execute_native_tool`, `finalize`, …), so every task's span holds an
  `invoke_workflow AgentExecutor` span and a dozen method spans. The methods are coroutines and the wrapper
  is synchronous: each span ends as its coroutine is made (microseconds, before the model call it stands
  for, which is its sibling) with the coroutine's repr as output (`<coroutine object
  Flow._execute_method at 0x…>`). They name no agent's id (`_set_flow_attributes` sets none) and are no
  agent: not runs, not steps; what runs under the flow is the enclosing agent's.
- `BaseTool.run`: `execute_tool <name>` (no call id), arguments and result as `gen_ai.tool.call.*` and the
  result again as `gen_ai.output.messages`; one that raised has `error.type`, its status and exception
  events alone. A `@tool` function's `Tool` overrides `run`: it runs with no span.
- `Crew.__init__`: a `create_agent <role>` span per agent, each the root of a trace of its own (no session:
  setting an agent up is no agent's work).

Every span also restates the provider (`crewai`), the agent's model (`gen_ai.request.model` /
`gen_ai.response.model`, carried down to tool spans), a guessed `server.*` and the duration: bookkeeping.
"""

from __future__ import annotations

from collections.abc import Sequence

from evalkit.trajectory.mappers import crewai, otel_genai
from evalkit.trajectory.mappers.messages import parse_messages
from evalkit.trajectory.mappers.reader import SpanReader, as_text
from evalkit.trajectory.operations import AgentRun, Operation
from evalkit.trajectory.span import LogRecord, Span

SCOPE = "openlit.instrumentation.crewai"
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model",
                "gen_ai.response.finish_reasons")
_CREW_SETTINGS = ("gen_ai.execution.mode", "gen_ai.crewai.crew.agents", "gen_ai.crewai.crew.task_count")


def is_crewai(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord], emitter: str) -> Operation | None:
    reader.consume(*otel_genai.IDENTITY_KEYS)  # the agent's name, id and description: the builder's, as GenAI's
    operation = otel_genai.operation_name(reader)
    if operation == "invoke_workflow" and reader.has(*_CREW_SETTINGS):
        return _crew_run(reader, emitter)
    if operation == "invoke_agent" and reader.has("gen_ai.agent.id"):
        return _agent_run(reader, emitter)
    if operation in ("invoke_workflow", "invoke_agent"):
        # A Flow's kickoff or one of its methods (CrewAI's own agent loop is one): no agent, no step.
        reader.consume("gen_ai.workflow.name", "gen_ai.output.messages", *_BOOKKEEPING)
        return None
    if operation == "create_agent":
        reader.consume_prefix("gen_ai.")
        return None
    found = otel_genai.map_span(reader, logs)  # a tool's execution
    if found is not None:
        found.emitter = emitter
    # A tool span's result again, as an output message.
    reader.consume("gen_ai.output.messages", *_BOOKKEEPING)
    return found


def _output_text(reader: SpanReader) -> str | None:
    """A crew's or task's result: the text of its one output message."""
    messages = parse_messages(reader.get("gen_ai.output.messages"), "assistant")
    return messages[-1].text if messages else None


def _crew_run(reader: SpanReader, emitter: str) -> AgentRun:
    run = otel_genai.agent_run(reader, emitter)  # its `gen_ai.usage.*` read as an agent span's: not counted
    run.name = crewai.crew_name(reader.text("gen_ai.workflow.name")) or as_text(
        reader.span.resource_attributes.get("service.name"))
    run.output_text = _output_text(reader)
    reader.consume("gen_ai.workflow.name", "gen_ai.output.messages", *_CREW_SETTINGS, *_BOOKKEEPING)
    return run


def _agent_run(reader: SpanReader, emitter: str) -> AgentRun:
    run = otel_genai.agent_run(reader, emitter)
    run.system_instructions = []  # the backstory, a line of the prompt its calls record whole
    run.output_text = _output_text(reader)
    reader.consume("gen_ai.system_instructions", "gen_ai.output.messages", *_BOOKKEEPING)
    return run
