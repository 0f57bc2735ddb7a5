"""OpenLIT's Agno instrumentation (scope `openlit.instrumentation.agno`, as of openlit 1.45), as it records a run.

It wraps Agno's classes (openlit/instrumentation/agno) and names each span `<gen_ai.operation.name> <entity>`; the
model calls are OpenLIT's OpenAI instrumentation's `chat` spans under them (`trajectory/mappers/openlit.py`):

- `Team.run` / `arun`: `invoke_workflow <team>`, the team's name as `gen_ai.workflow.name`, its members' names as
  `gen_ai.agno.team.agents`, the session as `gen_ai.conversation.id`, what it was asked and answered as
  `gen_ai.input.messages` / `gen_ai.output.messages`, its RunOutput's token totals as `gen_ai.usage.*` (every call of
  the run again, its members' too: the calls' spans count them) and run id as `gen_ai.response.id`. The team's
  leader is the agent whose calls run under it: its run, named after the team (as OpenInference's Agno spans name
  it). An Agno Workflow's `invoke_workflow` names no members: left to the GenAI reading.
- `Agent.run` / `arun`: `invoke_agent <agent>`, the agent's name and id, its instructions as
  `gen_ai.system_instructions`, its tools as `gen_ai.tool.definitions`, its input and its RunOutput's content. A
  team's member runs under the team's span. The instructions are a part of the system prompt Agno builds (`<your_role>
  …</your_role>` and the instructions), which its calls record whole: not a system message of their own.
- `FunctionCall.execute` / `aexecute`: `execute_tool <tool>`, with the model's call id, arguments and `str()` of the
  result (again as `gen_ai.output.messages`); one that raised is an error with the exception's text as `error.type`
  and no result (what the model was shown is in the next call's input). The wrapper ends the span when `execute`
  returns, so a tool returning a generator records the generator's repr (`<generator object …>`), not what Agno
  drains from it later and sends the model: no result. The team's `delegate_task_to_member` is such a generator:
  the member's run follows the tool's span beside it, under the team's, and its answer is the call's result
  (`ToolExecution.delegates_to`, the member's id from the call's arguments).
- `Agent.__init__`: `create_agent <agent>`, a trace of its own (no session): setting an agent up is no step.

Every span also carries OpenLIT's bookkeeping: the provider (`agno`), the agent's model (`gen_ai.request.model` /
`gen_ai.response.model`, on tool spans too), the duration, a tool's description and type.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from evalkit.trajectory.mappers import otel_genai
from evalkit.trajectory.mappers.messages import parse_messages
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, Operation, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

SCOPE = "openlit.instrumentation.agno"
DELEGATE_TOOL = "delegate_task_to_member"  # Agno's team tool: `member_id`, `task`
_TEAM_MEMBERS = "gen_ai.agno.team.agents"
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.response.id",
                "gen_ai.tool.description", "gen_ai.tool.type")
# `str()` of a generator or coroutine a tool returned, as `gen_ai.tool.call.result`.
_UNDRAINED = re.compile(r"<(?:async_)?(?:generator|coroutine) object .+ at 0x[0-9a-f]+>")


def is_agno(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord], emitter: str) -> Operation | None:
    """One span of the instrumentation's, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    operation = otel_genai.operation_name(reader)
    if operation == "invoke_workflow" and reader.has(_TEAM_MEMBERS):
        return team_run(reader, emitter)
    if operation == "invoke_agent":
        return agent_run(reader, emitter)
    if operation == "execute_tool":
        return tool_run(reader, emitter)
    if operation == "create_agent":
        reader.consume_prefix("gen_ai.")
        return None
    found = otel_genai.map_span(reader, logs)
    if found is not None:
        found.emitter = emitter
    return found


def team_run(reader: SpanReader, emitter: str) -> AgentRun:
    """A team's run: its leader's, named after the team."""
    run = otel_genai.agent_run(reader, emitter)  # its `gen_ai.usage.*` read as an agent span's: not counted
    run.name = reader.text("gen_ai.workflow.name")
    run.output_text = _output_text(reader)
    reader.consume("gen_ai.workflow.name", _TEAM_MEMBERS, "gen_ai.output.messages")
    return run


def agent_run(reader: SpanReader, emitter: str) -> AgentRun:
    run = otel_genai.agent_run(reader, emitter)
    run.system_instructions = []  # a part of the system prompt its calls record whole
    run.output_text = _output_text(reader)
    reader.consume("gen_ai.system_instructions", "gen_ai.output.messages")
    return run


def tool_run(reader: SpanReader, emitter: str) -> ToolExecution:
    execution = otel_genai.tool_execution(reader, emitter)
    reader.consume("gen_ai.output.messages")  # the result again
    if isinstance(execution.result, str) and _UNDRAINED.fullmatch(execution.result):
        execution.result = None
    if execution.name == DELEGATE_TOOL and isinstance(execution.arguments, dict):
        member = execution.arguments.get("member_id")
        execution.delegates_to = member if isinstance(member, str) else ""
    return execution


def _output_text(reader: SpanReader) -> str | None:
    """A run's RunOutput content: the text of its one output message."""
    messages = parse_messages(reader.get("gen_ai.output.messages"), "assistant")
    return messages[-1].text if messages else None
