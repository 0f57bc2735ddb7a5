"""The Anthropic SDK with Anthropic's web search server tool beside two client tools, traced by OpenInference (the
`anthropic-sdk_openinference_web-search` capture).

The API searches the web itself, within the answer: a `server_tool_use` block, a `web_search_tool_result` block of what
it found, the text split around each cited passage with its citations, the searches counted in the usage. OpenInference
writes the search as a tool call, its results as a text of the answer (the block's JSON), each text block a text of its
own and the citations only in the span's metadata (`trajectory/mappers/anthropic_server_tools.py`). Each search must be
a call of the step that made it, run by the provider, with what it found as its result; each answer its text as the
model wrote it, its citations on the passages they cite; the re-sent answers no steps of their own; the searches
counted on their steps.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "anthropic-sdk_openinference_web-search"
SESSION = "oi-anthropic-web-search-1"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _call_steps() -> list[dict[str, Any]]:
    """The steps of the LLM calls evalkit received, in the order they were made."""
    return corpus.llm_steps(_document())


def _call_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.attributes.get("openinference.span.kind") == "LLM"),
                  key=lambda span: span.start_time_unix_nano)


def _read(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_each_web_search_is_a_call_of_the_step_that_made_it_with_what_it_found() -> None:
    """The search the API ran is a tool call of its answer's step, its query the arguments, marked run by the provider,
    and what it found (each page's url, title and age, not the encrypted content only the model reads) its result, from
    the answer itself; no step of its own, no text of the answer. The client tools beside it are as usual, the raised
    one's failure flagged on its result."""
    log, steps = _log(), _call_steps()
    assert len(steps) == len(log) == 4
    searched = 0
    for step, entry in zip(steps, log, strict=True):
        uses = entry["response"].get("server_tool_uses") or []
        calls = [c for c in step.get("tool_calls") or () if c["tool_call_id"].startswith("srvtoolu_")]
        assert [(c["tool_call_id"], c["function_name"], c["arguments"], c.get("extra")) for c in calls] == [
            (use["id"], "web_search", use["input"], {"run_by": "provider"}) for use in uses]
        results = results_by_call(step)
        for use in uses:
            result = results[use["id"]]
            assert json.loads(result["content"]) == [
                {"url": found["url"], "title": found["title"], "page_age": found["page_age"]}
                for found in use["results"]]
            assert result["extra"] == {"from": "answer"}
        searched += len(uses)
    assert searched == 3
    everything = _document()["steps"]
    assert sum(1 for step in everything for call in step.get("tool_calls") or ()
               if call["function_name"] == "web_search") == searched
    assert not any("encrypted_content" in json.dumps(step.get("message")) for step in everything)
    # The first answer: the search, then book_tickets and get_weather in parallel, book_tickets' failure on its call.
    first = steps[0]
    booking = log[0]["response"]["tool_calls"][0]
    assert [c["function_name"] for c in first["tool_calls"]] == ["web_search", "book_tickets", "get_weather"]
    assert results_by_call(first)[booking["id"]]["extra"]["is_error"] is True


def test_each_answer_is_its_text_with_its_citations_on_the_passages_they_cite() -> None:
    """The text the API split around each cited passage is the text the model wrote, and each citation is in the
    step's extra as the API gave it, its indices the passage it is on in the step's message (the streamed turn's two
    as well); an answer that cites nothing has none."""
    cited = 0
    for step, entry in zip(_call_steps(), _log(), strict=True):
        response = entry["response"]
        assert step["message"] == response["text"]
        annotations = (step.get("extra") or {}).get("annotations")
        citations = response.get("citations") or []
        if not citations:
            assert annotations is None
            continue
        assert [{key: value for key, value in note.items() if key not in ("start_index", "end_index")}
                for note in annotations] == [c["citation"] for c in citations]
        assert [step["message"][note["start_index"]:note["end_index"]] for note in annotations] == [
            c["cited"] for c in citations]
        cited += len(citations)
    assert cited == 3


def test_the_answers_re_sent_are_no_steps_of_their_own() -> None:
    """Each request re-sends the earlier answers' blocks (the search results and citations with them): read as the
    answers they repeat, they make no copied step; the session is its two questions and four answers."""
    steps = _document()["steps"]
    assert not [step["step_id"] for step in steps if step.get("is_copied_context")]
    assert [step["source"] for step in steps] == ["system", "user", "agent", "agent", "agent", "user", "agent"]


def test_the_web_searches_are_counted_on_their_steps() -> None:
    """`usage.server_tool_use.web_search_requests` (the span's metadata) is the step's `metrics.extra.web_search_
    requests`: billed apart from the tokens."""
    counted = [((step.get("metrics") or {}).get("extra") or {}).get("web_search_requests") for step in _call_steps()]
    assert counted == [entry["response"]["usage"].get("web_search_requests") for entry in _log()] == [1, None, None, 2]


def test_a_failed_search_gives_its_error_as_its_result() -> None:
    """A search the API could not run (`web_search_tool_result_error`, its `error_code`) has that error as its
    result, not a list of pages."""
    span = _call_spans()[0]
    key = "llm.output_messages.0.message.contents.1.message_content.text"
    block = json.loads(str(span.attributes[key]))
    assert block["type"] == "web_search_tool_result"
    failed = {**block, "content": {"type": "web_search_tool_result_error", "error_code": "max_uses_exceeded"}}
    call = _read(replace(span, attributes={**span.attributes, key: json.dumps(failed)}))
    (result,) = [part for message in call.output_messages for part in message.parts if part.kind == "tool_result"]
    assert (result.call_id, json.loads(result.text or "")) == (block["tool_use_id"], failed["content"])


def test_each_server_tool_the_request_offered_is_listed_as_offered() -> None:
    """Each server tool the request offered among the agent's tools, named as the request names it, with its type
    (the tool's version) and options (`max_uses`) as offered, in the request's order; the client tools as declared.
    (They were listed by their names alone.)"""
    offered = _log()[0]["request"]["tools"]
    servers = [tool for tool in offered if "type" in tool]
    assert servers
    definitions = _document()["agent"]["tool_definitions"]
    assert definitions[:len(servers)] == [{"type": "function", "function": {"name": tool["name"]},
                                           "extra": {"offered": tool}} for tool in servers]
    assert [definition["function"]["name"] for definition in definitions[len(servers):]] == [
        tool["name"] for tool in offered if "type" not in tool]
