"""Claude Code's own OpenTelemetry export: its spans and log events (trajectory/mappers/claude_code.py)."""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.mappers import claude_code
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, ToolExecution
from evalkit.trajectory.span import STATUS_OK, LogRecord, Span, SpanEvent
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_logs, capture_spans

CAPTURE = "claude-code_native"
TRACE = "8d3bce56b86decfefd9ef47bc522dd76"
TURN = "1000000000000000"


def _span(span_id: str, name: str, start: int, end: int, attributes: dict[str, Any],
          events: tuple[SpanEvent, ...] = ()) -> Span:
    return Span(trace_id=TRACE, span_id=span_id, parent_span_id="" if span_id == TURN else TURN, name=name, kind=1,
                start_time_unix_nano=start, end_time_unix_nano=end, status_code=STATUS_OK,
                scope_name=claude_code.SCOPE, events=events,
                attributes={"session.id": "s1", "gen_ai.conversation.id": "s1", **attributes})


def _request(span_id: str, start: int, end: int, **more: Any) -> Span:
    return _span(span_id, claude_code.LLM_REQUEST, start, end, {
        "span.type": "llm_request", "gen_ai.operation.name": "chat", "gen_ai.request.model": "claude-sonnet-4-5",
        "gen_ai.response.model": "claude-sonnet-4-5", "gen_ai.usage.input_tokens": 1500,
        "gen_ai.usage.output_tokens": 40, "gen_ai.usage.cache_read.input_tokens": 1000,
        "gen_ai.usage.cache_write.input_tokens": 0, "input_tokens": 500, "success": True, **more})


def _tool(span_id: str, call_id: str, output: str | None = None) -> Span:
    events = (SpanEvent("tool.output", 5, {"output": output}),) if output is not None else ()
    return _span(span_id, claude_code.TOOL, 3, 4, {
        "span.type": "tool", "gen_ai.operation.name": "execute_tool", "tool_name": "mcp__weather__get_weather",
        "gen_ai.tool.name": "get_weather", "gen_ai.tool.call.id": call_id, "tool_use_id": call_id}, events)


def _event(sequence: int, name: str, **attributes: Any) -> LogRecord:
    """A Claude Code log event as the CLI links it: to the interaction span, the one active."""
    return LogRecord(time_unix_nano=1_000_000 * sequence, trace_id=TRACE, span_id=TURN, event_name=name,
                     body=f"claude_code.{name}", scope_name=claude_code.EVENTS_SCOPE,
                     attributes={"event.name": name, "event.sequence": sequence, **attributes})


_ANSWER = {"id": "msg_1", "role": "assistant", "content": [
    {"type": "text", "text": "Checking Porto."},
    {"type": "tool_use", "id": "toolu_1", "name": "mcp__weather__get_weather", "input": {"city": "Porto"}}]}
_ASKED = {"model": "claude-sonnet-4-5", "system": [{"type": "text", "text": "x-anthropic-billing-header: cc"},
                                                    {"type": "text", "text": "Be terse."}],
          "tools": [{"name": "mcp__weather__get_weather", "input_schema": {"type": "object"}}],
          "messages": [{"role": "user", "content": [{"type": "text", "text": "Weather in Porto?"}]}]}


def _run() -> tuple[list[Span], list[LogRecord]]:
    spans = [_span(TURN, claude_code.INTERACTION, 0, 10, {"user_prompt": "Weather in Porto?"}),
             _request("2000000000000001", 1, 3), _tool("3000000000000001", "toolu_1"),
             _request("2000000000000002", 5, 8)]
    logs = [
        _event(1, "user_prompt", prompt="Weather in Porto?"),
        _event(2, "api_request_body", body=json.dumps(_ASKED), request_body_id="b1"),
        # Claude Code streams tools: a call's permission and execution may start before its request's events.
        _event(3, "tool_decision", tool_use_id="toolu_1"),
        _event(4, "api_request", input_tokens=500, cost_usd=0.0012),
        _event(5, "assistant_response", response="Checking Porto."),
        _event(6, "api_response_body", body=json.dumps(_ANSWER), request_body_id="b1"),
        _event(7, "tool_result", tool_use_id="toolu_1", success="false", error="weather service timed out",
               error_type="McpToolCallError", tool_input='{"city": "Porto"}'),
        _event(8, "api_request_body", body="{}", request_body_id="b2"),
        _event(9, "api_request", input_tokens=500),
        _event(10, "assistant_response", response="Porto is unreachable."),
    ]
    return spans, logs


def _linked(logs: list[LogRecord]) -> list[tuple[str, str]]:
    return [(log.event_name, log.span_id) for log in sorted(logs, key=lambda log: log.attributes["event.sequence"])]


def test_each_request_and_tool_gets_its_own_events() -> None:
    spans, logs = _run()
    first, tool, second = "2000000000000001", "3000000000000001", "2000000000000002"
    assert _linked(claude_code.relink_logs(spans, list(reversed(logs)))) == [
        ("user_prompt", TURN), ("api_request_body", first), ("tool_decision", TURN), ("api_request", first),
        ("assistant_response", first), ("api_response_body", first), ("tool_result", tool),
        # A request body is its response body's (`request_body_id`): with none, it is left where it was.
        ("api_request_body", TURN), ("api_request", second), ("assistant_response", second)]


def test_a_request_id_pairs_before_the_order_does_and_unequal_counts_pair_nothing() -> None:
    spans, logs = _run()
    spans[1] = _request("2000000000000001", 1, 3, request_id="req_a")
    spans[3] = _request("2000000000000002", 5, 8, request_id="req_b")
    logs[3] = _event(4, "api_request", request_id="req_b")  # ids say otherwise than the order
    logs[8] = _event(9, "api_request", request_id="req_a")
    linked = dict((name_seq, span) for name_seq, span in
                  ((f"{log.event_name}{log.attributes['event.sequence']}", log.span_id)
                   for log in claude_code.relink_logs(spans, logs)))
    assert linked["api_request4"] == linked["assistant_response5"] == "2000000000000002"
    assert linked["api_request9"] == "2000000000000001"
    # A request whose events never arrived: no guessing which of the two the one left reports.
    left = claude_code.relink_logs([*spans[:3], _request("2000000000000002", 5, 8)], logs[:3] + logs[4:8])
    assert {log.span_id for log in left if log.event_name.startswith(("api_", "assistant"))} == {TURN}


def test_a_call_is_its_request_and_response_bodies_with_the_prompt_counting_cache_reads() -> None:
    spans, logs = _run()
    linked = claude_code.relink_logs(spans, logs)
    call = claude_code.map_span(SpanReader(spans[1]), [log for log in linked if log.span_id == spans[1].span_id])
    assert isinstance(call, LlmCall)
    assert [(p.kind, p.text or p.name) for m in call.output_messages for p in m.parts] == [
        ("text", "Checking Porto."), ("tool_call", "mcp__weather__get_weather")]
    assert call.output_messages[0].tool_calls[0].arguments == {"city": "Porto"}
    assert [m.text for m in call.input_messages] == ["Weather in Porto?"]
    assert call.system_instructions == ["Be terse."]  # not the billing header Claude Code sends as a system block
    assert [d["function"]["name"] for d in call.tool_definitions] == ["mcp__weather__get_weather"]
    # gen_ai.usage.input_tokens is the API's input_tokens plus the cache reads and writes.
    assert (call.usage.input_tokens, call.usage.cache_read_tokens, call.usage.normalisation) == (1500, 1000, None)
    # Without the raw bodies, the answer's text from `assistant_response`.
    later = claude_code.map_span(SpanReader(spans[3]), [log for log in linked if log.span_id == spans[3].span_id])
    assert isinstance(later, LlmCall) and [m.text for m in later.output_messages] == ["Porto is unreachable."]


def test_a_tool_is_its_span_and_its_tool_result_event() -> None:
    spans, logs = _run()
    linked = claude_code.relink_logs(spans, logs)
    failed = claude_code.map_span(SpanReader(spans[2]), [log for log in linked if log.span_id == spans[2].span_id])
    assert isinstance(failed, ToolExecution)
    assert (failed.name, failed.call_id) == ("mcp__weather__get_weather", "toolu_1")
    assert failed.arguments == {"city": "Porto"}
    assert failed.error is not None and failed.result == "weather service timed out"
    done = claude_code.map_span(SpanReader(_tool("3000000000000002", "toolu_2", "cloudy, 18°C")), ())
    assert isinstance(done, ToolExecution) and done.result == "cloudy, 18°C" and done.error is None
    run = claude_code.map_span(SpanReader(spans[0]), ())
    assert isinstance(run, AgentRun) and run.input_text == "Weather in Porto?"


def test_the_capture_maps_to_its_calls_and_tools() -> None:
    spans = capture_spans(CAPTURE)
    linked = claude_code.relink_logs(spans, capture_logs(CAPTURE))
    operations = [claude_code.map_span(SpanReader(span), [log for log in linked if log.span_id == span.span_id])
                  for span in sorted(spans, key=lambda s: s.start_time_unix_nano)]
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    calls = [op for op in operations if isinstance(op, LlmCall)]
    assert [(m.text, [(p.name, p.arguments) for p in m.tool_calls]) for c in calls for m in c.output_messages] == [
        (call.text, [(t["name"], t["arguments"]) for t in call.tool_calls]) for call in truth.calls]
    assert [c.usage.input_tokens for c in calls] == [call.input_tokens for call in truth.calls]
    tools = {op.call_id: op for op in operations if isinstance(op, ToolExecution)}
    assert {call_id: (op.result, op.error is not None) for call_id, op in tools.items()} == {
        call_id: (shown, call_id == "toolu_0_1") for call_id, shown in truth.tool_results.items()}
