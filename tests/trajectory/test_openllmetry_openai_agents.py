"""OpenLLMetry's openai-agents instrumentation, read from its capture (`openai-agents_openllmetry`)."""

from __future__ import annotations

from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part, ToolExecution
from evalkit.trajectory.span import Span
from tests.trajectory.span_fixtures import capture_spans


def _spans() -> list[Span]:
    spans = capture_spans("openai-agents_openllmetry")
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def test_parallel_calls_are_one_answer() -> None:
    first = next(span for span in _spans() if span.name == "openai.response")
    call = openllmetry.map_span(SpanReader(first), [])
    assert isinstance(call, LlmCall)
    assert len(call.output_messages) == 1
    assert [(p.call_id, p.arguments) for p in call.output_messages[0].tool_calls] == [
        ("fc_0_0", {"city": "Paris"}), ("fc_0_1", {"city": "Oslo"})]


def test_tool_spans_carry_arguments_and_result() -> None:
    tools = [openllmetry.map_span(SpanReader(span), []) for span in _spans() if span.name.endswith(".tool")]
    assert all(isinstance(tool, ToolExecution) for tool in tools)
    assert [(t.name, t.arguments, t.result, t.error is not None) for t in tools] == [  # type: ignore[union-attr]
        ("get_weather", {"city": "Paris"}, "sunny, 21°C", False),
        ("get_weather", {"city": "Oslo"}, "rainy, 9°C", False),
        ("get_weather", {"city": "Bergen"}, "windy, 7°C", False),
        ("book_hotel", {"city": "Oslo", "nights": 1}, "An error occurred while running the tool. Please try again.",
         True),
        ("book_hotel", {"city": "Oslo", "nights": 2}, "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42", False),
    ]


def test_handoff_names_no_agent_and_is_read_whole() -> None:
    span = next(span for span in _spans() if span.name.endswith(".handoff"))
    reader = SpanReader(span)
    handoff = openllmetry.map_span(reader, [])
    # 0.62.4 names the agent taking over when the span starts, before openai-agents knows it.
    assert isinstance(handoff, ToolExecution) and handoff.handoff_to == ""
    assert reader.unused() == set()


def test_history_calls_take_the_ids_their_results_name() -> None:
    """OpenAI's `function_call` items have an item id (`fc_…`) besides their `call_id`: the
    instrumentation writes the first for a re-sent call."""
    def call(item_id: str, city: str) -> Message:
        return Message("assistant", [Part("tool_call", call_id=item_id, name="get_weather", arguments={"city": city})])

    def result(call_id: str, text: str) -> Message:
        return Message("tool", [Part("tool_result", call_id=call_id, text=text)])

    question = Message("user", [Part("text", text="Weather in Paris and Oslo?")])
    history = [question, call("fc_1", "Paris"), call("fc_2", "Oslo"), result("call_1", "sunny"),
               result("call_2", "rainy")]
    repaired = openllmetry._history_call_ids(history)
    assert [p.call_id for m in repaired for p in m.tool_calls] == ["call_1", "call_2"]
    assert repaired[0] is question and history[1].tool_calls[0].call_id == "fc_1"  # shared messages unchanged
    consistent = [question, call("call_1", "Paris"), result("call_1", "sunny")]
    assert openllmetry._history_call_ids(consistent) is consistent
