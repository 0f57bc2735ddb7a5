"""A LlamaIndex FunctionAgent under OpenLIT (the `llamaindex_openlit` capture's trace exports).

OpenLIT's LlamaIndex instrumentation makes no span of the agent's run (`trajectory/mappers/openlit.py`): the session
is its OpenAI instrumentation's five call spans, each the root of a trace of its own, tied by the `session.id`
`openlit.using_attributes` put on them. Their inputs leave out the model's answers made of tool calls alone, so a
call after a tool round shows no answer before the results it re-sends: it carries on the run all the same.
"""

from __future__ import annotations

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall

CAPTURE = "llamaindex_openlit"
SESSION = "li-openlit-trip-1"
TURN_1 = "What's the weather in Lisbon, and how many EUR is one GBP?"
TURN_2 = "And the weather in Porto?"


def _document() -> dict:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def test_each_call_is_one_openlit_call_span_of_its_own_trace() -> None:
    """One span per LLM call, none recorded twice (LlamaIndex's instrumentation adds none); all read, the session
    left to the builder."""
    spans = [span for span in capture_spans(CAPTURE) if openlit.detect(span)]
    assert {span.scope_name for span in spans} == {"openlit.instrumentation.openai"}
    assert len({span.trace_id for span in spans}) == len(spans) == 5
    for span in spans:
        reader = SpanReader(span)
        call = openlit.map_span(reader, ())
        assert isinstance(call, LlmCall) and call.emitter == openlit.NAME
        assert call.reported_cost is None  # OpenLIT's 0: its pricing table was unreachable
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()


def test_a_call_after_a_tool_round_carries_on_the_run() -> None:
    """The calls after a tool round re-send the results with no answer before them (OpenLIT dropped the answer of
    tool calls alone), each in a trace of its own: the question is asked once a turn, not again at every call."""
    document = _document()
    steps = document["steps"]
    assert [s["source"] for s in steps] == ["system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert [s["message"] for s in steps if s["source"] == "user"] == [TURN_1, TURN_2]
    assert not [s for s in steps if s.get("is_copied_context")]


def test_results_are_on_their_calls_as_the_model_was_shown_them() -> None:
    """No tool span: each result is the next call's input, on the call it answers. The exchange rate tool's raise
    is the exception's text LlamaIndex sent; no span records that it failed, so it is not flagged."""
    calls = [s for s in _document()["steps"] if s.get("llm_call_count") == 1]
    assert [[(c["tool_call_id"], c["function_name"]) for c in s.get("tool_calls") or ()] for s in calls] == [
        [("call_0_0", "get_weather"), ("call_0_1", "get_exchange_rate")], [("call_1_0", "get_exchange_rate")], [],
        [("call_3_0", "get_weather")], []]
    results = [[(r["source_call_id"], r["content"]) for r in (s.get("observation") or {}).get("results") or ()]
               for s in calls]
    assert results == [
        [("call_0_0", "sunny, 24°C"), ("call_0_1", "the rate service timed out for GBP/EUR; try again")],
        [("call_1_0", "1 GBP = 1.17 EUR")], [], [("call_3_0", "cloudy, 19°C")], []]
    assert not [r for s in calls for r in (s.get("observation") or {}).get("results") or ()
                if (r.get("extra") or {}).get("is_error")]
    # The streamed turn's calls (usage asked for in the stream) have their tokens.
    assert [(s["metrics"]["prompt_tokens"], s["metrics"]["completion_tokens"]) for s in calls[3:]] == [
        (463, 4), (519, 11)]
