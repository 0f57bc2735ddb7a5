"""OpenTelemetry's openai-agents instrumentation (openai-agents-v2 0.1.0) on the SDK's Chat Completions path, read
from its capture (`openai-agents_otel-genai_chat-completions`): one agent, an answer with text and two parallel
tool calls (one raising once, then called again), two turns of one session, the second streamed.

Before, on this path: the answer with text was a step without its tool calls (0.1.0 writes such a message as its
text alone), each of its tool executions a step no call asked for, and the calls a copied step after them whose
results were swapped (each tool message's content, written twice, was also read as a result of no call); the
answer with no text a step reading the message's dict repr (`{'content': None, …, 'tool_calls': […]}`), and each
streamed answer one reading the repr of the whole Responses `Response` the SDK rebuilt, their tool calls lost.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import otel_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents_otel-genai_chat-completions"
SESSION = "oa-otel-genai-chat-1"
Json = dict[str, Any]


def _chat_spans() -> list[Span]:
    """The model calls, in the order they were made."""
    return sorted((s for s in capture_spans(CAPTURE) if s.name == "chat gpt-4o"), key=lambda s: s.start_time_unix_nano)


def _call(span: Span) -> LlmCall:
    call = otel_openai_agents.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall) and call.emitter == otel_openai_agents.NAME
    return call


def _document() -> Json:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def test_an_answer_with_no_text_is_its_tool_calls_not_the_message_s_repr() -> None:
    span = _chat_spans()[1]
    assert "{'content': None, 'refusal': None, 'role': 'assistant'" in span.attributes["gen_ai.output.messages"]
    (answer,) = _call(span).output_messages
    assert answer.text == ""
    assert [(p.call_id, p.name, p.arguments) for p in answer.tool_calls] == [
        ("call_1_0", "book_hotel", {"city": "Oslo", "nights": 2})]


def test_a_streamed_answer_is_the_text_and_calls_of_the_response_the_sdk_rebuilt() -> None:
    log = corpus.load(CAPTURE).llm_log
    with_call, final = _chat_spans()[3:]
    assert "'object': 'response'" in with_call.attributes["gen_ai.output.messages"]
    (answer,) = _call(with_call).output_messages
    assert answer.text == log[3]["response"]["text"] == "Let me look at Bergen."
    # The function call item's `call_id` (the one its result names), not its made-up item id.
    assert [(p.call_id, p.name, p.arguments) for p in answer.tool_calls] == [
        ("call_3_0", "get_weather", {"city": "Bergen"})]
    (answer,) = _call(final).output_messages
    assert answer.text == log[4]["response"]["text"] and answer.tool_calls == []


def test_a_tool_message_is_the_result_of_its_call_once() -> None:
    """0.1.0 writes a tool message's content as a text part and again as the `tool_call_response` part: the text
    part, read as a result of no call, answered whichever call had none (the two Oslo results swapped)."""
    call = _call(_chat_spans()[2])
    results = [[(p.call_id, p.text) for p in m.tool_results] for m in call.input_messages if m.role == "tool"]
    assert results == [
        [("call_0_0", "An error occurred while running the tool. Please try again.")],
        [("call_0_1", "rainy, 9°C")],
        [("call_1_0", "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42")],
    ]


def test_an_answer_with_text_and_tool_calls_is_one_step_with_both() -> None:
    """The span records the answer's text alone; the next call re-sends it with its calls: they are that step's,
    each answered by its tool span, the raising one flagged."""
    document = _document()
    steps = corpus.llm_steps(document)
    first = steps[0]
    assert first["message"] == "I'll book the hotel and check the forecast at the same time."
    assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in first["tool_calls"]] == [
        ("call_0_0", "book_hotel", {"city": "Oslo", "nights": 2}), ("call_0_1", "get_weather", {"city": "Oslo"})]
    assert first["extra"]["tool_calls_from"] == "input history"
    failed, weather = first["observation"]["results"]
    assert (failed["source_call_id"], failed["content"]) == (
        "call_0_0", "An error occurred while running the tool. Please try again.")
    assert failed["extra"]["is_error"] is True and failed["extra"]["emitter"] == otel_openai_agents.NAME
    assert (weather["source_call_id"], weather["content"]) == ("call_0_1", "rainy, 9°C")
    assert "is_error" not in weather["extra"]
    # No tool execution is a step of its own, and nothing is copied history: every answer was received.
    assert not [s for s in document["steps"] if s.get("llm_call_count") == 0 or s.get("is_copied_context")]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)) == []
    # The instructions (a system message on this path) once, each question once though turn two re-sends turn one.
    assert [(s["source"], s["message"]) for s in document["steps"] if s["source"] != "agent"] == [
        ("system", "You book hotels and check the weather."),
        ("user", "Book me a hotel in Oslo for 2 nights, and what's the weather there?"),
        ("user", "Is Bergen warmer?")]
    assert document["agent"]["name"] == "Travel desk" and not document.get("subagent_trajectories")
    assert document["extra"]["unmapped_attributes"] == []
