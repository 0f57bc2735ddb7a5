"""Gemini's Google Search grounding in an answer, as OpenInference's google-genai instrumentation records it.

A request offering `types.Tool(google_search=types.GoogleSearch())` (`{"google_search": {}}` in the request the SDK
serialises) lets the Gemini API search the web itself while it answers. Unlike Anthropic's web search and the
Responses API's, the answer's content holds no trace of it (gemini-2.5 answers with text alone; Gemini 3 writes
`toolCall` / `toolResponse` parts only when asked to, `include_server_side_tool_invocations`): the candidate's
`groundingMetadata` says it, `webSearchQueries` (what was searched), `groundingChunks` (the pages used, each
`web: {uri, title}`: a grounding redirect and the page's domain), `groundingSupports` (each passage of the answer by
its `segment`, UTF-8 byte offsets into a part's text and the text, and the `groundingChunkIndices` supporting it) and
`searchEntryPoint` (the Search Suggestions HTML, `renderedContent`, Google's terms ask an application to show). No
result is ever sent back: a later request re-sends the answer's text only.

`openinference-instrumentation-google-genai` 1.4.14 writes the output messages from the candidate's content alone, so
the search is in no message; `output.value` is the whole response, the SDK's dump (snake_case: `grounding_metadata`,
`web_search_queries`, …), streamed or not (its stream accumulator keeps keys it does not know). OpenTelemetry's
google-genai instrumentation 1.3b0 records no response dump: a grounded answer is its text alone there.

Read here (`read_call`), as a search the provider ran is read for Anthropic (`anthropic_server_tools`) and the
Responses API (`openai_agents_hosted_tools`):
- the answer's searches one `google_search` call of its step (the tool as the SDK names it), its queries the arguments
  (`{"queries": […]}`, as Gemini 3's `toolCall` of a search gives them), marked run by the provider, with the Search
  Suggestions HTML; the API gives it no id, so it is named after its span (`<span id>-google_search`, the builder's
  form for an id it makes up). What it found, each page's `url` and `title`, is its result, from the answer itself
  (the builder's provider-result rule), not JSON in the step's text;
- each support the answer's citations in the call's `extra` (`keep_annotations`, as the OpenAI and Anthropic ones):
  one `grounding_support` annotation per page supporting a passage, its `url` and `title`, the passage's
  `start_index` and `end_index` in characters of the step's message (the API's are bytes of a part), the chunk's index
  (and its confidence, where the API gives one);
- the searches not counted in `Usage.web_search_requests`, which prices them: Gemini bills a gemini-2.x grounded
  answer once whatever its queries ($35 per 1,000 grounded prompts) and Gemini 3 each query ($14 per 1,000), and the
  session list, which must agree with the trajectory's cost, has no count for this scope (a migration's work);
- a `google_search` tool the request offered listed among the call's tool definitions, its options as offered, by the
  rule for every tool a provider defines (`hosted_tool_definitions`: OpenInference writes it as `{"google_search": {}}`
  in `llm.tools` too, which names no function).

Seen in a real capture: tests/captures/google-genai_openinference_google-search.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import hosted_tool_definitions
from evalkit.trajectory.mappers.openai_agents_hosted_tools import keep_annotations
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import LlmCall, Message, Part

GOOGLE_SEARCH = "google_search"  # the tool as the SDK names it (`types.Tool(google_search=…)`)
_GROUNDED = ("grounding_metadata", "groundingMetadata")  # the SDK's dump's key, the API's
_OFFERED = (GOOGLE_SEARCH, "googleSearch")


def read_call(call: LlmCall, request: object, response: object) -> None:
    """`call` (a google-genai call's) with the Google Search its answer was grounded in read from `response` (the span's
    `output.value`, the response's dump), and the search tool `request` (its `input.value`) offered listed."""
    if isinstance(request, str) and any(f'"{key}"' in request for key in _OFFERED):
        hosted_tool_definitions.offered(call, _field(parse_json(request), "tools"))
    if not (isinstance(response, str) and any(f'"{key}"' in response for key in _GROUNDED)):
        return
    answer = parse_json(response)
    candidates = _field(answer, "candidates")
    candidate = candidates[0] if isinstance(candidates, list) and candidates and isinstance(candidates[0], dict) else {}
    metadata = _field(candidate, *_GROUNDED)
    queries = [query for query in _field(metadata, "web_search_queries", "webSearchQueries") or ()
               if isinstance(query, str)]
    if not queries:
        return
    pages = [_page(chunk) for chunk in _dicts(_field(metadata, "grounding_chunks", "groundingChunks"))]
    call_id = f"{call.span.span_id}-{GOOGLE_SEARCH}"
    extra: dict[str, Any] = {"run_by": "provider", "synthesized_id": True}
    entry = _field(_field(metadata, "search_entry_point", "searchEntryPoint"), "rendered_content", "renderedContent")
    if isinstance(entry, str) and entry:
        extra["search_entry_point"] = entry  # the Search Suggestions to show beside the answer
    searched = [Part("tool_call", call_id=call_id, name=GOOGLE_SEARCH, arguments={"queries": queries}, extra=extra),
                Part("tool_result", call_id=call_id, name=GOOGLE_SEARCH,
                     text=json.dumps([page for page in pages if page], ensure_ascii=False))]
    answered = next((m for m in call.output_messages if m.role in ("model", "assistant")), None)
    if answered is None:
        call.output_messages = [Message("assistant", searched), *call.output_messages]
        answered = call.output_messages[0]
    else:  # the search before what the model wrote and called, as it ran
        position = call.output_messages.index(answered)
        answered = replace(answered, parts=[*searched, *answered.parts])
        call.output_messages[position] = answered
    parts = _dicts(_field(_field(candidate, "content"), "parts"))
    keep_annotations(call, _annotations(_dicts(_field(metadata, "grounding_supports", "groundingSupports")), pages,
                                        parts, answered.text))


def _field(value: object, *keys: str) -> Any:
    """`value`'s first of `keys` it holds (the SDK's snake_case name, the API's camelCase one), None if none."""
    if not isinstance(value, dict):
        return None
    return next((value[key] for key in keys if value.get(key) is not None), None)


def _dicts(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _page(chunk: dict[str, Any]) -> dict[str, str]:
    """A grounding chunk as a person reads what was found: its page's `url` and `title` (a web page's, or a retrieved
    context's or a map's alike)."""
    source = next((value for value in chunk.values() if isinstance(value, dict) and value.get("uri")), {})
    return {key: str(source[name]) for key, name in (("url", "uri"), ("title", "title")) if source.get(name)}


def _annotations(supports: list[dict[str, Any]], pages: list[dict[str, str]], parts: list[dict[str, Any]],
                 message: str) -> list[dict[str, Any]]:
    """Each page supporting a passage of the answer one `grounding_support` annotation, the passage's indices in
    characters of the step's `message`."""
    found: list[dict[str, Any]] = []
    for support in supports:
        where = _passage(_field(support, "segment"), parts, message)
        if where is None:
            continue
        indices = _field(support, "grounding_chunk_indices", "groundingChunkIndices") or ()
        scores = _field(support, "confidence_scores", "confidenceScores") or ()
        for position, index in enumerate(indices):
            if not isinstance(index, int) or not 0 <= index < len(pages) or not pages[index].get("url"):
                continue
            annotation: dict[str, Any] = {"type": "grounding_support", **pages[index], "start_index": where[0],
                                          "end_index": where[1], "grounding_chunk_index": index}
            if position < len(scores):
                annotation["confidence_score"] = scores[position]
            found.append(annotation)
    return found


def _passage(segment: object, parts: list[dict[str, Any]], message: str) -> tuple[int, int] | None:
    """A support's segment as character offsets into `message`: its byte offsets into its part's text (`part_index`,
    0 left out as proto3 JSON leaves out a default), where that text is in the message; else where the segment's text
    is; None if neither is found."""
    if not isinstance(segment, dict):
        return None
    text = _field(segment, "text")
    index = _field(segment, "part_index", "partIndex") or 0
    part = _field(parts[index], "text") if isinstance(index, int) and 0 <= index < len(parts) else None
    if isinstance(part, str) and (offset := message.find(part)) >= 0:
        encoded = part.encode()
        start = offset + len(encoded[:_field(segment, "start_index", "startIndex") or 0].decode(errors="ignore"))
        end = offset + len(encoded[:_field(segment, "end_index", "endIndex") or 0].decode(errors="ignore"))
        if start < end and (not isinstance(text, str) or message[start:end] == text):
            return start, end
    if isinstance(text, str) and text and (start := message.find(text)) >= 0:
        return start, start + len(text)
    return None

