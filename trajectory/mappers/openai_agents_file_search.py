"""The Responses API's hosted file search in an answer, as OpenInference's openai-agents instrumentation records it.

openai-agents' `FileSearchTool(vector_store_ids=[…])` (the request's `{"type": "file_search", …}`) is run by the API
itself while it answers: the answer holds a `file_search_call` item (`id` `fs_…`, `queries`, `status`) and, where the
request includes them (`include_search_results=True`: `include: ["file_search_call.results"]`), its `results`, each
chunk found (`file_id`, `filename`, `score`, `text`, `attributes`); the model reads them within the same answer and
nothing is sent back. The SDK re-sends the item, results and all, as history. The text it informed may carry
`file_citation` annotations (`file_id`, `filename`, `index`: where in the text the citation goes).

OpenInference's instrumentation (2.6.0, `_get_attributes_from_response_file_search_tool_call` and
`_get_attributes_from_file_search_results`) writes the item as an assistant message of one tool call named after the
item's type, `file_search_call`, its queries the arguments (`{"queries": […]}`) and its status dropped, and its results,
when there are any, as a `tool` message of their own naming the item's id, the results' JSON its content: between the
answer's other output messages (so they were not read as one answer: the function call after it a second choice,
dropped), and in a later call's input alike. It lists only function tools in `llm.tools`; the Response's dump in
`output.value` echoes every tool the request offered.

Read here (`read_call`), on the call's answer and on its input's re-sent items alike (so that a re-sent search is the
same call as the one answered, no copied step):
- each such call named as the tool the model called (`file_search`), its queries its arguments, marked run by the
  provider with the item's status (the ATIF call's `extra`, as a hosted web search is: `openai_agents_hosted_tools`);
- its results message the documents found as every retrieval lists them (`openinference_retrievers.as_document`: the
  file's id, the score, the text, and the `filename` and `attributes` as metadata), in the API's order; in the answer,
  the call's result, after the call in the answer's own message (the builder's provider-result rule puts it on the
  call's step: what the search found, from the answer itself); re-sent, a `tool` message of its own still (a result
  of a call already answered), the re-sent call alone in its message as the SDK sent it, no copied step. A search
  whose results were not included has none, as a web search has none;
- (a `file_search` tool the request offered is listed among the call's tool definitions, with its vector stores and
  result count, by the rule for every tool the provider defines: `hosted_tool_definitions`).
The answer's `file_citation` annotations are kept as any annotation is (`openai_agents_hosted_tools.read_call`).

Seen in a real capture: tests/captures/openai-agents_openinference_file-search.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers.openinference_retrievers import as_document
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

FILE_SEARCH = "file_search"  # the tool as the request names it (`{"type": "file_search"}`) and the SDK's FileSearchTool
_ITEM = "file_search_call"  # the item's type: the name the instrumentation gives the call


def read_call(call: LlmCall, response: object, request: object) -> None:
    """`call` (an openai-agents `response` span's) with its file searches read from `response` (the span's
    `output.value`, the Response) and `request` (its `input.value`, the items sent)."""
    if _searched(call.output_messages):
        answer = parse_json(response)
        call.output_messages = _read_searches(call.output_messages, _items(answer, "output"), answered=True)
    if _searched(call.input_messages):
        call.input_messages = _read_searches(call.input_messages, _items(parse_json(request), None), answered=False)


def _searched(messages: list[Message]) -> bool:
    return any(part.kind == "tool_call" and part.name == _ITEM for message in messages for part in message.parts)


def _items(value: Any, key: str | None) -> list[dict[str, Any]]:
    """A Response's output items (`key` "output"), or the input items sent (a list itself: `key` None)."""
    items = value.get(key) if key is not None and isinstance(value, dict) else value
    return _dicts(items)


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _read_searches(messages: list[Message], items: list[dict[str, Any]], *, answered: bool) -> list[Message]:
    """`messages` with each file search call read as the provider's `file_search` call, and the `tool` message of its
    results the documents found; in the answer (`answered`), that the call's result, in the message of the call right
    after it. Re-sent, the results stay a message of their own: the call's result is its answer's, and the re-sent call
    alone is the answer's message again (already produced, no copied step), which it would not be holding a result."""
    by_id = {item.get("id"): item for item in items if item.get("type") == _ITEM}
    read: list[Message] = []
    searches: set[str | None] = set()  # the searches of the message read last, whose results may follow it
    for message in messages:
        results = [part for part in message.parts if part.kind == "tool_result" and part.call_id in searches]
        if read and results and len(results) == len(message.parts):
            found = [_found(part, by_id.get(part.call_id)) for part in results]
            if answered:
                read[-1] = replace(read[-1], parts=_after_their_calls(read[-1].parts, found))
            else:
                read.append(replace(message, parts=found))
            searches = set()
            continue
        searches = {part.call_id for part in message.parts if part.kind == "tool_call" and part.name == _ITEM}
        if searches:
            message = replace(message, parts=[_as_file_search(part, by_id.get(part.call_id))
                                              if part.kind == "tool_call" and part.name == _ITEM else part
                                              for part in message.parts])
        read.append(message)
    return read


def _as_file_search(part: Part, item: dict[str, Any] | None) -> Part:
    """`part`, a tool call holding a file search item's id and queries, as the model's call of the `file_search` tool
    that the provider ran, with the item's `status`."""
    extra: dict[str, Any] = {"run_by": "provider"}
    status = item.get("status") if item is not None else None
    if isinstance(status, str):
        extra["status"] = status
    return replace(part, name=FILE_SEARCH, extra=extra)


def _found(part: Part, item: dict[str, Any] | None) -> Part:
    """A file search's results message as its call's result: the documents found, from its item (else as the message
    holds them)."""
    given = item.get("results") if item is not None else None
    results = given if isinstance(given, list) else parse_json(part.text)
    documents = [as_document({"id": result.get("file_id"), "score": result.get("score"), "content": result.get("text"),
                              "metadata": _metadata(result)}) for result in _dicts(results)]
    return replace(part, name=FILE_SEARCH, text=json.dumps(documents, ensure_ascii=False))


def _metadata(result: dict[str, Any]) -> dict[str, Any] | None:
    """What a result says of its file beside its id: its `filename` and `attributes` (the vector store file's)."""
    found = {key: result[key] for key in ("filename", "attributes") if result.get(key)}
    return found or None


def _after_their_calls(parts: list[Part], results: list[Part]) -> list[Part]:
    """`parts` with each result right after the call it answers."""
    placed: list[Part] = []
    for part in parts:
        placed.append(part)
        placed.extend(result for result in results if part.kind == "tool_call" and result.call_id == part.call_id)
    return placed

