"""A Mastra agent using an MCP server's tools (`@mastra/mcp`'s `MCPClient` over stdio) beside a local tool, traced by
`@mastra/otel-exporter` (the `mastra_native_mcp` capture; trajectory/mappers/mastra.py, mastra_model_outputs.py).

An MCP tool's span is typed `mcp_tool_call` and names its server; an `isError` result is thrown by `MCPClient` (its
default `onToolError`), the span's error the result's text, which the model was sent. An MCP tool with an output
schema returns the server's `structuredContent`, which its span records, while the model is sent the result's text
(`toModelOutput`), which only the tool-result chunk records. Mastra traces no MCP protocol work of its own.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import mastra, mastra_model_outputs
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "mastra_native_mcp"
SESSION = "mastra-mcp-weather-thread-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _sent_outputs() -> dict[str, str]:
    """Each tool result the model was sent (`function_call_output`), by call id: the ground truth."""
    return {item["call_id"]: item["output"] for entry in corpus.load(CAPTURE).llm_log
            for item in entry["request"]["input"] if item.get("type") == "function_call_output"}


def _tool_span(name: str) -> Span:
    return next(s for s in capture_spans(CAPTURE) if s.name == f"execute_tool {name}")


def test_a_structured_mcp_result_is_the_text_the_model_was_sent_not_the_structured_content() -> None:
    span = _tool_span("weather_get_forecast")
    call_id = span.attributes["gen_ai.tool.call.id"]
    sent = _sent_outputs()[call_id]
    recorded = json.loads(span.attributes["gen_ai.tool.call.result"])
    # The capture tells them apart: the span records the structured content, the model was sent the server's text.
    assert recorded["days"][0]["day"] == "Tuesday" and sent.startswith("Lyon, 2 days:")
    steps = corpus.llm_steps(_document())
    [asking] = [s for s in steps if call_id in results_by_call(s)]
    assert results_by_call(asking)[call_id]["content"] == sent
    # Every other result as its span recorded it, which is what the model was sent.
    assert {c: r["content"] for s in steps for c, r in results_by_call(s).items()} == _sent_outputs()


def _chunk(output: object) -> Span:
    """The capture's tool-result chunk holding a model output, recording `output` instead."""
    chunk = next(s for s in capture_spans(CAPTURE) if s.attributes.get(mastra_model_outputs.CHUNK_OUTPUT)
                 and s.attributes.get(mastra_model_outputs.CHUNK_CALL_ID))
    return replace(chunk, attributes={**chunk.attributes, mastra_model_outputs.CHUNK_OUTPUT: json.dumps(output)})


def _shown(chunk: Span) -> dict[str, str]:
    """What `complete_calls` gives the calls of the capture for `chunk` in place of the recorded one."""
    spans = [chunk if s.span_id == chunk.span_id else s for s in capture_spans(CAPTURE)]
    calls = [op for s in spans if mastra.detect(s) and isinstance(op := mastra.map_span(SpanReader(s), ()), LlmCall)]
    mastra_model_outputs.complete_calls(spans, calls)
    return {k: v for call in calls for k, v in call.shown_tool_results.items()}


def test_only_a_text_model_output_replaces_the_recorded_result() -> None:
    call_id = _tool_span("weather_get_forecast").attributes["gen_ai.tool.call.id"]
    assert _shown(_chunk({"type": "text", "value": "Lyon: showers."})) == {call_id: "Lyon: showers."}
    # JSON (the AI SDK sends its JSON text, the tool's span records the object) or media: the recorded result stays.
    assert _shown(_chunk({"type": "json", "value": {"city": "Lyon"}})) == {}
    assert _shown(_chunk({"type": "content", "value": [{"type": "text", "text": "Lyon"}]})) == {}


def test_an_mcp_tool_span_is_a_tool_execution_its_server_and_error_class_read() -> None:
    failed = _tool_span("weather_get_weather")
    assert failed.attributes["mastra.span.type"] == "mcp_tool_call" and failed.attributes["error.domain"] == "MCP"
    reader = SpanReader(failed)
    execution = mastra.map_span(reader, ())
    assert isinstance(execution, ToolExecution) and execution.error is not None
    assert execution.result == "weather service timed out"
    assert reader.unused() == set()
    assert _document()["extra"]["unmapped_attributes"] == []


def test_the_capture_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert document["session_id"] == SESSION and document["agent"]["name"] == "Weather Agent"
    # The questions of both turns, then one agent step per LLM call: no MCP protocol work, no subagent.
    assert [(s["source"], s.get("llm_call_count")) for s in document["steps"]] == [
        ("system", None), ("user", None), ("agent", 1), ("agent", 1), ("agent", 1),
        ("user", None), ("agent", 1), ("agent", 1)]
    first, retry = document["steps"][2], document["steps"][3]
    assert [c["function_name"] for c in first["tool_calls"]] == ["weather_get_weather", "get_local_time"]
    # The MCP server's isError result: flagged, its content the text the model was sent; then retried alone.
    failed = results_by_call(first)[first["tool_calls"][0]["tool_call_id"]]
    assert failed["content"] == "weather service timed out" and failed["extra"]["is_error"] is True
    assert [c["function_name"] for c in retry["tool_calls"]] == ["weather_get_weather"]
    assert not any(r["extra"].get("is_error") for s in document["steps"][3:] for r in results_by_call(s).values())
