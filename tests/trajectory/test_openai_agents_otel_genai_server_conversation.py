"""openai-agents on the API's conversation state, traced by OpenTelemetry's openai-agents-v2 (the
`openai-agents_otel-genai_server-conversation` capture).

Four runs of one travel desk in one trace (the SDK's `trace(…, group_id=…)`), the second and third chained by
`previous_response_id`, the fourth on a Conversations API conversation: the SDK sends each chained call only the
new items, and the user answers "Yes, please." twice. Unlike OpenInference (whose `llm.invocation_parameters` is the
Response naming the state, `openai_sdk.continues_server_state`), 0.1.0 records the state nowhere: a chat span
holds the response id, model, usage and messages only. Before `build._Context.llm_call` took an agent run's first
call as a start of its own, the second "Yes, please." was dropped as re-sent history (the question was known once
in the trace), its turn opening with the model's `book_hotel` call.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_spans

CAPTURE = "openai-agents_otel-genai_server-conversation"
SESSION = "oa-otel-genai-server-conversation-1"
INPUT = "gen_ai.input.messages"
Json = dict[str, Any]


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _document(spans: list[Span], session: str = SESSION) -> Json:
    result = trajectory_from_spans(spans, session_id=session)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _user_steps(document: Json) -> list[str]:
    return [step["message"] for step in document["steps"] if step["source"] == "user"]


def _chained(request: Json) -> bool:
    return bool(request.get("previous_response_id") or request.get("conversation"))


def _questions(log: list[Json]) -> list[str]:
    """What the user asked, from what the model was sent: the user items of a call chained to the API's state (it
    holds the rest) or of a call sending no tool output (a run's first; the others re-send its question)."""
    asked = []
    for entry in log:
        items = entry["request"]["input"]
        if _chained(entry["request"]) or not any(item.get("type") == "function_call_output" for item in items):
            asked.extend(item["content"] for item in items if item.get("role") == "user")
    return asked


def _chat_spans(spans: list[Span]) -> list[Span]:
    """The model calls, in the order they were made (one at a time, as the log has them)."""
    return sorted((s for s in spans if s.attributes.get("gen_ai.operation.name") == "chat"),
                  key=lambda s: s.start_time_unix_nano)


def test_the_capture_is_one_trace_whose_spans_record_no_server_state() -> None:
    """What the fix rests on: four runs in one trace, chained by previous_response_id and by conversation, the
    question asked twice; and no span names the state (so no mapper can read it, as OpenInference's can)."""
    spans = capture_spans(CAPTURE)
    assert len({span.trace_id for span in spans}) == 1
    requests = [entry["request"] for entry in _log()]
    assert any(r.get("previous_response_id") for r in requests) and any(r.get("conversation") for r in requests)
    assert _questions(_log()).count("Yes, please.") == 2
    chats = _chat_spans(spans)
    assert [s.attributes["gen_ai.response.id"] for s in chats] == [entry["response"]["id"] for entry in _log()]
    named = {str(value) for span in spans for value in span.attributes.values()}
    assert not [value for value in named if "previous_response_id" in value or "conv_1" in value]


def test_each_call_one_step_each_question_as_often_as_asked_each_result_on_its_call() -> None:
    document = _document(capture_spans(CAPTURE))
    assert corpus.compare(document, corpus.GroundTruth.of(_log())) == []
    # The second "Yes, please." is a question of its own: the API held the first, the SDK sent only the new one.
    assert _user_steps(document) == _questions(_log())
    assert document["agent"]["name"] == "Travel desk" and not document.get("subagent_trajectories")
    assert not [s for s in document["steps"] if s.get("is_copied_context") or s.get("llm_call_count") == 0]
    assert not document["extra"].get("warnings")
    failed = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()
              if (r.get("extra") or {}).get("is_error")]
    # Named by its `call_id` (`call_…`, which its output names), not the item's own `id` (`fc_…`) the repr holds too.
    booking = _log()[0]["response"]["tool_calls"][0]
    assert booking["id"].startswith("call_") and booking["item_id"].startswith("fc_")
    assert [r["source_call_id"] for r in failed] == [booking["id"]]


def test_a_question_asked_again_on_a_conversation_is_shown_again() -> None:
    """The last run (a call naming a Conversations API conversation, no previous response) asking "Yes, please." a
    third time: the model, holding the rest on the server, was sent it again."""
    spans = capture_spans(CAPTURE)
    last = _chat_spans(spans)[-1]
    asked = json.loads(str(last.attributes[INPUT]))
    assert [m["parts"][0]["content"] for m in asked] == [_log()[-1]["request"]["input"][0]["content"]]
    again = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Yes, please."}]}])
    moved = [replace(span, attributes={**span.attributes, INPUT: again}) if span is last else span for span in spans]
    assert _user_steps(_document(moved)).count("Yes, please.") == 3


def test_a_run_re_sending_the_session_s_history_in_the_same_trace_repeats_no_question() -> None:
    """The run rule reads a run's first call as new only when it re-sends no answer: `openai-agents_otel-genai`'s
    two turns (an SQLiteSession re-sending turn one, answer included) put in one trace, as `trace(…)` would, still
    show each question once, and the booking agent a handoff started repeats none."""
    spans = capture_spans("openai-agents_otel-genai")
    assert len({span.trace_id for span in spans}) == 2
    (trace_id, *_) = {span.trace_id for span in spans}
    document = _document([replace(span, trace_id=trace_id) for span in spans], "oa-otel-genai-travel-1")
    questions = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Is Bergen warmer?"]
    assert _user_steps(document) == questions
    assert all(_user_steps(sub) == [] for sub in document["subagent_trajectories"])
