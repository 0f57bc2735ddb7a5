"""OpenLIT's OpenAI instrumentation (the `openai-sdk_openlit` capture's trace exports).

Its call spans are the latest GenAI conventions plus OpenLIT's own (`trajectory/mappers/openlit.py`): a cost
of 0 where its pricing table has no price (the capture was recorded offline, the table unreachable), the
model's tool calls restated on the call span, its bookkeeping.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

import pytest
from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

CAPTURE = "openai-sdk_openlit"
SESSION = "openlit-trip-1"


def _call_spans() -> list[Span]:
    """The OpenAI instrumentation's spans (not the httpx ones under them, nor `@openlit.trace`'s)."""
    return [span for span in capture_spans(CAPTURE) if span.scope_name == "openlit.instrumentation.openai"]


def _calls() -> list[tuple[SpanReader, LlmCall]]:
    found = []
    for span in _call_spans():
        if openlit.detect(span):
            reader = SpanReader(span)
            operation = openlit.map_span(reader, ())
            assert isinstance(operation, LlmCall)
            found.append((reader, operation))
    return found


def test_a_cost_of_0_is_no_price_and_the_bookkeeping_is_read() -> None:
    calls = _calls()
    assert len(calls) == 5
    for reader, call in calls:
        assert reader.span.attributes["gen_ai.usage.cost"] == 0  # OpenLIT's table was unreachable
        assert call.reported_cost is None
        assert call.emitter == openlit.NAME
        # Only the application's session id is left to the builder.
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()
    # The first call's parallel tool calls, restated as "get_weather, convert_currency": read from the output.
    first = calls[0][1]
    assert [(p.name, p.call_id) for m in first.output_messages for p in m.parts] == [
        ("get_weather", "call_0_0"), ("convert_currency", "call_0_1")]


def test_a_priced_call_keeps_its_cost() -> None:
    span = _call_spans()[0]
    priced = replace(span, attributes={**span.attributes, "gen_ai.usage.cost": 0.0000606})
    call = openlit.map_span(SpanReader(priced), ())
    assert isinstance(call, LlmCall) and call.reported_cost == Decimal("0.0000606")


def test_the_session_is_priced_by_evalkit_and_is_the_conversation() -> None:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    assert openlit.NAME in document["extra"]["emitters"]
    steps = [s for s in document["steps"] if s.get("llm_call_count") == 1]
    assert len(steps) == 5
    assert all(s["metrics"]["extra"].get("price_source") != "reported" for s in steps)
    # gpt-4o-mini at $0.15 / $0.60 per million: 1604 prompt and 134 completion tokens.
    assert document["final_metrics"]["total_cost_usd"] == pytest.approx(0.000321)
    # The failed conversion's error text is what the model was shown, then the retry's answer.
    assert [r["content"] for r in steps[0]["observation"]["results"]] == [
        "light rain, 18°C", "Error: exchange-rate service timed out"]
    assert steps[1]["observation"]["results"][0]["content"] == "200 EUR = 32,480 JPY"


def test_traced_functions_answer_the_calls_of_their_name_and_the_turn_is_no_step() -> None:
    """`@openlit.trace` spans (scope `openlit`): the tools' executions, the failed one flagged; the turn function
    that ran the loop, which no call asked for, no step of its own."""
    document = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION).document()
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent"]
    first = document["steps"][2]["observation"]["results"]
    assert [r["content"] for r in first] == ["light rain, 18°C", "Error: exchange-rate service timed out"]
    # The conversion's span raised (no attributes, an exception event): flagged, its content what the model saw.
    assert first[1]["extra"]["is_error"] is True and first[1]["extra"]["emitter"] == openlit.NAME
    assert "is_error" not in first[0]["extra"]
    assert document["steps"][3]["observation"]["results"][0]["content"] == "200 EUR = 32,480 JPY"
    assert not [s for s in document["steps"] if s.get("llm_call_count") == 0]
    # Left unmapped: only the httpx client spans' attributes.
    assert document["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]
