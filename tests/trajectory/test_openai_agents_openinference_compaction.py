"""openai-agents' `OpenAIResponsesCompactionSession` compacting a session with the Responses API's `responses.compact`,
traced by OpenInference (the `openai-agents_openinference_compaction` capture: turn one's parallel calls, one raising
and retried; turn two streamed, after which the session compacts; turn three sent the compaction's output).

The compaction call is in no span: the later calls' inputs record its output, the conversation's user messages and an
encrypted compaction item (`trajectory/mappers/openai_responses_compaction.py`). By the shared rule
(`trajectory/context_compaction.py`) the compaction is an agent step of no LLM call where it happened, marked
`extra.context_compaction` (`kind` `encrypted`), its message saying so; the user messages it re-sends are no questions
asked again; nothing before it is lost.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openai_responses_compaction, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_spans, capture_truth, results_by_call

CAPTURE = "openai-agents_openinference_compaction"
SESSION = "oa-oi-compaction-1"
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Is Bergen warmer?",
             "Book me Bergen for 1 night as well."]
FIRST_SENT = 5  # the fake LLM's log: the first call sent the compaction (turn three's first)

Json = dict[str, Any]


def _compaction() -> Json:
    """The compaction as the fake LLM logged it (`llm_compactions.jsonl`): the ground truth of a call in no span."""
    (logged,) = [json.loads(line) for line in
                 (corpus.load(CAPTURE).path / "llm_compactions.jsonl").read_text().splitlines()]
    return logged


def _document(spans: list[Span] | None = None) -> Json:
    built = trajectory_from_spans(capture_spans(CAPTURE) if spans is None else spans, session_id=SESSION)
    assert built.valid, [str(issue) for issue in built.issues]
    return built.document()


def _calls(spans: list[Span] | None = None) -> list[LlmCall]:
    """The capture's `response` calls, mapped and completed as the registry completes OpenInference's, in order."""
    spans = sorted(capture_spans(CAPTURE) if spans is None else spans, key=lambda span: span.start_time_unix_nano)
    calls = [openinference.map_span(SpanReader(span), ()) for span in spans if span.name == "response"]
    found = [call for call in calls if isinstance(call, LlmCall)]
    openai_responses_compaction.complete_calls(spans, found)
    return found


def test_the_calls_sent_the_compaction_are_marked_sent_it() -> None:
    logged = _compaction()
    calls = _calls()
    assert len(calls) == 7 and logged["before_seq"] == FIRST_SENT
    marked = [index for index, call in enumerate(calls) if call.sent_compaction is not None]
    assert marked == [5, 6]
    compaction = calls[FIRST_SENT].sent_compaction
    assert compaction is calls[6].sent_compaction
    *kept, item = logged["response"]["output"]
    assert compaction is not None and (compaction.by, compaction.item_id, compaction.encrypted_chars) == (
        "responses.compact", item["id"], len(item["encrypted_content"]))
    # It replaced every item of the conversation it compacted but the user messages, which it re-sends.
    assert compaction.kept_user_messages == len(kept) == 2
    assert compaction.summarized_messages == logged["compacted_items"] - len(kept) == 10
    # It happened after the last call not sent it, turn two's answer, ended.
    assert compaction.time_ns == calls[FIRST_SENT - 1].span.end_time_unix_nano
    # Each call's instructions and the two re-sent questions come before what is new.
    assert [call.sent_compaction_at for call in calls[5:]] == [3, 3]
    assert [m.text for m in calls[FIRST_SENT].input_messages[1:3]] == QUESTIONS[:2]


def test_the_compaction_is_a_step_where_it_happened() -> None:
    steps = _document()["steps"]
    marked = [step for step in steps if "context_compaction" in step.get("extra", {})]
    assert len(marked) == 1
    step = marked[0]
    item = _compaction()["response"]["output"][-1]
    assert step["source"] == "agent" and step["llm_call_count"] == 0 and "metrics" not in step
    assert step["extra"]["context_compaction"] == {
        "kind": "encrypted", "by": "responses.compact", "item_id": item["id"],
        "encrypted_chars": len(item["encrypted_content"]), "call_recorded": False, "summarized_messages": 10,
        "kept_user_messages": 2}
    assert item["id"] in step["message"] and "encrypted" in step["message"]
    # After turn two's answer, before turn three's question.
    order = [("compaction" if "context_compaction" in s.get("extra", {}) else s["source"]) for s in steps]
    assert order == ["system", "user", "agent", "agent", "agent", "user", "agent", "agent", "compaction", "user",
                     "agent", "agent"]


def test_each_question_once_nothing_copied_nothing_lost() -> None:
    document = _document()
    steps = document["steps"]
    assert [corpus.message_text(s["message"]) for s in steps if s["source"] == "user"] == QUESTIONS
    assert not any(step.get("is_copied_context") for step in steps)
    truth = capture_truth(CAPTURE)
    assert corpus.compare(document, truth, call_ids=True) == []
    assert questions.missing_questions(document, corpus.load(CAPTURE).llm_log) == []
    # Turn one's parallel calls, the raising one flagged, and its retry, though later calls were sent none of them.
    calls = [step for step in steps if step.get("tool_calls")]
    first = results_by_call(calls[0])
    assert [(c["function_name"], first[c["tool_call_id"]]["content"]) for c in calls[0]["tool_calls"]] == [
        ("book_hotel", "An error occurred while running the tool."), ("get_weather", "rainy, 9°C")]
    assert first[calls[0]["tool_calls"][0]["tool_call_id"]]["extra"]["is_error"] is True
    assert [r["content"] for r in results_by_call(calls[1]).values()] == [
        "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42"]


def test_the_compactions_output_asks_nothing_anew() -> None:
    """The ground truth's reading too: turn three's first request re-sends the two questions before the compaction
    item, and asks only the third."""
    asked = [(asking.seq, asking.text) for asking in questions.asked_anew(corpus.load(CAPTURE).llm_log)]
    assert asked == [(0, QUESTIONS[0]), (3, QUESTIONS[1]), (FIRST_SENT, QUESTIONS[2])]


def test_a_compaction_item_a_call_answered_with_is_not_one_of_no_span() -> None:
    """Server-side compaction (`context_management`) answers with the item: that call made it, so no call sent it is
    marked (the capture's turn-two answer given the item, as such a call's would hold it)."""
    item = _compaction()["response"]["output"][-1]
    spans = []
    for span in capture_spans(CAPTURE):
        if span.name == "response" and "openai-resp-4" in str(span.attributes.get("output.value")):
            answer = json.loads(str(span.attributes["output.value"]))
            answer["output"].append(item)
            span = replace(span, attributes={**span.attributes, "output.value": json.dumps(answer)})
        spans.append(span)
    assert not any(call.sent_compaction is not None for call in _calls(spans))


def test_the_compaction_call_is_in_no_span() -> None:
    """What the trajectory cannot show, and why: the compaction's request and its tokens are recorded nowhere (the
    day an instrumentation records them, this fails and the rule is to be revisited)."""
    logged = _compaction()
    recorded = json.dumps([span.attributes for span in capture_spans(CAPTURE)])
    assert logged["response"]["id"] not in recorded and logged["response"]["object"] not in recorded
    # Only the compaction's output, as the later calls were sent it.
    assert logged["response"]["output"][-1]["encrypted_content"] in recorded
    final = _document()["final_metrics"]
    truth = capture_truth(CAPTURE)
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                               truth.output_tokens)
