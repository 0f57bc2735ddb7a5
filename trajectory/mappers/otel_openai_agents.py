"""OpenTelemetry's own openai-agents instrumentation (`opentelemetry-instrumentation-openai-agents-v2`).

A tracing processor of openai-agents' own tracing that writes the GenAI conventions (read by `otel_genai`),
under the scope OpenLLMetry's openai-agents instrumentation has too, `opentelemetry.instrumentation.openai_agents`:
told apart by `server.address`, which it writes on every span (`api.openai.com` unless configured) and
OpenLLMetry's never does. Its own ways, as of 0.1.0:

- the trace's root, a SERVER `invoke_agent` span named after the workflow (`Agent workflow`), and the SDK's
  task and turn spans (operation `unknown`) group the run: no agent, no step;
- `invoke_agent <agent>`: an agent run; its messages gather its calls' (each call's are read on the call);
- `chat <model>`: one model call. The Responses API's items are written its own way: a function call of
  the answer is a text part holding the item's repr (`ResponseFunctionToolCall(arguments='{…}',
  call_id='fc_…', name='…', …)`), read back as the call it is; a re-sent answer's content part is a text part
  holding the part's dict repr (`{'annotations': [], 'text': '…', 'type': 'output_text'}`), read as its
  text. The input's `function_call` / `function_call_output` items and the agent's instructions are dropped
  (no span records them): calls meet their results through the tool spans;
- a reasoning model's answer (`ModelSettings(reasoning=…)`): its reasoning item, before the function calls, is a
  text part holding the item's repr (`ResponseReasoningItem(id='rs_…', summary=[Summary(text='…',
  type='summary_text')], …)`), read as the reasoning its summary shows. An answer with text is written as its
  `output_text` alone, its reasoning dropped; the reasoning items the SDK re-sends as input items are dropped (no
  `role`, no `content`), and so are the reasoning tokens and effort (0.1.0 reads neither): no span records them;
- `chat <model>` on the Chat Completions path (`OpenAIChatCompletionsModel`: the SDK's generation spans): the
  input is the Chat Completions messages sent, the instructions a system message, each tool message's content
  written twice (a text part, read as a result of no call, and the `tool_call_response` part): the copy is
  dropped. The answer is written as the SDK dumped it: a message with text, as that text alone (its tool calls
  dropped: the builder takes them from the next call's input, `build._Context._completes_answer`); a message
  with none, as a text part holding the message's dict repr (`{'content': None, …, 'tool_calls': [{'id': …,
  'function': {'arguments': …, 'name': …}, …}]}`); a streamed answer, as one holding the dict repr of the
  Responses `Response` the SDK rebuilt from the chunks (`{'id': …, 'object': 'response', 'output': [items]}`).
  Both reprs are read back as the text and calls they hold;
- images (openai-agents 0.25): a user message's `input_image` content part is, like its `input_text`, a text part
  holding the part's dict repr (`{'type': 'input_image', 'image_url': 'data:image/png;base64,…', 'detail': 'auto'}`),
  read as the image it names (a media part at its URL: an ATIF image part, a large data URL referenced at the call's
  span, trajectory/media.py), never as its base64; one sent by `file_id` alone is left as recorded. A function tool
  returning an image writes `str()` of what it returned as the tool span's result: a `ToolOutputImage`'s pydantic
  `str()` (`type='image' image_url='data:…' file_id=None detail='low'`), as OpenInference records it; a list of them
  and `ToolOutputText`s the list's repr (`[ToolOutputText(type='text', text='…'), ToolOutputImage(…)]`: 0.1.0's JSON
  dump falls back to `str()`), read into those models' fields; a `ToolOutputImageDict`, JSON. Either is read as the
  parts the model was sent (`openai_agents_images.tool_result_parts`). The `function_call_output` that carries the
  image back to the model is dropped from the input like every other (above): the tool span alone holds it;
- the Responses API's hosted web search (`WebSearchTool()`): a search of an answer without text is a text part holding
  the item's repr (`ResponseFunctionWebSearch(id='ws_…', action=ActionSearch(type='search', query='…', …),
  status='completed', type='web_search_call')`), read as the provider's `web_search` call
  (`openai_agents_hosted_tools.as_web_search`, as under OpenInference). An answer with text is written as its
  `output_text` alone: a search beside it, and its text's `url_citation` annotations, are in no span. The
  annotations of an answer are written only where a later call re-sends it, in its content part's dict repr
  (`{'annotations': [{'type': 'url_citation', …}], 'text': '…', 'type': 'output_text'}`): read back onto the call that
  answered (`complete_calls`). The search items the SDK re-sends are dropped (no `role`, no `content`), like the
  function calls;
- `execute_tool <tool>`: no call id, so it meets its call by name and arguments;
- `agent_handoff`: the handoff the model's `transfer_to_…` call made, naming both agents;
- `guardrail_check`: one of the SDK's guardrails (`gen_ai.guardrail.name`, `gen_ai.guardrail.triggered`), holding the
  agent a guardrail runs (`invoke_agent` under it). No step of its own: the runs it guards and starts are completed
  by `openai_agents_guardrails`' rules (`complete_runs`), as under OpenInference. It is written in the same tree
  (inside the guarded agent's first turn span when the input guardrail blocks, the tripwire's error on that turn
  span), the turn spans `unknown` like the task span above the agent, so a turn is a non-guardrail child of an agent
  span; which kind a guardrail is, input or output, is not written here either.

Every span but the root carries the instrumentor's defaults as agent identity (`gen_ai.agent.name`
"OpenAI Agent", `gen_ai.agent.id` "agent", `gen_ai.agent.description`): only an agent span names its agent.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from evalkit.trajectory.mappers import (
    openai_agents_guardrails,
    openai_agents_hosted_tools,
    openai_agents_images,
    openai_agents_voice,
    openai_sdk,
    otel_genai,
    python_repr,
)
from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.messages import parse_arguments
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import AgentRun, LlmCall, Message, Operation, Part, ToolExecution
from evalkit.trajectory.span import LogRecord, Span

NAME = "otel-openai-agents"
SCOPE = "opentelemetry.instrumentation.openai_agents"
_SPAN_KIND_SERVER = 2  # OTLP SpanKind: the processor starts the trace root as SERVER, agent runs as CLIENT
# On every span: the provider twice (both spellings), where the calls go, and what the span's output is.
_BOOKKEEPING = ("gen_ai.provider.name", "gen_ai.system", "server.address", "server.port", "gen_ai.output.type")
_FUNCTION_CALL_REPR = "ResponseFunctionToolCall("
_REASONING_REPR = "ResponseReasoningItem("
_WEB_SEARCH_REPR = "ResponseFunctionWebSearch("
# A re-sent answer's content part with citations, as its dict repr sits in a call's `gen_ai.input.messages` (most
# inputs hold none: only those are parsed).
_CITED_CONTENT_PART = re.compile(r"'annotations': \[\{")
_CONTENT_PART_TYPES = frozenset({"output_text", "input_text"})
_IMAGE_PART_TYPE = "input_image"
_TOOL_OUTPUTS_REPR = "[ToolOutput"  # a list of ToolOutputText / ToolOutputImage, as `str()` writes it
_GUARDRAIL = "guardrail_check"  # the operation of the SDK's GuardrailSpanData
_GUARDRAIL_KEYS = ("gen_ai.guardrail.name", "gen_ai.guardrail.triggered")


def detect(span: Span) -> bool:
    return span.scope_name == SCOPE and "server.address" in span.attributes


def map_span(reader: SpanReader, logs: Sequence[LogRecord]) -> Operation | None:
    reader.consume(*_BOOKKEEPING, *otel_genai.IDENTITY_KEYS)  # the identity: the builder's to read
    operation = otel_genai.operation_name(reader)
    if operation == "invoke_agent":
        if reader.span.kind == _SPAN_KIND_SERVER:  # the trace's root, named after the workflow
            return None
        run = otel_genai.agent_run(reader, NAME)
        reader.consume("gen_ai.output.messages")  # its calls' answers, each read on its call
        return run
    if operation == "chat":
        return _llm_call(reader, logs)
    if operation == "execute_tool":
        return _tool_execution(otel_genai.tool_execution(reader, NAME))
    if operation == "agent_handoff":
        reader.consume("gen_ai.handoff.from_agent")
        return ToolExecution(span=reader.span, emitter=NAME, handoff_to=reader.text("gen_ai.handoff.to_agent") or "",
                             error=span_error(reader))
    if operation == _GUARDRAIL:
        reader.consume(*_GUARDRAIL_KEYS)  # read by `complete_runs`: the runs it guards and starts
    return None  # a task or turn span (`unknown`), a guardrail: it groups the calls and tools under it


def complete_calls(spans: Sequence[Span], calls: Iterable[LlmCall]) -> None:
    """Each call's answer given its citations, which 0.1.0 writes only where a later call of the session re-sends the
    answer (its content part's dict repr): the first such call's, whose history is the one right after it; then the
    voice pipeline's questions marked heard and its answers said (`openai_agents_voice.py`)."""
    ordered = sorted((call for call in calls if detect(call.span)), key=lambda call: call.span.start_time_unix_nano)
    resent: list[dict[str, list[dict[str, Any]]] | None] = [None] * len(ordered)  # each call's, read once if asked
    for position, call in enumerate(ordered):
        answer = "\n".join(message.text for message in call.output_messages if message.text)
        if not answer or "annotations" in call.extra:
            continue
        for later in range(position + 1, len(ordered)):
            cited = resent[later]
            if cited is None:
                cited = resent[later] = _resent_citations(ordered[later].span)
            if answer in cited:
                openai_agents_hosted_tools.keep_annotations(call, cited[answer])
                break
    # The voice pipeline's turns: each transcribed question marked spoken, each answer marked said.
    openai_agents_voice.complete_calls(spans, ordered)


def _resent_citations(span: Span) -> dict[str, list[dict[str, Any]]]:
    """The answers a call's input re-sends with citations: each content part's text, and its annotations."""
    sent = span.attributes.get("gen_ai.input.messages")
    if not isinstance(sent, str) or _CITED_CONTENT_PART.search(sent) is None:
        return {}
    cited: dict[str, list[dict[str, Any]]] = {}
    for message in parse_json(sent) or ():
        parts = message.get("parts") if isinstance(message, dict) and message.get("role") == "assistant" else None
        for part in parts if isinstance(parts, list) else ():
            value = _dict_repr(part.get("content")) if isinstance(part, dict) else None
            annotations = value.get("annotations") if value is not None else None
            if value is not None and value.get("type") == "output_text" and isinstance(value.get("text"), str) \
                    and isinstance(annotations, list) and annotations:
                cited.setdefault(value["text"], [a for a in annotations if isinstance(a, dict)])
    return cited


def complete_runs(spans: Sequence[Span], runs: Iterable[AgentRun]) -> None:
    """The session's openai-agents runs as this instrumentation records their guardrails
    (`openai_agents_guardrails.complete_guarded_runs`)."""
    openai_agents_guardrails.complete_guarded_runs(spans, runs, GUARDRAIL_SPANS)


def _attribute(span: Span, key: str) -> str:
    value = span.attributes.get(key)
    return value if isinstance(value, str) else ""


def _guardrail_name(span: Span) -> str | None:
    if detect(span) and _attribute(span, "gen_ai.operation.name") == _GUARDRAIL:
        return _attribute(span, "gen_ai.guardrail.name") or None
    return None


def _is_agent(span: Span) -> bool:
    """An agent run's span, not the trace's root (SERVER, named after the workflow)."""
    return (detect(span) and _attribute(span, "gen_ai.operation.name") == "invoke_agent"
            and span.kind != _SPAN_KIND_SERVER)


def _is_turn(span: Span) -> bool:
    """A turn of an agent's loop: the SDK's turn span, `unknown` (as its task span, which is above the agent)."""
    return detect(span) and _attribute(span, "gen_ai.operation.name") == "unknown"


def _sent(span: Span) -> list[Message]:
    return _llm_call(SpanReader(span), ()).input_messages


GUARDRAIL_SPANS = openai_agents_guardrails.GuardrailSpans(
    guardrail_name=_guardrail_name,
    is_agent=_is_agent,
    is_turn=_is_turn,
    is_call=lambda span: detect(span) and _attribute(span, "gen_ai.operation.name") == "chat",
    input_messages=_sent,
)


def _llm_call(reader: SpanReader, logs: Sequence[LogRecord]) -> LlmCall:
    call = otel_genai.llm_call(reader, logs, NAME)
    call.output_messages = [_answer(message) for message in call.output_messages]
    openai_agents_hosted_tools.count_billed_searches(call)  # the searches OpenAI bills, which its usage does not count
    # Input messages may be the memo's (shared by every call re-sending them): replaced, never changed.
    inputs = [_without_repeated_results(_with_content_parts(message)) for message in call.input_messages]
    if any(new is not old for new, old in zip(inputs, call.input_messages, strict=True)):
        call.input_messages = inputs
    return call


def _answer(message: Message) -> Message:
    """The answer with each text part that is a repr read as what it holds: a function call, a Chat Completions
    message, a streamed answer's `Response`."""
    parts = [read for part in message.parts for read in (_answer_parts(part) if part.kind == "text" else [part])]
    return Message(message.role, parts, message.name)


def _answer_parts(part: Part) -> list[Part]:
    """An answer's text part as what it holds: the call or message its repr names, or itself (plain text)."""
    call = _function_call(part)
    if call is not None:
        return [call]
    reasoning = _reasoning(part)
    if reasoning is not None:
        return [reasoning]
    search = _web_search(part)
    if search is not None:
        return [search]
    value = _dict_repr(part.text)
    if value is None:
        return [part]
    output = value.get("output")
    if value.get("object") == "response" and isinstance(output, list):
        return _response_parts(output)
    if value.get("role") == "assistant" and "tool_calls" in value:
        return _chat_message_parts(value)
    return [part]


def _dict_repr(text: str | None) -> dict[str, Any] | None:
    """A dict's repr (`str()` of a model dump: Python literals only) as the dict; None for any other text."""
    text = (text or "").strip()
    if not text.startswith("{'") or not text.endswith("}"):
        return None
    value = python_repr.literal(text)
    return value if isinstance(value, dict) else None


def _chat_message_parts(message: dict[str, Any]) -> list[Part]:
    """A Chat Completions message's dump (`ChatCompletionMessage.model_dump()`): its text and tool calls."""
    content = message.get("content")
    parts = [Part("text", text=content)] if isinstance(content, str) and content else []
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            call_id = call.get("id")
            parts.append(Part("tool_call", call_id=call_id if isinstance(call_id, str) else None,
                              name=function["name"], arguments=parse_arguments(function.get("arguments"))))
    return parts


def _response_parts(output: list[Any]) -> list[Part]:
    """A Responses `Response`'s output items (`Response.model_dump()["output"]`): the messages' text, the
    function calls (their `call_id`, which the calls' results name)."""
    parts: list[Part] = []
    for item in output:
        if not isinstance(item, dict):
            continue
        if item.get("type") == "message":
            parts.extend(Part("text", text=content["text"]) for content in item.get("content") or ()
                         if isinstance(content, dict) and content.get("type") == "output_text"
                         and isinstance(content.get("text"), str))
        elif item.get("type") == "function_call" and isinstance(item.get("name"), str):
            call_id = item.get("call_id")
            parts.append(Part("tool_call", call_id=call_id if isinstance(call_id, str) else None, name=item["name"],
                              arguments=parse_arguments(item.get("arguments"))))
    return parts


def _function_call(part: Part) -> Part | None:
    """`ResponseFunctionToolCall(arguments='{"city": "Oslo"}', call_id='fc_1', name='get_weather', …)`: the
    call (its `call_id`, which the call's output names, not the item's `id`)."""
    text = (part.text or "").strip()
    if not text.startswith(_FUNCTION_CALL_REPR) or not text.endswith(")"):
        return None
    fields = python_repr.object_value(text)
    name = fields.get("name") if isinstance(fields, dict) else None
    if not isinstance(name, str):
        return None
    call_id = fields.get("call_id")
    return Part("tool_call", call_id=call_id if isinstance(call_id, str) else None, name=name,
                arguments=parse_arguments(fields.get("arguments")))


def _reasoning(part: Part) -> Part | None:
    """`ResponseReasoningItem(id='rs_1', summary=[Summary(text='…', type='summary_text')], type='reasoning', …)`:
    the reasoning its summary shows (its `content`, the model's reasoning text, where it has no summary). An item
    showing neither is a reasoning part with no text: the model reasoned, nothing of it to show."""
    text = (part.text or "").strip()
    if not text.startswith(_REASONING_REPR) or not text.endswith(")"):
        return None
    fields = python_repr.object_value(text)
    if not isinstance(fields, dict):
        return None
    return Part("reasoning", text=openai_sdk.reasoning_item_text(fields))


def _web_search(part: Part) -> Part | None:
    """`ResponseFunctionWebSearch(id='ws_1', action=ActionSearch(type='search', query='…', queries=None, sources=None),
    status='completed', type='web_search_call')`: the search the provider ran, the model's `web_search` call (its
    item's id, the action as the API sent it: the fields pydantic's repr shows unset, None, left out)."""
    text = (part.text or "").strip()
    if not text.startswith(_WEB_SEARCH_REPR) or not text.endswith(")"):
        return None
    fields = python_repr.object_value(text)
    if not isinstance(fields, dict):
        return None
    call_id = fields.get("id")
    search = Part("tool_call", call_id=call_id if isinstance(call_id, str) else None,
                  name=openai_agents_hosted_tools.WEB_SEARCH, arguments=_plain(fields.get("action")))
    return openai_agents_hosted_tools.as_web_search(search, fields.get("status"))


def _plain(value: Any) -> Any:
    """A repr's value (`python_repr.object_value`) as the API's JSON: no `__class__`, no field left None."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items() if key != "__class__" and item is not None}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _tool_execution(execution: ToolExecution) -> ToolExecution:
    """A function tool's execution, its result the parts the model was sent where the tool returned an image."""
    result = execution.result
    if isinstance(result, str) and result.startswith(_TOOL_OUTPUTS_REPR):
        listed = python_repr.object_value(result)  # each model its fields (and `__class__`)
        execution.result_parts = openai_agents_images.tool_result_parts(listed) if isinstance(listed, list) else None
        return execution
    return openai_agents_images.tool_execution(execution)


def _with_content_parts(message: Message) -> Message:
    """The message, or a copy of it whose text parts holding a content part's dict repr are that part: its text, its
    image."""
    parts = [(_content_part(part) or part) if part.kind == "text" else part for part in message.parts]
    if all(new is old for new, old in zip(parts, message.parts, strict=True)):
        return message
    return Message(message.role, parts, message.name)


def _without_repeated_results(message: Message) -> Message:
    """A tool message holding its call's result, or a copy of it without the results of no call: 0.1.0 writes a
    Chat Completions tool message's content as text parts (read as results of no call) and again as the
    `tool_call_response` part naming the call."""
    if message.role != "tool" or not any(p.kind == "tool_result" and p.call_id for p in message.parts):
        return message
    parts = [part for part in message.parts if part.kind != "tool_result" or part.call_id]
    return message if len(parts) == len(message.parts) else Message(message.role, parts, message.name)


def _content_part(part: Part) -> Part | None:
    """`{'annotations': [], 'text': 'Booked.', 'type': 'output_text'}`: the text part `Booked.`;
    `{'type': 'input_image', 'image_url': 'https://…/photo.jpg', 'detail': 'low'}`: the image at that URL."""
    value = _dict_repr(part.text)
    if value is None:
        return None
    if value.get("type") == _IMAGE_PART_TYPE:
        url = value.get("image_url")
        return Part("media", media_type="image", uri=url) if isinstance(url, str) and url else None
    if value.get("type") not in _CONTENT_PART_TYPES:
        return None
    content = value.get("text")
    return Part("text", text=content) if isinstance(content, str) else None
