"""openai-agents with an MCP server's tools, traced by OpenInference: a tool's structured text output is
what the model was shown (trajectory/mappers/openinference.py, `_openai_agents_text_output`)."""

from __future__ import annotations

import json

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents_openinference_mcp"


def _tool_span(output: object, scope: str) -> Span:
    return Span(trace_id="6bf92f3577b34da6a3ce929d0e0e4736", span_id="1000000000000001", parent_span_id="",
                name="read_file", kind=1, start_time_unix_nano=1, end_time_unix_nano=2, status_code=1,
                scope_name=scope,
                attributes={"openinference.span.kind": "TOOL", "tool.name": "read_file",
                            "input.value": '{"path": "faq.md"}', "output.value": json.dumps(output)})


def test_text_output_parts_are_their_text() -> None:
    scope = "openinference.instrumentation.openai_agents"
    one = openinference.tool_execution(SpanReader(_tool_span({"type": "text", "text": "a\nb"}, scope)))
    assert one.result == "a\nb"
    two = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    assert openinference.tool_execution(SpanReader(_tool_span(two, scope))).result == "a\nb"
    image = {"type": "image", "image_url": "data:image/png;base64,AAAA"}
    assert openinference.tool_execution(SpanReader(_tool_span(image, scope))).result == image
    # Another instrumentation's dict of that shape is its own convention: left as it is.
    other = openinference.tool_execution(SpanReader(_tool_span({"type": "text", "text": "a"}, "openinference.x")))
    assert other.result == {"type": "text", "text": "a"}


def test_capture_results_are_what_the_model_was_shown() -> None:
    capture = corpus.load(CAPTURE)
    document = trajectory_from_spans(capture_spans(CAPTURE)).document()
    truth = corpus.GroundTruth.of(capture.llm_log)
    steps = corpus.llm_steps(document)
    # The SDK lists the MCP server's tools before every model call (`mcp_tools`, a CHAIN span): no step.
    assert len(steps) == len(truth.calls) == 6
    results = {r["source_call_id"]: r for s in steps for r in (s.get("observation") or {}).get("results") or ()}
    assert {call_id: results[call_id]["content"] for call_id in truth.tool_results} == truth.tool_results
    # Call 3's second call, the read of a document that is not there: named by its `call_id` (`call_…`), which its
    # function_call_output names, not by its item's own id (`fc_…`).
    failing = capture.llm_log[3]["response"]["tool_calls"][1]
    assert (failing["name"], failing["arguments"]) == ("read_file", {"path": "policies/shipping.md"})
    assert failing["id"].startswith("call_") and failing["item_id"].startswith("fc_")
    read = results[failing["id"]]
    assert read["content"] == "Error executing tool read_file: No such document: policies/shipping.md"
    # The server's `tools/call read_file` span is that same execution: no step of its own, and its
    # `isError` result (no failure on the client's span) flags the model's call.
    assert [s for s in document["steps"] if s.get("llm_call_count") == 0] == []
    assert read["extra"]["is_error"] is True
    assert [r["source_call_id"] for r in results.values() if (r.get("extra") or {}).get("is_error")] == [failing["id"]]
