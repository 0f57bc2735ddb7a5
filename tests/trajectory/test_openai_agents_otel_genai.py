"""OpenTelemetry's own openai-agents instrumentation (openai-agents-v2 0.1.0), read from its capture
(`openai-agents_otel-genai`): a travel desk handing off to a booking agent twice, two parallel tool calls,
one raising once and called again, two turns of one session.

Before `trajectory/mappers/otel_openai_agents.py`, its spans were taken for OpenLLMetry's (the same scope
name): every function call the model made was a step whose message was the call's repr
(`ResponseFunctionToolCall(arguments=…)`) with no tool call, each tool execution a step of its own no call
asked for, the handoffs unread (the booking agent's calls in the travel desk's trajectory), and turn one's
answer, re-sent in turn two, a step reading `{'annotations': [], 'text': …, 'type': 'output_text'}`.
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openllmetry, otel_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents_otel-genai"
SESSION = "oa-otel-genai-travel-1"
Json = dict[str, Any]


def _document() -> Json:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _llm_steps(document: Json) -> list[Json]:
    return corpus.llm_steps(document)


def _call_ids(seq: int) -> list[str]:
    """The call_ids (`call_…`) of the function calls the model answered call `seq` with; each call's item has an id of
    its own too (`fc_…`), as the Responses API gives them."""
    return [call["id"] for call in corpus.load(CAPTURE).llm_log[seq]["response"]["tool_calls"]]


def test_its_spans_are_its_own_not_openllmetry_s() -> None:
    """The scope is OpenLLMetry's openai-agents one too: `server.address`, on every span, tells them apart."""
    spans = [s for s in capture_spans(CAPTURE) if s.scope_name == otel_openai_agents.SCOPE]
    assert spans and all(otel_openai_agents.detect(s) and not openllmetry.detect(s) for s in spans)
    assert not [s for s in capture_spans("openai-agents_openllmetry") if otel_openai_agents.detect(s)]
    document = _document()
    assert otel_openai_agents.NAME in document["extra"]["emitters"]
    assert openllmetry.NAME not in document["extra"]["emitters"]
    # Its bookkeeping (provider twice, server, output type) and the instrumentor's default identity are read.
    assert document["extra"]["unmapped_attributes"] == []


def test_a_function_call_s_repr_is_the_call_it_names() -> None:
    """0.1.0 writes each function call of an answer as a text part holding the item's repr: the call is its `call_id`,
    which its output names, not the item's `id` the repr holds too."""
    chat = next(s for s in capture_spans(CAPTURE) if s.name == "chat gpt-4o"
                and "book_hotel" in s.attributes["gen_ai.output.messages"])
    assert "ResponseFunctionToolCall(arguments=" in chat.attributes["gen_ai.output.messages"]
    booking, weather = corpus.load(CAPTURE).llm_log[1]["response"]["tool_calls"]
    assert f"id='{booking['item_id']}'" in chat.attributes["gen_ai.output.messages"]
    call = otel_openai_agents.map_span(SpanReader(chat), ())
    assert isinstance(call, LlmCall) and call.emitter == otel_openai_agents.NAME
    (answer,) = call.output_messages
    assert answer.text == ""
    assert [(p.call_id, p.name, p.arguments) for p in answer.tool_calls] == [
        (booking["id"], "book_hotel", {"city": "Oslo", "nights": 2}), (weather["id"], "get_weather", {"city": "Oslo"})]


def test_every_call_is_one_step_with_its_tool_calls_and_each_result_on_its_call() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert corpus.compare(document, truth) == []
    steps = _llm_steps(document)
    (transfer,), (transfer_again,) = _call_ids(0), _call_ids(4)
    (booking, weather), (retried,), (bergen,) = _call_ids(1), _call_ids(2), _call_ids(5)
    assert [[(c["tool_call_id"], c["function_name"]) for c in s.get("tool_calls") or ()] for s in steps] == [
        [(transfer, "transfer_to_booking_agent")], [(transfer_again, "transfer_to_booking_agent")],
        [(booking, "book_hotel"), (weather, "get_weather")], [(retried, "book_hotel")], [],
        [(bergen, "get_weather")], []]
    # The tool spans (no call id) are no steps of their own: each answers its call, by name and arguments.
    for trajectory in corpus.all_trajectories(document):
        assert not [s for s in trajectory["steps"] if s.get("llm_call_count") == 0]
    results = {r["source_call_id"]: r for s in steps for r in (s.get("observation") or {}).get("results") or ()}
    assert results[weather]["content"] == "rainy, 9°C"
    # The raising booking, then the same call again: the first flagged with the text the model was sent.
    failed, booked = results[booking], results[retried]
    sent = "An error occurred while running the tool. Please try again."
    assert failed["content"] == truth.tool_results[booking] == sent
    assert failed["extra"]["is_error"] is True
    assert booked["content"] == "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42" and "is_error" not in booked["extra"]


def test_each_handoff_starts_the_booking_agent_and_the_workflow_root_is_no_agent() -> None:
    document = _document()
    assert document["agent"]["name"] == "Travel desk"
    booking = document["subagent_trajectories"]
    assert [s["agent"]["name"] for s in booking] == ["Booking agent", "Booking agent"]
    handoffs = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()]
    started = [
        (r["source_call_id"], r["extra"]["handoff_to"], [ref["trajectory_id"] for ref in r["subagent_trajectory_ref"]])
        for r in handoffs
    ]
    assert started == [(*_call_ids(0), "Booking agent", [booking[0]["trajectory_id"]]),
                       (*_call_ids(4), "Booking agent", [booking[1]["trajectory_id"]])]
    # The travel desk's own steps: the questions and its two transfer calls (no `Agent workflow` agent, no
    # task or turn steps); the booking agent's answer to turn one is history the travel desk was re-sent.
    assert [(s["source"], bool(s.get("is_copied_context"))) for s in document["steps"]] == [
        ("user", False), ("agent", False), ("agent", True), ("user", False), ("agent", False)]


def test_a_re_sent_answer_is_its_text_not_its_content_part_s_repr() -> None:
    document = _document()
    copied = next(s for s in document["steps"] if s.get("is_copied_context"))
    assert copied["message"] == corpus.load(CAPTURE).llm_log[3]["response"]["text"]
    assert copied["message"].startswith("Booked Hotel Nord in Oslo for 2 nights (ref OSL-42).")
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Is Bergen warmer?"]


def test_the_agent_handed_to_carries_on_the_conversation_and_repeats_no_question() -> None:
    """The instrumentation drops the `transfer_to_…` call and its output from the input it records: the booking
    agent's first call re-sends the question alone, which read as a run of its own asking it afresh."""
    document = _document()
    for booking in document["subagent_trajectories"]:
        assert [s["source"] for s in booking["steps"]] == ["agent"] * (len(booking["steps"]))
