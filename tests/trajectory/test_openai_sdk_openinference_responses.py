"""OpenInference's openai instrumentation on the Responses API (the `openai-sdk_openinference_responses` capture).

Its `Response` spans write each output item of an answer as an output message of its own, and record a call
continuing the API's copy of the conversation (`previous_response_id`) with only the new input items
(`trajectory/mappers/openai_sdk.py`).
"""

from __future__ import annotations

from dataclasses import replace

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openai_sdk, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-sdk_openinference_responses"
SESSION = "oi-openai-responses-trip-1"


def _response_spans() -> list[Span]:
    spans = [span for span in capture_spans(CAPTURE) if openai_sdk.is_openinference_response(span)]
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def _call(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def test_a_responses_answer_of_parallel_function_calls_is_one_answer() -> None:
    first = _response_spans()[0]
    # As recorded: each function_call item an output message of its own.
    assert {key for key in first.attributes if key.endswith(".tool_call.id")} == {
        "llm.output_messages.0.message.tool_calls.0.tool_call.id",
        "llm.output_messages.1.message.tool_calls.0.tool_call.id"}
    call = _call(first)
    assert len(call.output_messages) == 1
    # Each call by its `call_id` (what the function_call_output names), not its item's id (`fc_67f0…`).
    assert [(part.call_id, part.name) for part in call.output_messages[0].tool_calls] == [
        ("call_Hk2bookOslo01", "book_hotel"), ("call_Hk2wthrOslo01", "get_weather")]


def test_a_chat_completion_span_is_no_response() -> None:
    """Several output messages of a `ChatCompletion` span are choices: the rule is not theirs."""
    chat = [span for span in capture_spans("openai-sdk_openinference") if span.name == "ChatCompletion"]
    assert chat and not any(openai_sdk.is_openinference_response(span) for span in chat)


def test_each_call_one_step_each_result_on_its_call_the_failure_flagged() -> None:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "agent", "user", "agent",
                                                         "agent"]
    assert not [s for s in document["steps"] if s.get("llm_call_count") == 0]  # no tool run outside its call
    assert not document["extra"].get("warnings")  # no result dropped for want of its call
    parallel = document["steps"][2]
    assert "other_choices" not in parallel["extra"]
    booking, weather = parallel["observation"]["results"]
    assert (booking["source_call_id"], booking["content"]) == (
        "call_Hk2bookOslo01", "TimeoutError: the booking service did not answer in time")
    assert booking["extra"]["is_error"] is True
    assert (weather["source_call_id"], weather["content"]) == ("call_Hk2wthrOslo01", "rainy, 9°C")
    assert "is_error" not in weather["extra"]


def test_a_call_continuing_a_previous_response_shows_all_its_input_anew() -> None:
    calls = [_call(span) for span in _response_spans()]
    assert [call.input_all_new for call in calls] == [False, False, False, True, True]


def test_a_question_asked_again_in_a_chained_call_of_the_same_trace_is_shown_again() -> None:
    """Turn 2 moved into turn 1's trace and asking turn 1's question: the model, holding turn 1 on the server, was
    sent the question again. Without `previous_response_id` it would be history re-sent, shown once."""
    spans = capture_spans(CAPTURE)
    first_trace = _response_spans()[0].trace_id
    question = corpus.load(CAPTURE).llm_log[0]["request"]["input"][0]["content"]
    chained_question = "llm.input_messages.1.message.content"
    moved = [replace(span, trace_id=first_trace,
                     attributes={**span.attributes, chained_question: question}
                     if span.attributes.get(chained_question) == "Is Bergen warmer?" else span.attributes)
             for span in spans]
    document = trajectory_from_spans(moved, session_id=SESSION).document()
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [question, question]
