"""@openai/agents (JavaScript) with an MCP server's tools over stdio, traced by
@arizeai/openinference-instrumentation-openai-agents: the SDK's `mcp_tools` listings are no steps, and an MCP tool's
text content is the text the model was shown (trajectory/mappers/openai_agents_js.py, openinference.tool_execution).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import STATUS_ERROR
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents-js_openinference_mcp"
MCP_TOOLS = {"search_docs", "read_file"}


def _document() -> dict[str, Any]:
    capture = corpus.load(CAPTURE)
    return trajectory_from_spans(capture_spans(CAPTURE), session_id=capture.session_id).document()


def _results(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["source_call_id"]: r for s in corpus.llm_steps(document)
            for r in (s.get("observation") or {}).get("results") or ()}


def test_the_sdks_mcp_tool_listings_are_no_steps() -> None:
    spans = capture_spans(CAPTURE)
    listings = [span for span in spans if span.name == "mcp_tools"]
    # The SDK lists the server's tools before each of the six model calls: TOOL spans, no tool.name.
    assert len(listings) == 6
    assert all(span.attributes["openinference.span.kind"] == "TOOL" and "tool.name" not in span.attributes
               for span in listings)
    for span in listings:
        reader = SpanReader(span)
        assert openinference.map_span(reader, ()) is None
        assert reader.unused() == set()  # the names it listed are read, not reported as not understood
    document = _document()
    steps = document["steps"]
    assert [s for s in steps if s["source"] == "agent" and s.get("llm_call_count") == 0] == []
    assert "mcp_tools" not in {c["function_name"] for s in steps for c in s.get("tool_calls") or ()}
    # Each turn starts with its question (turn one after the instructions), not with a listing.
    assert [s["source"] for s in steps] == ["system", "user", "agent", "agent", "agent", "user", "agent", "agent",
                                            "agent"]


def test_an_mcp_tool_named_mcp_tools_is_still_a_tool_call() -> None:
    listing = next(span for span in capture_spans(CAPTURE) if span.name == "mcp_tools")
    called = replace(listing, attributes={**listing.attributes, "tool.name": "mcp_tools", "input.value": "{}"})
    execution = openinference.map_span(SpanReader(called), ())
    assert isinstance(execution, ToolExecution) and execution.name == "mcp_tools"


def test_mcp_results_are_the_text_the_model_was_shown() -> None:
    capture = corpus.load(CAPTURE)
    truth = corpus.GroundTruth.of(capture.llm_log)
    document = _document()
    results = _results(document)
    # Every result, MCP and function tool alike, named by the model's call id, is what the SDK sent the model.
    assert {call_id: results[call_id]["content"] for call_id in truth.tool_results} == truth.tool_results
    calls = {c["id"]: c["name"] for call in truth.calls for c in call.tool_calls}
    assert {calls[call_id] for call_id in truth.tool_results} == MCP_TOOLS | {"order_status"}
    # The search's MCP content item, recorded as `{"type": "text", "text": …}`, is its text (two lines).
    search = next(c["id"] for c in truth.calls[0].tool_calls if c["name"] == "search_docs")
    assert results[search]["content"] == "policies/refunds.md\nfaq.md"


def test_the_isError_result_is_the_text_the_model_got_and_no_span_flags_it() -> None:
    capture = corpus.load(CAPTURE)
    failing = capture.llm_log[3]["response"]["tool_calls"][1]
    assert (failing["name"], failing["arguments"]) == ("read_file", {"path": "policies/shipping.md"})
    assert failing["id"].startswith("call_") and failing["item_id"].startswith("fc_")
    read = _results(_document())[failing["id"]]
    assert read["content"] == "No such document: policies/shipping.md"
    # The server's `isError` is neither sent to the model nor on any span (the SDK's MCP tool returns the content
    # alone, the MCP SDK traces nothing): the result is not flagged, not guessed from its text.
    (span,) = [s for s in capture_spans(CAPTURE) if s.span_id == read["extra"]["span_id"]]
    assert span.status_code != STATUS_ERROR and not any("error" in key.lower() for key in span.attributes)
    assert not (read.get("extra") or {}).get("is_error")
