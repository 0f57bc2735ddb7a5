"""openai-agents on the API's conversation state, traced by OpenInference (the
`openai-agents_openinference_server-conversation` capture).

With `previous_response_id` or `conversation_id` the SDK sends each call only the new items; the instrumentation
records the Response the API returned as `llm.invocation_parameters`, which names the state the call continued
(`trajectory/mappers/openai_sdk.py`, `continues_server_state`). Its four turns share one trace (the SDK's
`trace(…, group_id=…)`), and the user answers "Yes, please." twice.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openai_sdk, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "openai-agents_openinference_server-conversation"
SESSION = "oa-oi-server-conversation-1"
PARAMETERS = "llm.invocation_parameters"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _response_spans(spans: list[Span]) -> list[Span]:
    """openai-agents' Responses calls, in the order they were made (one at a time, as the log has them)."""
    calls = [span for span in spans if span.attributes.get("openinference.span.kind") == "LLM"]
    return sorted(calls, key=lambda span: span.start_time_unix_nano)


def _call(span: Span) -> LlmCall:
    call = openinference.map_span(SpanReader(span), ())
    assert isinstance(call, LlmCall)
    return call


def _continues_server_state(request: dict[str, Any]) -> bool:
    return bool(request.get("previous_response_id") or request.get("conversation"))


def _questions(log: list[dict[str, Any]]) -> list[str]:
    """What the user asked, from what the model was sent: the user items of a call chained to the API's state (it
    holds the rest) or of a call sending no tool output (a run's first; the others re-send its question)."""
    asked = []
    for entry in log:
        items = entry["request"]["input"]
        if _continues_server_state(entry["request"]) or not any(
                item.get("type") == "function_call_output" for item in items):
            asked.extend(item["content"] for item in items if item.get("role") == "user")
    return asked


def _user_steps(spans: list[Span]) -> list[str]:
    result = trajectory_from_spans(spans, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return [step["message"] for step in result.document()["steps"] if step["source"] == "user"]


def test_the_capture_is_one_trace_continuing_the_apis_state() -> None:
    """What the other tests rely on: one trace, and calls chained by previous_response_id and by conversation."""
    spans = capture_spans(CAPTURE)
    assert len({span.trace_id for span in spans}) == 1
    requests = [entry["request"] for entry in _log()]
    assert any(r.get("previous_response_id") for r in requests) and any(r.get("conversation") for r in requests)
    assert _questions(_log()).count("Yes, please.") == 2


def test_each_call_one_step_each_question_as_often_as_asked_each_result_on_its_call() -> None:
    spans = capture_spans(CAPTURE)
    result = trajectory_from_spans(spans, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    assert corpus.compare(document, corpus.GroundTruth.of(_log())) == []
    # The second "Yes, please." is a question of its own: the API held the first, the SDK sent only the new one.
    assert _user_steps(spans) == _questions(_log())
    assert [s["source"] for s in document["steps"]].count("system") == 1
    assert not [s for s in document["steps"] if s.get("is_copied_context") or s.get("llm_call_count") == 0]
    assert not document["extra"].get("warnings")
    failed = [r for s in document["steps"] for r in (s.get("observation") or {}).get("results") or ()
              if (r.get("extra") or {}).get("is_error")]
    # Named by its `call_id` (`call_…`: the output sent without its call, on the API's state, names only that), not
    # by its item's own id (`fc_…`).
    booking = _log()[0]["response"]["tool_calls"][0]
    assert booking["id"].startswith("call_") and booking["item_id"].startswith("fc_")
    assert [r["source_call_id"] for r in failed] == [booking["id"]]


def test_a_call_continuing_the_apis_state_shows_all_its_input_anew() -> None:
    spans = _response_spans(capture_spans(CAPTURE))
    # As recorded: the Response's own echo of the state, not a request parameter.
    assert [json.loads(str(span.attributes[PARAMETERS]))["id"] for span in spans] == [
        entry["response"]["id"] for entry in _log()]
    assert [_call(span).input_all_new for span in spans] == [
        _continues_server_state(entry["request"]) for entry in _log()]


def test_a_question_asked_again_on_a_conversation_is_shown_again() -> None:
    """The last turn (a call naming a conversation of the Conversations API, no previous response) asking
    "Yes, please." a third time: the model, holding the rest on the server, was sent it again."""
    spans = capture_spans(CAPTURE)
    (on_conversation,) = [span for span in _response_spans(spans)
                          if "conversation" in json.loads(str(span.attributes[PARAMETERS]))]
    asked = "llm.input_messages.1.message.content"
    assert on_conversation.attributes[asked] != "Yes, please."
    moved = [replace(span, attributes={**span.attributes, asked: "Yes, please."}) if span is on_conversation else span
             for span in spans]
    assert _user_steps(moved).count("Yes, please.") == 3


def test_an_openai_sdk_response_naming_a_conversation_shows_all_its_input_anew() -> None:
    """The same state under OpenInference's openai instrumentation, whose `llm.invocation_parameters` are the
    request's: a call naming `conversation=` (here in place of the recorded previous_response_id)."""
    chained = [span for span in capture_spans("openai-sdk_openinference_responses")
               if openai_sdk.is_openinference_response(span)
               and "previous_response_id" in json.loads(str(span.attributes[PARAMETERS]))]
    assert chained
    for span in chained:
        parameters = json.loads(str(span.attributes[PARAMETERS]))
        del parameters["previous_response_id"]
        on_conversation = replace(span, attributes={**span.attributes,
                                                    PARAMETERS: json.dumps({**parameters, "conversation": "conv_1"})})
        assert _call(on_conversation).input_all_new
        assert not _call(replace(span, attributes={**span.attributes, PARAMETERS: json.dumps(parameters)})
                         ).input_all_new
