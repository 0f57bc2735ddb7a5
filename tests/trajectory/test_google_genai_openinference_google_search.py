"""Gemini's Google Search grounding under OpenInference's google-genai instrumentation (the
`google-genai_openinference_google-search` capture's trace exports).

The API searches the web itself and says so only in the candidate's `groundingMetadata`, which the instrumentation
keeps only in `output.value` (trajectory/mappers/gemini_grounding.py): each grounded answer's search is a call the
provider ran, its queries the arguments, the pages it found its result; the passages the answer grounds are
citations on the step's text. Checked against the fake LLM's log, the ground truth.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document

from tests.captures import corpus

CAPTURE = "google-genai_openinference_google-search"
SESSION = "oi-genai-grounded-1"


def _steps_by_text() -> tuple[list[dict[str, Any]], dict[str, dict[str, Any]]]:
    """The log's calls, and the session's agent steps by their message."""
    document = capture_document(CAPTURE, SESSION)
    steps = {step["message"]: step for step in document["steps"] if step["source"] == "agent"}
    return corpus.load(CAPTURE).llm_log, steps


def test_each_grounded_answer_is_a_google_search_the_provider_ran_with_what_it_found() -> None:
    log, steps = _steps_by_text()
    grounded = [entry for entry in log if entry["response"].get("grounding_metadata")]
    assert [entry["stream"] for entry in grounded] == [False, True]  # the metadata of an answer streamed or not
    for entry in grounded:
        metadata = entry["response"]["grounding_metadata"]
        step = steps[entry["response"]["text"]]
        (search,) = step["tool_calls"]
        assert search["function_name"] == "google_search"
        assert search["arguments"] == {"queries": metadata["webSearchQueries"]}
        assert search["extra"]["run_by"] == "provider"
        assert search["extra"]["search_entry_point"] == metadata["searchEntryPoint"]["renderedContent"]
        # What it found, from the answer itself: each page's url and title, not the step's text.
        (result,) = step["observation"]["results"]
        assert result["source_call_id"] == search["tool_call_id"]
        assert result["extra"]["from"] == "answer"
        assert json.loads(result["content"]) == [{"url": chunk["web"]["uri"], "title": chunk["web"]["title"]}
                                                 for chunk in metadata["groundingChunks"]]
    # The answers grounded in no search call none, and no step's text holds the metadata.
    for entry in log:
        if not entry["response"].get("grounding_metadata") and entry["response"]["text"]:
            assert all(call["function_name"] != "google_search" for call in steps[entry["response"]["text"]]
                       .get("tool_calls") or ())
    assert not any("vertexaisearch" in text or "grounding" in text for text in steps)


def test_the_grounded_passages_are_citations_on_the_step_text() -> None:
    log, steps = _steps_by_text()
    for entry in (e for e in log if e["response"].get("grounding_metadata")):
        metadata = entry["response"]["grounding_metadata"]
        step = steps[entry["response"]["text"]]
        # One citation a page supporting a passage; the API's offsets are UTF-8 bytes (the answers hold a dash, a
        # cedilla or a euro sign before a passage), the annotations' characters of the step's message.
        wanted = [(support["segment"]["text"], metadata["groundingChunks"][index]["web"]["uri"])
                  for support in metadata["groundingSupports"] for index in support["groundingChunkIndices"]]
        annotations = step["extra"]["annotations"]
        assert [(step["message"][a["start_index"]:a["end_index"]], a["url"]) for a in annotations] == wanted
        assert {a["type"] for a in annotations} == {"grounding_support"}
        assert any(len(step["message"][:a["start_index"]].encode()) != a["start_index"] for a in annotations)


def test_the_search_tool_the_requests_offered_is_listed() -> None:
    """The `google_search` tool among the agent's tools, named as the SDK names it, with the options it was offered
    (none: `GoogleSearch()`), as every tool a provider defines is listed."""
    document = capture_document(CAPTURE, SESSION)
    names = [definition["function"]["name"] for definition in document["agent"]["tool_definitions"]]
    assert names == ["google_search", "get_weather", "get_opening_hours"]
    [options] = [tool["googleSearch"] for tool in corpus.load(CAPTURE).llm_log[0]["request"]["tools"]
                 if "googleSearch" in tool]
    assert document["agent"]["tool_definitions"][0] == {
        "type": "function", "function": {"name": "google_search"}, "extra": {"offered": {"google_search": options}}}
