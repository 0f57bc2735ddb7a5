"""OpenLIT's smolagents instrumentation (scope `openlit.instrumentation.smolagents`, as of openlit 1.45).

It wraps smolagents' classes (openlit/instrumentation/smolagents: `WORKFLOW_OPERATIONS`, `DETAILED_OPERATIONS`, all
wrapped whatever `detailed_tracing` says) and leaves the model calls to the client's instrumentation (OpenLIT's OpenAI
one: `chat <model>` spans, read by `trajectory/mappers/openlit.py`). Each span is named `<gen_ai.operation.name>
<entity>`, the entity an agent's `name`, or its class name (`ToolCallingAgent`, `CodeAgent`) when it has none:

- `MultiStepAgent.run`: `invoke_agent <agent>`, one per run (a managed agent's run inside the `execute_tool` span
  of the call that started it), the task as `gen_ai.input.messages` (a managed agent's as smolagents' template
  wraps it) and the answer as `gen_ai.output.messages`, its model, `gen_ai.smolagents.max_steps`, the smolagents
  monitor's token totals as `gen_ai.usage.*` (every call of the run again, the managed agents' too: the calls' spans
  count them), and its tools as `gen_ai.tool.definitions`, each tool's `inputs` (smolagents' own shape) as its
  parameters, not the JSON schema the model is sent (`parameters_schema` makes it), its managed agents left out (the
  calls' spans record no tools). A streamed run (`run(…, stream=True)`) is recorded by another wrapper: no agent id,
  no custom attributes (`openlit.using_attributes`' session id is on its children alone), and
  `gen_ai.smolagents.step_count` (the events it yielded). A class name names no agent: an unnamed agent is the
  application's (its `service.name`, OpenLIT's `application_name`), as the builder names an agent with no name.
- `ToolCallingAgent._step_stream` / `CodeAgent._step_stream`: `invoke_agent <agent> step_<n>` with
  `gen_ai.smolagents.step_number`, around one model call and the tools it asked for: the step's token usage (its
  call's again), its observations as `gen_ai.output.messages`, a failed step's `error.type` and exception. A step
  of the run, not an agent (nor `_generate_planning_step`'s `invoke_agent <agent> planning`): no run, no step; its
  call and tools are the run's.
- `ToolCallingAgent.execute_tool_call` (or `Tool.__call__` outside one): `execute_tool <tool>`, the arguments as
  JSON, `str()` of what the tool returned (a managed agent's report) as `gen_ai.tool.call.result`, the tool's
  description; one that raised has its exception alone. Its `gen_ai.tool.call.id` is made up
  (`_resolve_tool_call_id` looks for an id among the arguments and else returns a new `uuid4`): no call's id, so
  the execution is matched to the model's call by name and arguments.
- `MultiStepAgent.__init__`: `create_agent <agent>`, a trace of its own (setting an agent up): no step.

The model calls (`read_sent_memory`): smolagents writes its memory as messages of its own roles (`tool-call`,
`tool-response`: `trajectory/mappers/smolagents.py`), which its OpenAI client model converts to `assistant` and
`user` and then merges, each run of one role into one message, its texts joined by a line break
(`get_clean_message_list`). The client's instrumentation records them so: an answer re-sent as its text, if any,
and "Calling tools:\n[…]" in one assistant message; what the tools gave ("Observation:\n…", "Error:\n…") in one user
message with the task that follows it ("New task:\n…"); a failed step's calls not at all (smolagents sets them
only once every call returned), only its "Error:" text.

Every span restates the provider (`smolagents`), the agent's model (`gen_ai.request.model` / `…response.model`,
carried down to tool spans), its server, the application's name and environment, the duration: bookkeeping.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers import otel_genai, smolagents
from evalkit.trajectory.mappers.messages import parse_messages
from evalkit.trajectory.mappers.reader import SpanReader, as_text
from evalkit.trajectory.operations import AgentRun, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

SCOPE = "openlit.instrumentation.smolagents"
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.tool.type",
                "gen_ai.tool.description")
_STEP_MARKS = ("gen_ai.smolagents.step_number", "gen_ai.smolagents.planning")
_RUN_SETTINGS = ("gen_ai.smolagents.max_steps", "gen_ai.smolagents.step_count")
# The classes smolagents names an agent after when it was given no name (`getattr(instance, "name", None) or
# type(instance).__name__`).
_AGENT_CLASS_SUFFIX = "Agent"
# smolagents' memory as text (memory.py): a task, what the tools gave, a failed step's error (after its first call's
# id when smolagents knew it), the calls an answer made.
_TASK = "New task:\n"
_CALLS_LINE = re.compile(r"(?:^|\n)Calling tools:\n")
_TOOLS_GAVE = ("Observation:\n", "Error:\n", "Call id: ")
# Where one part of a merged user message ends and the next begins: each begins a line.
_NEXT_PART = re.compile(r"\n(?=New task:\n|Observation:\n|Error:\n|Call id: [^\n]*\nError:\n)")


def is_smolagents(span: Span) -> bool:
    return span.scope_name == SCOPE


def map_span(reader: SpanReader, logs: Sequence[LogRecord], emitter: str) -> Operation | None:
    """One span of the instrumentation's, OpenLIT's common bookkeeping already read (`openlit.map_span`)."""
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    operation = otel_genai.operation_name(reader)
    if operation == "execute_tool":
        return tool_run(reader, emitter)
    if operation == "invoke_agent" and not reader.has(*_STEP_MARKS):
        return agent_run(reader, emitter)
    # A step or planning span, an agent's creation: what they restate is the run's, its calls' and its tools'.
    reader.consume_prefix("gen_ai.")
    reader.consume("error.type")
    if reader.span.events:
        reader.read_events("exception")  # a failed step: its tool's exception again, on the tool span too
    return None


def agent_run(reader: SpanReader, emitter: str) -> AgentRun:
    run = otel_genai.agent_run(reader, emitter)  # its `gen_ai.usage.*` (the monitor's totals) not counted
    # An unnamed agent is the application's (`openlit.init(application_name=…)`, its resource's service name).
    run.name = agent_name(run.name) or as_text(reader.span.resource_attributes.get("service.name"))
    messages = parse_messages(reader.get("gen_ai.output.messages"), "assistant")
    run.output_text = messages[-1].text if messages else None
    for definition in run.tool_definitions:
        function = definition["function"]
        if isinstance(function.get("parameters"), dict):
            function["parameters"] = parameters_schema(function["parameters"])
    reader.consume("gen_ai.output.messages", *_RUN_SETTINGS)
    return run


def parameters_schema(inputs: dict[str, Any]) -> dict[str, Any]:
    """A tool's `inputs` as OpenLIT records them (smolagents' own shape: each argument's type and description) as
    the JSON schema smolagents sends the model for it (`models.get_tool_json_schema`: an `any` argument a string,
    every argument required unless it is nullable)."""
    if inputs.get("type") == "object" or not all(isinstance(spec, dict) for spec in inputs.values()):
        return inputs  # a JSON schema already
    properties = {name: {**spec, "type": "string"} if spec.get("type") == "any" else spec
                  for name, spec in inputs.items()}
    required = [name for name, spec in inputs.items() if not spec.get("nullable")]
    return {"type": "object", "properties": properties, "required": required}


def agent_name(name: str | None) -> str | None:
    """An agent's own name; the class name smolagents puts in place of none (`ToolCallingAgent`) names nothing."""
    if not name or (name[0].isupper() and name.endswith(_AGENT_CLASS_SUFFIX) and name.isidentifier()):
        return None
    return name


def tool_run(reader: SpanReader, emitter: str) -> ToolExecution:
    execution = otel_genai.tool_execution(reader, emitter)
    execution.call_id = None  # a uuid4 of OpenLIT's (see above)
    return execution


def read_sent_memory(messages: list[Message]) -> list[Message]:
    """A call's input as smolagents' client sent it (see above) in smolagents' roles again, then read as those roles
    are (`smolagents.read_roles`: its restated calls the assistant's, what the tools gave their results); the input
    of a call that is not smolagents' (its first user message is no "New task:") unchanged."""
    first_user = next((m for m in messages if m.role == "user"), None)
    if first_user is None or not first_user.text.startswith(_TASK):
        return messages
    restored: list[Message] = []
    for message in messages:
        if any(part.kind != "text" for part in message.parts):  # an image, calls of the API's own: as sent
            restored.append(message)
        elif message.role == "assistant":
            restored.extend(_answer_parts(message))
        elif message.role == "user":
            restored.extend(_user_parts(message))
        else:
            restored.append(message)
    return smolagents.read_roles(restored)


def _answer_parts(message: Message) -> list[Message]:
    """An assistant message: the answer's text, then its calls as smolagents restates them (`tool-call`). The first
    "Calling tools:" line is smolagents': its agents stop the model at that text (`stop_sequences`)."""
    found = _CALLS_LINE.search(message.text)
    if found is None:
        return [message]
    said = message.text[:found.start()].strip()
    restated = Message(smolagents.TOOL_CALL_ROLE, [Part("text", text=message.text[found.start():].lstrip("\n"))])
    return [Message("assistant", [Part("text", text=said)]), restated] if said else [restated]


def _user_parts(message: Message) -> list[Message]:
    """A user message: each task a user message, each observation or error a `tool-response`."""
    pieces = _NEXT_PART.split(message.text)
    if len(pieces) == 1 and not pieces[0].startswith(_TOOLS_GAVE):
        return [message]
    return [Message(smolagents.TOOL_RESPONSE_ROLE if piece.startswith(_TOOLS_GAVE) else "user",
                    [Part("text", text=piece)]) for piece in pieces]
