"""LangGraph's `create_agent` with an MCP server's tools (langchain-mcp-adapters), traced by OpenInference: the MCP
tools are ordinary tool calls, each result the text the model was sent, the `isError` one flagged.

langchain-mcp-adapters turns an MCP result into LangChain content blocks (`[{"type": "text", "text", "id"}]`) and an
`isError` result into a ToolMessage with `status="error"`; the tracer records the ToolMessage as the tool's output,
read as any LangChain tool's (`trajectory/mappers/tool_results.py`). The MCP protocol work (initialize, tools/list,
a new server process per call) is in no span. The server's own tool spans are traces of their own: OpenInference's
LangChain tracer never makes its spans current (`_tracer.py`), so the MCP instrumentor has no context to send.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "langgraph_openinference_mcp"
SESSION = "lg-oi-mcp-1"
SERVER_SCOPE = "travel-mcp"  # the tracer travel_server.py makes its tool spans with


def _results(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {r["source_call_id"]: r for step in corpus.llm_steps(document)
            for r in (step.get("observation") or {}).get("results") or ()}


def test_mcp_results_are_the_text_the_model_was_sent_and_the_error_flagged() -> None:
    capture = corpus.load(CAPTURE)
    truth = corpus.GroundTruth.of(capture.llm_log)
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION).document()
    assert len(corpus.llm_steps(document)) == len(truth.calls) == 5
    # Every step but the system prompt and the two questions is an LLM call's: no MCP protocol work as steps.
    assert [s["source"] for s in document["steps"] if not s.get("llm_call_count")] == ["system", "user", "user"]
    results = _results(document)
    assert {call_id: results[call_id]["content"] for call_id in truth.tool_results} == truth.tool_results
    # Call 0's get_weather: the server raised, FastMCP answered `isError`, the adapter's ToolMessage says "error".
    failing = capture.llm_log[0]["response"]["tool_calls"][1]
    assert failing["name"] == "get_weather"
    assert results[failing["id"]]["content"] == (
        "Error executing tool get_weather: the weather service did not answer in time")
    assert [call_id for call_id, r in results.items() if (r.get("extra") or {}).get("is_error")] == [failing["id"]]
    assert results[failing["id"]]["extra"]["error"] == {"status": "error", "from": "langchain.ToolMessage"}


def test_the_mcp_servers_spans_are_traces_of_their_own_and_add_nothing() -> None:
    spans = capture_spans(CAPTURE)
    server = [span for span in spans if span.scope_name == SERVER_SCOPE]
    agent = [span for span in spans if span.scope_name != SERVER_SCOPE]
    assert sorted(span.name for span in server) == [
        "book_hotel.reserve", "convert_currency.rate", "get_weather.forecast", "get_weather.forecast"]
    # No context reached the server: each of its spans is the root of a trace no agent span is in.
    assert all(not span.parent_span_id for span in server)
    assert not {span.trace_id for span in server} & {span.trace_id for span in agent}
    with_server = trajectory_from_spans(spans, session_id=SESSION).document()
    without = trajectory_from_spans(agent, session_id=SESSION).document()
    assert with_server["steps"] == without["steps"]
