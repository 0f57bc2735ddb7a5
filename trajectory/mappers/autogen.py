"""AutoGen's own tracing (autogen-core's `_telemetry`, scope `autogen-core`): the GenAI conventions, AutoGen's ways.

AgentChat writes `create_agent <name>`, `invoke_agent <name>` (one per `run`) and `execute_tool <name>`
spans, read by the GenAI mapper. It records no LLM call (its model clients are traced by an
instrumentation of the provider's SDK, `opentelemetry-instrumentation-openai-v2` for instance), and its
tool spans name the tool and the call id only: arguments and result are found on the calls (the model's
tool call, the next call's input). What is AutoGen's own: `gen_ai.system` is "autogen" on every span,
the framework, not the model's provider. (Its span helpers record a failure themselves inside
`start_as_current_span`, which records it again: a rule shared with other frameworks, in `errors`.)

OpenInference's AgentChat instrumentor (`openinference-instrumentation-autogen-agentchat`) is another emitter's
spans, read by the OpenInference mapper; what it writes its own way is read here: tool results beside a
message (`function_results`), the text a model writes beside its tool calls (`with_thought`, `output_thought`), a
team's run (`team_run`) and its task (a Swarm's HandoffMessage too), and what each participant's turn answered
the team (`turn_answers`, from the team's TaskResult).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai, python_repr
from evalkit.trajectory.mappers.messages import render
from evalkit.trajectory.mappers.reader import SpanReader, dig, indexed, parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part
from evalkit.trajectory.span import LogRecord, Span

NAME = "autogen"
SCOPE = "autogen-core"


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume("gen_ai.system")
    operation = otel_genai.map_span(reader, logs)
    if operation is None:
        return None
    operation.emitter = NAME
    return operation


# --- OpenInference's AgentChat instrumentor (openinference-instrumentation-autogen-agentchat) ----------------------
# Its LLM spans wrap AutoGen's OpenAI model client (`BaseOpenAIChatCompletionClient.create` / `create_stream`) and
# flatten AutoGen's own message types (`_llm_messages_attributes`): a FunctionExecutionResultMessage, the tool results
# the model is sent, is role "function" with no content; each result is a JSON object beside it,
# `llm.input_messages.<i>.function.<k>` = `{"name", "content", "call_id", "is_error"}`. `is_error` is the only record
# of a tool that failed: the TOOL span (`_AssistantAgentExecuteToolCallWrapper`) sets its status OK, then ERROR when
# the result says so, and OpenTelemetry keeps an OK status final, so that span ends OK with the error text as output.
OPENINFERENCE_SCOPE = "openinference.instrumentation.autogen_agentchat"


def function_results(node: Any) -> Message | None:
    """A flattened FunctionExecutionResultMessage (`{"message": {"role": "function"}, "function": {…}}`) as the
    tool message it is: one result a function, on its call id, flagged when AutoGen says it failed."""
    if dig(node, "message", "role") != "function":
        return None
    parts: list[Part] = []
    for raw in indexed(dig(node, "function")):
        result = parse_json(raw)
        if not isinstance(result, dict):
            continue
        content, call_id, name = result.get("content"), result.get("call_id"), result.get("name")
        parts.append(Part("tool_result", text=render(content),
                          call_id=str(call_id) if call_id else None, name=str(name) if name else None,
                          error=result.get("is_error") is True))
    return Message("tool", parts) if parts else None


# AutoGen's OpenAI model client puts what the model writes beside its tool calls (the chat message's `content` beside
# its `tool_calls`) in CreateResult's `thought`, as it does a reasoning model's reasoning beside a text answer
# (`reasoning_content`, R1's `<think>`): `content` is then the FunctionCalls, or the text. The instrumentor writes a
# message's `content` only: an answer's thought is only in `output.value` (the CreateResult's JSON), a re-sent
# AssistantMessage's is `llm.input_messages.<i>.thought`, beside its `message`. A Swarm agent's handoff with a
# question to the user is such a text beside a call (`transfer_to_user`).


def with_thought(message: Message, thought: Any) -> Message:
    """`message` with AutoGen's `thought`: the text said beside its tool calls, else (beside a text) its reasoning."""
    if not isinstance(thought, str) or not thought:
        return message
    if any(part.kind == "text" and part.text for part in message.parts):
        message.parts.insert(0, Part("reasoning", text=thought))
    else:
        message.parts = [Part("text", text=thought), *(part for part in message.parts if part.kind != "text")]
    return message


def output_thought(call: LlmCall, output_value: Any) -> None:
    """The thought of the CreateResult an AgentChat LLM span's `output.value` holds, on the answer it is part of."""
    result = parse_json(output_value)
    answers = [message for message in call.output_messages if message.role == "assistant"]
    if isinstance(result, dict) and answers:
        with_thought(answers[0], result.get("thought"))


# A team's `run_stream` (`BaseGroupChat`: RoundRobinGroupChat, SelectorGroupChat, …) is a CHAIN span carrying the
# team's `participant_names` (and `team_id`, `participant_descriptions`), its participants' turns AGENT spans under it.
# The team orchestrates its agents, as a CrewAI crew does: an agent run, each turn of a participant a subagent. Its
# `input.value` is the bound arguments (`{"task": …, "cancellation_token": …}`); its `output.value` the TaskResult,
# every message of the run: no answer of the team's own, which is its last participant's.


def is_team_run(reader: SpanReader) -> bool:
    return reader.span.scope_name == OPENINFERENCE_SCOPE and reader.has("participant_names")


def team_run(run: AgentRun, reader: SpanReader) -> AgentRun:
    reader.consume("team_id", "participant_names", "participant_descriptions")
    arguments = parse_json(reader.span.attributes.get("input.value"))
    run.input_text = _task_text(arguments.get("task") if isinstance(arguments, dict) else None)
    run.output_text = None
    return run


def _task_text(task: Any) -> str | None:
    """A team's task: a text, or chat messages (JSON-dumped pydantic models, or their `str()`), their contents."""
    messages = task if isinstance(task, list) else [task]
    texts = [render(m.get("content") if isinstance(m, dict) else _chat_message_content(m))
             for m in messages if m is not None]
    return "\n".join(text for text in texts if text) or None


def _chat_message_content(task: Any) -> Any:
    """A chat message the instrumentor wrote as its `str()` (its JSON encoder's fallback for an object json cannot
    dump: `id='…' source='user' … content='…' target='flights_agent' … type='HandoffMessage'`, the message a Swarm
    is resumed with), its content; anything else as it is."""
    fields = python_repr.model_fields(task) if isinstance(task, str) else None
    if fields is None or not str(fields.get("type", "")).endswith("Message") or "content" not in fields:
        return task
    return fields["content"]


# A participant's turn (`<agent>.on_messages_stream`, an AGENT span under the team's) records no output: what it
# answered is its Response's chat message, which AgentChat hands the team, and the team's TaskResult (its
# `output.value`) lists, after the task's messages, each turn's events (tool calls, results: `…Event`) and its chat
# message. A turn whose model wrote an answer answers with it; one that ended on its tool calls (no
# `reflect_on_tool_use`) answers with a ToolCallSummaryMessage, its tool results as its `tool_call_summary_format`
# writes them, which only the TaskResult records.
_TURN_SUFFIX = ".on_messages_stream"


def turn_answers(spans: Sequence[Span]) -> dict[tuple[str, str], str]:
    """Each participant's turn of an AgentChat team, by (trace id, span id), and the chat message it answered the
    team with: the turns of each participant, in the order they ran, given its chat messages in the TaskResult's
    order (a turn answers with one)."""
    teams = {(span.trace_id, span.span_id): span for span in spans
             if span.scope_name == OPENINFERENCE_SCOPE and "participant_names" in span.attributes}
    if not teams:
        return {}
    turns: dict[tuple[str, str], list[Span]] = {key: [] for key in teams}
    for span in spans:
        parent = (span.trace_id, span.parent_span_id)
        if parent in turns and span.name.endswith(_TURN_SUFFIX):
            turns[parent].append(span)
    answers: dict[tuple[str, str], str] = {}
    for key, team in teams.items():
        said = _chat_messages_by_source(team)
        for turn in sorted(turns[key], key=lambda span: (span.start_time_unix_nano, span.span_id)):
            queue = said.get(turn.name.removesuffix(_TURN_SUFFIX))
            if queue:
                answers[(turn.trace_id, turn.span_id)] = queue.pop(0)
    return answers


def _chat_messages_by_source(team: Span) -> dict[str, list[str]]:
    """The chat messages of a team run's TaskResult after its task's, each source's in order, as text."""
    result = parse_json(team.attributes.get("output.value"))
    messages = result.get("messages") if isinstance(result, dict) else None
    if not isinstance(messages, list):
        return {}
    arguments = parse_json(team.attributes.get("input.value"))
    arguments = arguments if isinstance(arguments, dict) else {}
    task = arguments.get("task")
    # `run(task=…)` puts the task's messages first unless told not to (`output_task_messages=False`).
    told = len(task) if isinstance(task, list) else int(task is not None)
    if arguments.get("output_task_messages") is False:
        told = 0
    said: dict[str, list[str]] = {}
    for message in messages[told:]:
        if isinstance(message, dict) and not str(message.get("type", "")).endswith("Event"):
            said.setdefault(str(message.get("source")), []).append(render(message.get("content")))
    return said
