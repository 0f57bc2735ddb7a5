"""Anthropic's server tools (its web search) in a Messages answer, as OpenInference's anthropic instrumentation records
them.

A request offering `{"type": "web_search_20250305", "name": "web_search", …}` lets the API search the web itself,
within the answer: the answer holds a `server_tool_use` block (`id` `srvtoolu_…`, `name`, `input: {"query": …}`), then
a `web_search_tool_result` block naming it (`tool_use_id`) whose `content` is what the search found, `web_search_result`
items (`url`, `title`, `page_age`, and `encrypted_content`, opaque, for the model alone), or an error
(`{"type": "web_search_tool_result_error", "error_code": …}`); its text comes after, split into a text block of each
cited passage, carrying its `web_search_result_location` citations (`url`, `title`, `cited_text`, `encrypted_index`),
and one of the text between. `usage.server_tool_use.web_search_requests` counts the searches. The client re-sends every
block unchanged in the next request's assistant message.

`openinference-instrumentation-anthropic` 3.1.0 (`_content.py`) writes a `server_tool_use` block as a tool call like a
`tool_use` one; the `web_search_tool_result` block as a generic content (its type, its JSON as the text); each text
block as a text content of its own, the citations not on it but in the span's `metadata` (by block index), beside the
`server_tool_use` counts; `output.value` is the answer's whole dump, `input.value` the request as sent.

Read here (`read_call`), on the answer and on the re-sent assistant messages alike, so that a re-sent answer is the
same message as the answer it repeats (no copied step):
- each `server_tool_use` call marked run by the provider (the ATIF call's `extra`, as a Responses API web search is:
  `openai_agents_hosted_tools`);
- each `web_search_tool_result` the result of its call, no text of the answer: what it found, each item's `url`,
  `title` and `page_age` (JSON; the encrypted content left out, which only the model reads), or the error it gave.
  The builder puts a result the answer holds for a call of it the provider ran on the call's step;
- the text blocks of one run of adjacent blocks (one text the API split around its cited passages) one text again,
  as the model wrote it, the answer's citations in the call's `extra` as the OpenAI one's annotations are
  (`openai_agents_hosted_tools.keep_annotations`): each as the API gave it, with `start_index` and `end_index`, where
  the passage it is on is in the step's message;
- the web searches the answer made (`metadata.server_tool_use.web_search_requests`) as `Usage.web_search_requests`,
  on the step's metrics, priced as genai-prices prices them ($10 per 1,000 on Anthropic: trajectory/cost.py).

The other server tools take the same path: web fetch (`web_fetch_20250910`: a `server_tool_use` named `web_fetch`, its
`input` the url, and a `web_fetch_tool_result`) and code execution (`code_execution_20250825`: a `server_tool_use`
named `bash_code_execution`, its `input` the command, or `text_editor_code_execution`, the file it views, creates or
edits, and a `bash_code_execution_tool_result` or `text_editor_code_execution_tool_result`), each call run by the
provider with its result from the answer, as a person reads each tool's (`anthropic_server_results`: a fetched
document, a command's output, a failure flagged). The fetches an answer made (`server_tool_use.web_fetch_requests`) are
`Usage.web_fetch_requests` (no fee of their own: the fetched text is billed as input tokens), and the container the
answer's code ran in (`metadata.container_id`; the client names it in its next requests to keep its files) the call's
`extra.container`.

Seen in real captures: tests/captures/anthropic-sdk_openinference_web-search and _code-execution.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import anthropic_server_results
from evalkit.trajectory.mappers.openai_agents_hosted_tools import keep_annotations
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

SERVER_TOOL_ID_PREFIX = "srvtoolu_"  # the id the API gives a server tool's call (a client tool's: `toolu_…`)
_RESULT_BLOCK_SUFFIX = "_tool_result"  # `web_search_tool_result` (and the other server tools' results)


def read_call(call: LlmCall, request: object, response: object, metadata: object) -> None:
    """`call` (a Messages call's) with its server tools' calls and results, its answer's text and citations and its web
    searches read from `request` (`input.value`), `response` (`output.value`) and `metadata` (the span's)."""
    if not any(_runs_on_server(part) for message in (*call.input_messages, *call.output_messages)
               for part in message.parts):
        return
    answer = parse_json(response)
    answered = _blocks(answer.get("content")) if isinstance(answer, dict) else []
    sent = parse_json(request)
    contents = [answered, *_assistant_contents(sent.get("messages") if isinstance(sent, dict) else None)]
    runs = _text_runs(contents)
    # Each result block as the API gave it, by its call: what the instrumentation's copy redacts (a PDF's payload).
    given = {str(block.get("tool_use_id")): block for blocks in contents for block in blocks
             if str(block.get("type", "")).endswith(_RESULT_BLOCK_SUFFIX)}
    call.input_messages = [_read_message(message, runs, given)[0] for message in call.input_messages]
    annotations: list[dict[str, Any]] = []
    read: list[Message] = []
    for message in call.output_messages:
        message, cited = _read_message(message, runs, given)
        read.append(message)
        annotations.extend(cited)
    call.output_messages = read
    keep_annotations(call, annotations)
    counts = parse_json(metadata).get("server_tool_use") if isinstance(parse_json(metadata), dict) else None
    searches = counts.get("web_search_requests") if isinstance(counts, dict) else None
    if isinstance(searches, int) and searches > 0:
        call.usage.web_search_requests = searches
    fetches = counts.get("web_fetch_requests") if isinstance(counts, dict) else None
    if isinstance(fetches, int) and fetches > 0:
        call.usage.web_fetch_requests = fetches
    container = parse_json(metadata).get("container_id") if isinstance(parse_json(metadata), dict) else None
    if isinstance(container, str) and container:
        call.extra["container"] = container


def _runs_on_server(part: Part) -> bool:
    return part.kind == "tool_call" and (part.call_id or "").startswith(SERVER_TOOL_ID_PREFIX)


def _blocks(value: object) -> list[dict[str, Any]]:
    return [block for block in value if isinstance(block, dict)] if isinstance(value, list) else []


def _assistant_contents(messages: object) -> list[list[dict[str, Any]]]:
    """The content blocks of each assistant message a request sent."""
    return [_blocks(message.get("content")) for message in messages if isinstance(message, dict)
            and message.get("role") == "assistant"] if isinstance(messages, list) else []


# A message's text blocks, in order, -> those blocks grouped in runs of adjacent ones (the API's split of one text).
_Runs = dict[tuple[str, ...], list[list[dict[str, Any]]]]


def _text_runs(contents: list[list[dict[str, Any]]]) -> _Runs:
    """Each message's text blocks grouped in runs of adjacent blocks, keyed by their texts in order: how the
    instrumentation's text contents of a message (one a block, in order) are found among the blocks."""
    runs: _Runs = {}
    for blocks in contents:
        grouped: list[list[dict[str, Any]]] = []
        after_text = False
        for block in blocks:
            is_text = block.get("type") == "text" and isinstance(block.get("text"), str)
            if is_text and after_text:
                grouped[-1].append(block)
            elif is_text:
                grouped.append([block])
            after_text = is_text
        key = tuple(block["text"] for run in grouped for block in run)
        if key:
            runs.setdefault(key, grouped)
    return runs


def _read_message(message: Message, runs: _Runs,
                  given: dict[str, dict[str, Any]]) -> tuple[Message, list[dict[str, Any]]]:
    """`message` with its server tools read (`read_call`), and the citations of its text; `given`: each result block as
    the API gave it, by its call."""
    called = {part.call_id for part in message.parts if _runs_on_server(part)}
    if not called:
        return message, []
    results: list[Part] = []
    texts: list[Part] = []
    for part in message.parts:
        found = _server_result(part, called, given) if part.kind == "text" else None
        if found is not None:
            results.append(found)
        elif part.kind == "text":
            texts.append(part)
    grouped = runs.get(tuple(part.text or "" for part in texts))
    merged, citations = _merged_texts(grouped) if grouped is not None else (texts, [])
    parts: list[Part] = []
    for part in message.parts:
        if part.kind == "text":
            continue
        parts.append(replace(part, extra={**(part.extra or {}), "run_by": "provider"}) if _runs_on_server(part)
                     else part)
        # What the provider's tool found, after its call.
        parts.extend(result for result in results if part.kind == "tool_call" and result.call_id == part.call_id)
    return replace(message, parts=[*merged, *parts]), citations


def _server_result(part: Part, called: set[str | None], given: dict[str, dict[str, Any]]) -> Part | None:
    """A text content that is a server tool's result block for a call of its message, as that call's result
    (`anthropic_server_results`: what each tool's result shows a person)."""
    block = parse_json(part.text) if (part.text or "").startswith("{") else None
    if not isinstance(block, dict) or not str(block.get("type", "")).endswith(_RESULT_BLOCK_SUFFIX) \
            or block.get("tool_use_id") not in called:
        return None
    return anthropic_server_results.result_part(block, given.get(str(block["tool_use_id"])))


def _merged_texts(grouped: list[list[dict[str, Any]]]) -> tuple[list[Part], list[dict[str, Any]]]:
    """Each run of adjacent text blocks one text part, and each block's citations placed in the message's text (the
    parts joined by a newline, as `Message.text` joins them)."""
    parts: list[Part] = []
    citations: list[dict[str, Any]] = []
    offset = 0
    for run in grouped:
        text = ""
        for block in run:
            start = offset + len(text)
            text += block["text"]
            citations.extend({**citation, "start_index": start, "end_index": start + len(block["text"])}
                             for citation in _blocks(block.get("citations")))
        parts.append(Part("text", text=text))
        offset += len(text) + 1
    return parts, citations
