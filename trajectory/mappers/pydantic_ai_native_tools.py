"""pydantic-ai's native tools (the provider's own: web search, code execution, web fetch), as its instrumentation
records them.

An agent given `WebSearch()`, `WebFetch()` or `NativeTool(CodeExecutionTool())` has the provider run the tool within
the answer. pydantic-ai keeps each run as a `NativeToolCallPart` and its result as a `NativeToolReturnPart` of the same
response, which its instrumentation writes (`ModelResponse.otel_message_parts`) as a `tool_call` part and a
`tool_call_response` part of the assistant message, both marked `"builtin": true`, in the call's output messages and in
every later call's input (the history re-sent). Neither is a function tool's: a function tool's return is in the next
request's `user` (or `tool`) message, never in the assistant's. Read here, on the answer and on the re-sent assistant
messages alike, so that a re-sent answer is the same message as the answer it repeats (no copied step):
- each builtin call marked run by the provider (`extra.run_by`, as OpenInference's Anthropic server tools are:
  `anthropic_server_tools`), named as the API's block names it: pydantic-ai names every code execution by its tool's
  kind, `code_execution`, where Anthropic's `server_tool_use` block names `bash_code_execution` or
  `text_editor_code_execution` (pydantic-ai's own `get_anthropic_code_execution_tool_name` tells them apart by the
  result's type, as here);
- each builtin result its call's result, as a person reads it (`anthropic_server_results`: the pages a search found,
  the document a fetch got, a command's return code and output, a non-zero return code or a tool's error flagged),
  which the builder puts on the answer's step (`build._Context._provider_result`);
- the text parts of one run of adjacent parts one text, as pydantic-ai joins them (`ModelResponse.text`: adjacent text
  parts joined as they are): Anthropic splits a cited answer into a text block of each cited passage and one of the
  text between, and pydantic-ai keeps a `TextPart` a block. The citations themselves are in no span
  (`otel_message_parts` writes a `TextPart`'s content alone);
- each native tool the request offered (`model_request_parameters.native_tools`, each `{"kind", …its options}`) one of
  the agent's tools as offered (`hosted_tool_definitions`), named by its kind as the request names it (`web_search`,
  `web_fetch`, `code_execution`), the options pydantic-ai recorded in `extra.offered`; the wire's versioned type is in
  no span;
- the web fetches an answer made (`Usage.web_fetch_requests`): pydantic-ai records the searches
  (`gen_ai.usage.details.web_search_requests`, read by `pydantic_ai`) but not Anthropic's
  `server_tool_use.web_fetch_requests`, which counts the `web_fetch` calls the answer holds.

On OpenAI's Responses API (`OpenAIResponsesModel`) the provider's tools are the API's hosted ones, each an item of the
answer that pydantic-ai (`models/openai/_native_tools.py`) keeps as the same two parts, the return a dict opening with
the item's `status` (no `type`, which every Anthropic result block's dict holds; an Anthropic search's is a list):
- a web search (`web_search_call`): its action the call's arguments, read as the openai-agents instrumentations' are
  (`openai_agents_hosted_tools.as_web_search`: run by the provider, the item's status); its result the pages it
  read (`sources`, `[{"type": "url", "url"}, …]`, which the API gives only to a request that includes
  `web_search_call.action.sources`: pydantic-ai's `openai_include_web_search_sources`), each a url as a search's
  pages are shown, and the text it read (`results`, `openai_include_web_search_results`) as given; none when the
  return holds only the status (the API used what it found within the answer);
- a run of the code interpreter (`code_interpreter_call`), which pydantic-ai names by its tool's kind as it names
  Anthropic's: named as the request names the tool, `code_interpreter`, its code the arguments (the container it ran in
  in the call's `extra`); its result what the code printed, the `logs` outputs joined (given only to a request that
  includes `code_interpreter_call.outputs`: `openai_include_code_execution_outputs`), as a command's output is read; a
  run the API says `failed` or `incomplete` flagged. Code that raised is a run the API calls `completed`, its traceback
  the logs: shown, not flagged (nothing but its text says it raised).

Seen in real captures: tests/captures/pydantic-ai_anthropic_builtin-tools, pydantic-ai_openai-responses_builtin-tools.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import anthropic_server_results, hosted_tool_definitions, openai_agents_hosted_tools
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

# How pydantic-ai's OTel messages mark a native tool's parts (`_otel_messages.ToolCallPart.builtin`), compact JSON.
_BUILTIN_MARK = '"builtin":true'
# The kinds pydantic-ai gives Anthropic's code execution tools (`CodeExecutionTool.kind`), and the `server_tool_use`
# names a result's type names (`bash_code_execution_result`, `text_editor_code_execution_create_result`, …).
_CODE_EXECUTION = "code_execution"
_CODE_EXECUTION_TOOLS = ("bash_code_execution", "text_editor_code_execution")
_WEB_FETCH = "web_fetch"
# The Responses API's: its code interpreter as the request names it (`{"type": "code_interpreter"}`), the statuses of
# a run that did not complete, and a web search's url source (`{"type": "url", "url"}`).
_CODE_INTERPRETER = "code_interpreter"
_UNFINISHED_RUNS = ("failed", "incomplete")
_URL_SOURCE = "url"
# How `model_request_parameters` lists the native tools a request offered, when it offers any (compact JSON).
_OFFERED_MARK = '"native_tools":[{'


def holds_native_tools(raw_messages: object) -> bool:
    """Whether a call's recorded messages (`gen_ai.output.messages` / `gen_ai.input.messages`, as the span holds them)
    may hold a native tool's parts: a text test before anything is read again."""
    return isinstance(raw_messages, str) and _BUILTIN_MARK in raw_messages


def offered(call: LlmCall, parameters: object) -> None:
    """The native tools the request offered (`parameters`: the span's `model_request_parameters`) among `call`'s tool
    definitions: each as `hosted_tool_definitions` lists a provider's tool, its kind the name, its options offered."""
    if not (isinstance(parameters, str) and _OFFERED_MARK in parameters):
        return
    recorded = parse_json(parameters)
    tools = recorded.get("native_tools") if isinstance(recorded, dict) else None
    hosted_tool_definitions.offered(call, [{"type": tool["kind"], **{key: value for key, value in tool.items()
                                                                       if key != "kind"}}
                                           for tool in tools if isinstance(tool, dict) and isinstance(
                                               tool.get("kind"), str)] if isinstance(tools, list) else [])


def read_call(call: LlmCall, *, answer: bool, history: bool) -> None:
    """`call` with its native tools' calls and results read, on its answer (`answer`: its output messages hold them)
    and on the assistant messages its input re-sends (`history`)."""
    if history:
        call.input_messages = [_read_message(message) for message in call.input_messages]
    if answer:
        call.output_messages = [_read_message(message) for message in call.output_messages]
        fetches = sum(1 for message in call.output_messages for part in message.parts
                      if part.kind == "tool_call" and part.name == _WEB_FETCH and _run_by_provider(part))
        if fetches:
            call.usage.web_fetch_requests = fetches


def _run_by_provider(part: Part) -> bool:
    return (part.extra or {}).get("run_by") == "provider"


def _read_message(message: Message) -> Message:
    """An assistant message with its native tools read (`read_call`); any other message as it is."""
    if message.role != "assistant":
        return message
    answered = {part.call_id: part for part in message.parts if part.kind == "tool_result" and part.call_id}
    if not answered:
        return message
    called = {part.call_id for part in message.parts if part.kind == "tool_call" and part.call_id in answered}
    # What each native tool gave, as pydantic-ai recorded it (its `NativeToolReturnPart.content`, rendered as JSON).
    found = {call_id: parse_json(answered[call_id].text) if answered[call_id].text else None for call_id in called}
    parts: list[Part] = []
    for part in message.parts:
        returned = found.get(part.call_id) if part.call_id in called else None
        if isinstance(returned, dict) and _from_responses_api(returned):
            read = _responses_part(part, returned)
            if read is not None:
                parts.append(read)
        elif part.kind == "tool_result" and part.call_id in called:
            parts.append(anthropic_server_results.result_part(
                {"type": f"{_api_name(part.name or '', found[part.call_id])}_tool_result",
                 "tool_use_id": part.call_id, "content": found[part.call_id]}))
        elif part.kind == "tool_call" and part.call_id in called:
            parts.append(replace(part, name=_api_name(part.name or "", found[part.call_id]),
                                 extra={**(part.extra or {}), "run_by": "provider"}))
        elif part.kind == "text" and parts and parts[-1].kind == "text":
            # Adjacent to the text before it: one text the API split around a cited passage.
            parts[-1] = replace(parts[-1], text=(parts[-1].text or "") + (part.text or ""))
        else:
            parts.append(part)
    return replace(message, parts=parts)


def _api_name(name: str, found: Any) -> str:
    """The name the API's block gave a native tool pydantic-ai recorded by its kind: Anthropic's code execution by the
    type of its result (a command's `bash_code_execution_result`, a file edit's `text_editor_code_execution_…`)."""
    kind = found.get("type") if isinstance(found, dict) else None
    if name == _CODE_EXECUTION and isinstance(kind, str):
        return next((tool for tool in _CODE_EXECUTION_TOOLS if kind.startswith(tool)), name)
    return name


def _from_responses_api(found: dict[str, Any]) -> bool:
    """Whether a native tool's return is one of the Responses API's items as pydantic-ai renders it: a dict of the
    item's `status` and what it gave, no `type` (every Anthropic result block's dict names its type)."""
    return "status" in found and "type" not in found


def _responses_part(part: Part, found: dict[str, Any]) -> Part | None:
    """A Responses API hosted tool's call or result part (`part`, its return `found`) as a person reads it; None for a
    result that holds nothing but the item's status."""
    status = found.get("status")
    if part.kind == "tool_call" and part.name == _CODE_EXECUTION:
        arguments = parse_json(part.arguments) if isinstance(part.arguments, str) else part.arguments
        ran = arguments if isinstance(arguments, dict) else {}
        extra: dict[str, Any] = {**(part.extra or {}), "run_by": "provider"}
        if isinstance(ran.get("container_id"), str):
            extra["container_id"] = ran["container_id"]
        if isinstance(status, str):
            extra["status"] = status
        return replace(part, name=_CODE_INTERPRETER, arguments={"code": ran.get("code") or ""}, extra=extra)
    if part.kind == "tool_call":
        return openai_agents_hosted_tools.as_web_search(part, status)
    if part.kind != "tool_result":
        return part
    if part.name == _CODE_EXECUTION:
        logs = found.get("logs")
        shown = "".join(log for log in logs if isinstance(log, str)) if isinstance(logs, list) else ""
        result = Part("tool_result", call_id=part.call_id, name=_CODE_INTERPRETER, text=shown)
        if status in _UNFINISHED_RUNS:
            result.error = True
            result.extra = {"is_error": True, "error": {"status": "error", "message": f"status {status}"}}
        return result
    read = {key: value for key, value in found.items() if key != "status"}
    if not read:
        return None
    sources = read.get("sources")
    if isinstance(sources, list):  # each page a url, as a search's pages are shown; another source as given
        read["sources"] = [{"url": source["url"]} if isinstance(source, dict) and source.get("type") == _URL_SOURCE
                           and isinstance(source.get("url"), str) else source for source in sources]
    shown_found: Any = read["sources"] if list(read) == ["sources"] else read
    return Part("tool_result", call_id=part.call_id, name=part.name,
                text=json.dumps(shown_found, ensure_ascii=False))
