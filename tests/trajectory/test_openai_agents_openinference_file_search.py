"""openai-agents with the hosted `FileSearchTool` (`include_search_results=True`) beside a function tool, traced by
OpenInference (the `openai-agents_openinference_file-search` capture).

The API runs a file search itself while it answers: a `file_search_call` item of the answer, its queries, its status
and (included) the chunks it found; nothing is sent back, and the SDK re-sends the item as history. OpenInference
writes the item as a tool call named `file_search_call`, without its status, and its results as a `tool` message of
their own between the answer's output messages (`trajectory/mappers/openai_agents_file_search.py`). Each search must be
a call of the step that made it, named as the tool, marked run by the provider with its status, what it found its
result (the documents, as every retrieval lists them), and the answer's function calls beside it; a re-sent search no
copied step; the answers' file citations kept.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_file-search"
SESSION = "oa-oi-file-search-1"
_OUTPUT = "llm.output_messages."


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _response_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.attributes.get("openinference.span.kind") == "LLM"),
                  key=lambda span: span.start_time_unix_nano)


def _read(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def _as_documents(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The chunks a file search found (the API's `results`), as every retrieval lists its documents: id, score,
    content, metadata."""
    return [{"id": r["file_id"], "score": r["score"], "content": r["text"],
             "metadata": {"filename": r["filename"], "attributes": r["attributes"]}} for r in results]


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """One step per call with its text and tool calls (each file search among them, by its item's id), every function
    result on its call, each question once, the tokens: nothing copied from the re-sent history."""
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(_log()), call_ids=True) == []
    assert [step["source"] for step in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user",
                                                               "agent"]
    assert not any(step.get("is_copied_context") for step in document["steps"])


def test_each_file_search_is_a_call_of_the_step_that_made_it_run_by_the_provider() -> None:
    """The search the API ran is a tool call of its answer's step, named as the tool the agent was given, its queries
    the arguments and its status kept, marked run by the provider; the function call the model made after it in the
    same answer is on the same step, its raised failure flagged on its result."""
    log, steps = _log(), corpus.llm_steps(_document())
    assert len(steps) == len(log) == 4
    searched = 0
    for step, entry in zip(steps, log, strict=True):
        searches = entry["response"].get("file_search_calls") or []
        calls = [c for c in step.get("tool_calls") or () if c["tool_call_id"].startswith("fs_")]
        assert [(c["tool_call_id"], c["function_name"], c["arguments"], c.get("extra")) for c in calls] == [
            (s["id"], "file_search", {"queries": s["queries"]}, {"run_by": "provider", "status": s["status"]})
            for s in searches]
        searched += len(searches)
    assert searched == 2
    first, booking = steps[0], log[0]["response"]["tool_calls"][0]
    assert [c["function_name"] for c in first["tool_calls"]] == ["file_search", "book_hotel"]
    assert first["tool_calls"][1]["tool_call_id"] == booking["id"]
    assert results_by_call(first)[booking["id"]]["extra"]["is_error"] is True
    named = [call["function_name"] for step in _document()["steps"] for call in step.get("tool_calls") or ()]
    assert "file_search_call" not in named and named.count("file_search") == searched


def test_what_each_search_found_is_its_result_from_the_answer() -> None:
    """The chunks the API sent with the answer (the request included them) are the search's result on its step, the
    documents as every retrieval lists them (the file's id, the score, the text, the filename and attributes), in the
    API's order; no re-sent copy of them is the result of another call."""
    log, steps = _log(), corpus.llm_steps(_document())
    for step, entry in zip(steps, log, strict=True):
        results = results_by_call(step)
        for search in entry["response"].get("file_search_calls") or ():
            assert "file_search_call.results" in entry["request"]["include"]
            found = results[search["id"]]
            assert found["extra"] == {"from": "answer"}
            # The SDK parsed the attributes as `str | float | bool`: a year came back a float, as the span has it.
            assert json.loads(found["content"]) == _as_documents(search["results"])
    everything = [result for step in _document()["steps"]
                  for result in (step.get("observation") or {}).get("results") or ()]
    assert sorted(r["source_call_id"] for r in everything) == sorted(
        [s["id"] for e in log for s in e["response"].get("file_search_calls") or ()]
        + [c["id"] for e in log for c in e["response"]["tool_calls"]])


def test_a_resent_file_search_is_the_call_it_was() -> None:
    """The SDK re-sends a search's item, results and all, as history: the next call's input holds it as the same
    provider's call, its status read from the item sent (`input.value`), and its results a `tool` message of their own
    (the call's result is its answer's), the documents found as the answer's result lists them."""
    span = _response_spans()[1]
    sent = next(item for item in json.loads(str(span.attributes["input.value"]))
                if item.get("type") == "file_search_call")
    call = _read(span)
    [resent] = [part for message in call.input_messages for part in message.tool_calls if part.call_id == sent["id"]]
    assert (resent.name, resent.arguments, resent.extra) == (
        "file_search", {"queries": sent["queries"]}, {"run_by": "provider", "status": sent["status"]})
    [holder] = [message for message in call.input_messages if resent in message.parts]
    assert holder.parts == [resent]
    [results] = [message for message in call.input_messages
                 if any(part.call_id == sent["id"] for part in message.tool_results)]
    assert results.role == "tool"
    assert [json.loads(part.text or "") for part in results.parts] == [_as_documents(sent["results"])]


def test_the_agent_lists_the_file_search_tool() -> None:
    """OpenInference lists function tools alone (`llm.tools`); the Response echoes the `file_search` tool the request
    offered, listed among the agent's tools with the options it was offered."""
    assert not any("file_search" in str(value) for key, value in _response_spans()[0].attributes.items()
                   if key.startswith("llm.tools."))
    definitions = {definition["function"]["name"]: definition
                   for definition in _document()["agent"]["tool_definitions"]}
    assert sorted(definitions) == ["book_hotel", "file_search"]
    # As the request offered it: its vector stores and result count, the options left unset (`null`) left out.
    [offered] = [tool for tool in _log()[0]["request"]["tools"] if tool["type"] == "file_search"]
    assert definitions["file_search"] == {
        "type": "function", "function": {"name": "file_search"},
        "extra": {"offered": {key: value for key, value in offered.items() if value is not None}}}
    assert definitions["file_search"]["extra"]["offered"]["vector_store_ids"] == ["vs_travel_policy_2026"]
    assert definitions["file_search"]["extra"]["offered"]["max_num_results"] == 2


def test_each_answer_keeps_its_file_citations() -> None:
    """The `file_citation` annotations the API put on an answer's text, as it gave them, in its step's extra (the
    streamed turn's too): each cites a file a search of the session found by then, at an `index` within the step's
    message. (Kept before too, by the rule every Responses annotation is; but the streamed answer's text they index was
    a second choice behind the search's results message, its step's message empty.)"""
    found: set[str] = set()
    for step, entry in zip(corpus.llm_steps(_document()), _log(), strict=True):
        found.update(r["file_id"] for s in entry["response"].get("file_search_calls") or () for r in s["results"])
        annotations = entry["response"].get("annotations")
        assert step["extra"].get("annotations") == annotations
        for annotation in annotations or ():
            assert annotation["type"] == "file_citation" and annotation["file_id"] in found
            assert 0 < annotation["index"] <= len(step["message"])
    assert sum(1 for entry in _log() if entry["response"].get("annotations")) == 2


def _without_results(span: Span) -> Span:
    """The first call's span as the instrumentation writes it for a search whose results the request did not include:
    the item's `results` null, no `tool` message, the function call a second call of the search's message."""
    attributes = {key: value for key, value in span.attributes.items()
                  if not key.startswith((_OUTPUT + "1.", _OUTPUT + "2."))}
    for key, value in span.attributes.items():
        if key.startswith(_OUTPUT + "2.message.tool_calls.0."):
            attributes[key.replace(_OUTPUT + "2.message.tool_calls.0.", _OUTPUT + "0.message.tool_calls.1.")] = value
    response = json.loads(str(span.attributes["output.value"]))
    for item in response["output"]:
        if item["type"] == "file_search_call":
            item["results"] = None
    attributes["output.value"] = json.dumps(response)
    return replace(span, attributes=attributes)


def test_a_search_whose_results_were_not_included_has_none() -> None:
    """Without `include_search_results` the answer says what was searched, not what was found: the search is the
    provider's call all the same, with no result (as a web search has none), the function call beside it. (The first
    call alone and the tool it ran: later calls re-send the item as the capture's answer gave it, results and all.)"""
    first, second = _response_spans()[:2]
    spans = [_without_results(span) if span.span_id == first.span_id else span for span in capture_spans(CAPTURE)
             if span.start_time_unix_nano < second.start_time_unix_nano]
    step = corpus.llm_steps(trajectory_from_spans(spans, session_id=SESSION).document())[0]
    search = _log()[0]["response"]["file_search_calls"][0]
    assert [(c["tool_call_id"], c["function_name"], c.get("extra")) for c in step["tool_calls"]] == [
        (search["id"], "file_search", {"run_by": "provider", "status": "completed"}),
        (_log()[0]["response"]["tool_calls"][0]["id"], "book_hotel", None)]
    assert search["id"] not in results_by_call(step)
