"""OpenLLMetry's openai-agents instrumentation, read from its capture (`openai-agents_openllmetry`), whose function
calls carry the two ids the Responses API gives them: the `call_id` (`call_…`), which the `function_call_output`
names, and the item's own `id` (`fc_…`)."""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents_openllmetry"


def _spans() -> list[Span]:
    spans = capture_spans(CAPTURE)
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def _model_calls() -> list[dict[str, Any]]:
    """Every function call the model made, in order, as the fake LLM answered it (`id`: its call_id)."""
    return [call for entry in corpus.load(CAPTURE).llm_log for call in entry["response"]["tool_calls"]]


def test_parallel_calls_are_one_answer() -> None:
    first = next(span for span in _spans() if span.name == "openai.response")
    call = openllmetry.map_span(SpanReader(first), [])
    assert isinstance(call, LlmCall)
    assert len(call.output_messages) == 1
    paris, oslo = _model_calls()[:2]
    # The answer's calls are named by their call_ids, as the model gave them.
    assert [(p.call_id, p.arguments) for p in call.output_messages[0].tool_calls] == [
        (paris["id"], {"city": "Paris"}), (oslo["id"], {"city": "Oslo"})]


def test_the_re_sent_history_s_calls_are_named_by_the_call_ids_their_results_name() -> None:
    """The capture's history names each re-sent call by its item id (`fc_…`), its result by the call_id: read
    back (`_history_call_ids`), every call of the last call's history is under the id its result and the answer
    that made it name."""
    last = [span for span in _spans() if span.name == "openai.response"][-1]
    model_calls = _model_calls()
    assert all(c["item_id"] in str(last.attributes["gen_ai.input.messages"]) for c in model_calls)
    call = openllmetry.map_span(SpanReader(last), [])
    assert isinstance(call, LlmCall)
    asked = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_call"]
    answered = [p.call_id for m in call.input_messages for p in m.parts if p.kind == "tool_result"]
    assert asked == answered == [c["id"] for c in model_calls]
    # So no re-sent call is a step of its own and each step's calls are the model's.
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=corpus.load(CAPTURE).session_id)
    document = result.document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    steps = corpus.llm_steps(document)
    assert [c["tool_call_id"] for s in steps for c in s.get("tool_calls") or ()] == [c["id"] for c in model_calls]
    for trajectory in corpus.all_trajectories(document):
        assert not [s for s in trajectory["steps"] if s.get("is_copied_context")]
    assert not document["extra"].get("warnings")


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
