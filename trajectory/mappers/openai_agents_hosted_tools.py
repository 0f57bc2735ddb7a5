"""The Responses API's hosted tools in an answer, as OpenInference's openai-agents instrumentation records them.

A hosted tool (openai-agents' `WebSearchTool()`, the request's `{"type": "web_search"}`) is run by the API itself
while it answers: the answer holds a `web_search_call` item (`id` `ws_…`, `action: {"type": "search", "query": …}`,
`status`), the text it informed carries `url_citation` annotations, and no result is ever sent back (the next call
re-sends the item as it came). OpenInference's instrumentation (2.6.0,
`_get_attributes_from_response_function_web_search`) writes the item as a tool call named after the item's type,
`web_search_call`, its action (keys sorted) the arguments, and drops its status; the annotations it writes nowhere but
the Response's dump in `output.value`.

Read here (`read_call`), on the call's answer and on its input's re-sent items alike:
- each such call named as the tool the model called (`web_search`), its action its arguments, and marked run by the
  provider with the item's status (the ATIF call's `extra`; the `sources` the search consulted, when the request
  included them, are what it found, not what it was asked: kept there too). It gets no result: the API used what it
  found within the same answer, the model was sent none, and no span records one.
- the answer's annotations (its citations), each as the API gave it, in the call's `extra` (so its step's):
  `annotations`, their indices into the text of the answer.

- the web searches the answer ran that OpenAI bills (`count_billed_searches`): its Responses usage counts none, and
  OpenAI bills each `web_search_call` whose action is a `search` (an `open_page` or `find_in_page` action is no
  search), as pydantic-ai counts them (`models/openai/_response_fields.py`, `billed_web_searches`); counted on the
  answer alone (a search the history re-sends was billed to the call that ran it) as `Usage.web_search_requests`,
  which prices them (genai-prices' OpenAI rate, per thousand).

The three rules, a search read as the provider's call (`as_web_search`), an answer's citations kept
(`keep_annotations`) and its billed searches counted (`count_billed_searches`), are OpenTelemetry's openai-agents
instrumentation's too (`otel_openai_agents`), which records the same items its own way.

Seen in tests/captures/openai-agents_openinference_hosted-tools and openai-agents_otel-genai_hosted-tools.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

WEB_SEARCH = "web_search"  # the tool as the request names it (`{"type": "web_search"}`) and the SDK's WebSearchTool
_WEB_SEARCH_ITEM = "web_search_call"  # the item's type: the name the instrumentation gives the call
_BILLED_ACTION = "search"  # the web search action OpenAI bills (per call); `open_page`, `find_in_page` are not
# Whether a Response's dump holds an annotation at all, before it is parsed for them (most answers hold none).
_ANNOTATED = re.compile(r'"annotations"\s*:\s*\[\s*\{')


def read_call(call: LlmCall, response: object, request: object) -> None:
    """`call` (an openai-agents `response` span's) with its hosted tool calls and its answer's annotations read from
    `response` (the span's `output.value`, the Response) and `request` (its `input.value`, the items sent)."""
    answered = _has_hosted_call(call.output_messages)
    resent = _has_hosted_call(call.input_messages)
    annotated = isinstance(response, str) and _ANNOTATED.search(response) is not None
    if not (answered or resent or annotated):
        return
    output = _items(parse_json(response), "output") if answered or annotated else []
    if answered:
        call.output_messages = _hosted_calls(call.output_messages, output)
        count_billed_searches(call)
    if resent:
        call.input_messages = _hosted_calls(call.input_messages, _items(parse_json(request), None))
    annotations = [annotation for item in output if item.get("type") == "message"
                   for content in _dicts(item.get("content")) for annotation in _dicts(content.get("annotations"))]
    keep_annotations(call, annotations)


def keep_annotations(call: LlmCall, annotations: list[dict[str, Any]]) -> None:
    """`call` given its answer's annotations (its citations), each as the API gave it, their indices into its text."""
    if annotations:
        call.extra["annotations"] = annotations


def count_billed_searches(call: LlmCall) -> None:
    """`call`'s `Usage.web_search_requests`, which its usage does not count: its answer's web searches the provider
    ran (read by `as_web_search`) whose action is a `search`, the one action OpenAI bills. A count the emitter
    recorded is kept."""
    searches = sum(1 for message in call.output_messages for part in message.parts if _billed_search(part))
    if searches and not call.usage.web_search_requests:
        call.usage.web_search_requests = searches


def _billed_search(part: Part) -> bool:
    return (part.kind == "tool_call" and part.name == WEB_SEARCH and isinstance(part.arguments, dict)
            and part.arguments.get("type") == _BILLED_ACTION and (part.extra or {}).get("run_by") == "provider")


def _has_hosted_call(messages: list[Message]) -> bool:
    return any(part.kind == "tool_call" and part.name == _WEB_SEARCH_ITEM for m in messages for part in m.parts)


def _items(value: Any, key: str | None) -> list[dict[str, Any]]:
    """A Response's output items (`key` "output"), or the input items sent (a list itself: `key` None)."""
    items = value.get(key) if key is not None and isinstance(value, dict) else value
    return _dicts(items)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _hosted_calls(messages: list[Message], items: list[dict[str, Any]]) -> list[Message]:
    """`messages` with each web search call the provider ran read as such, its status from its item in `items`."""
    by_id = {item.get("id"): item for item in items if item.get("type") == _WEB_SEARCH_ITEM}
    read: list[Message] = []
    for message in messages:
        if any(part.kind == "tool_call" and part.name == _WEB_SEARCH_ITEM for part in message.parts):
            message = replace(message, parts=[_web_search(part, by_id.get(part.call_id))
                                              if part.kind == "tool_call" and part.name == _WEB_SEARCH_ITEM else part
                                              for part in message.parts])
        read.append(message)
    return read


def _web_search(part: Part, item: dict[str, Any] | None) -> Part:
    return as_web_search(part, item.get("status") if item is not None else None)


def as_web_search(part: Part, status: object) -> Part:
    """`part`, a tool call holding a web search item's id and action, as the model's call of the `web_search` tool that
    the provider ran, with the item's `status`: the action its arguments but for the `sources` it consulted."""
    arguments = dict(part.arguments) if isinstance(part.arguments, dict) else part.arguments
    extra: dict[str, Any] = {"run_by": "provider"}
    if isinstance(status, str):
        extra["status"] = status
    if isinstance(arguments, dict) and "sources" in arguments:
        extra["sources"] = arguments.pop("sources")
    return replace(part, name=WEB_SEARCH, arguments=arguments, extra=extra)
