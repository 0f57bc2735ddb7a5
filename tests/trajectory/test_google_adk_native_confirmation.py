"""Google ADK's tool confirmation under its own tracing (the `google-adk_native_confirmation` capture's exports).

`travel_desk` on `gemini-2.5-flash` (thinking) with `book_hotel` and `rent_car` as `FunctionTool(require_confirmation=
True)`: the model calls both in parallel, ADK answers each with its stand-in ("requires confirmation") and ends the
invocation asking; the app answers in a second invocation, the hotel confirmed, the car rejected; ADK runs the
hotel's tool, answers the car's call with its rejection, and the model answers. Turn two, streamed: a weather lookup
raising once, retried. What no mapper can mend (ADK writes a thought part as a text part) is the capture's
KNOWN_GAPS entry (tests/trajectory_service/test_capture_corpus.py).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document

CAPTURE = "google-adk_native_confirmation"
SESSION = "adk-confirm-travel-1"
HOTEL = {"city": "Oslo", "nights": 2}
CAR = {"city": "Oslo", "days": 2}


def _steps() -> list[dict[str, Any]]:
    return list(capture_document(CAPTURE, SESSION)["steps"])


def _results(step: dict[str, Any]) -> list[Any]:
    return [json.loads(result["content"]) for result in (step.get("observation") or {}).get("results", [])]


def test_the_run_asks_for_confirmation_and_the_next_carries_on_with_the_answers() -> None:
    steps = _steps()
    first_call = next(i for i, step in enumerate(steps) if step.get("llm_call_count") == 1)
    asked, answered, answer = steps[first_call + 1: first_call + 4]
    assert (asked["source"], asked["llm_call_count"]) == ("agent", 0)
    assert asked["message"] == (f"Confirmation asked for book_hotel {json.dumps(HOTEL)}\n"
                                f"Confirmation asked for rent_car {json.dumps(CAR)}")
    assert [request["tool"] for request in asked["extra"]["interrupt"]] == ["book_hotel", "rent_car"]
    assert answered["source"] == "user"
    assert answered["extra"]["from"] == "resume"
    assert answered["message"] == f"Confirmed book_hotel {json.dumps(HOTEL)}\nRejected rent_car {json.dumps(CAR)}"
    assert answer["llm_call_count"] == 1
    assert "The car rental was not approved" in answer["message"]


def test_each_confirmed_call_has_the_result_the_model_was_shown_and_no_stand_in() -> None:
    steps = _steps()
    first = next(step for step in steps if step.get("llm_call_count") == 1)
    assert [call["function_name"] for call in first["tool_calls"]] == ["book_hotel", "rent_car"]
    assert _results(first) == [
        {"status": "success", "booking": "Hotel Nord in Oslo, 2 nights, ref OSL-42"},
        {"error": "This tool call is rejected."},
    ]
    # ADK's stand-in answer while the person was asked, never shown the model, is no result and no step.
    assert "requires confirmation" not in json.dumps(steps)
    assert not [step for step in steps if (step.get("extra") or {}).get("dispatch")]


def test_a_streamed_call_re_sent_is_no_step_of_its_own() -> None:
    steps = _steps()
    assert not [step for step in steps if step.get("is_copied_context")]
    calls = [step for step in steps if step.get("llm_call_count") == 1]
    assert len(calls) == 5  # the fake LLM's five calls, each once
    lookup, retry = calls[2], calls[3]
    assert [call["function_name"] for call in lookup["tool_calls"] + retry["tool_calls"]] == ["get_weather"] * 2
    assert _results(lookup)[0]["response_type"] == "ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN"
    assert _results(retry) == [{"result": "rainy, 9°C"}]
    # Reasoning tokens are part of the output tokens (Gemini reports them beside: ADK adds them up).
    assert [(step["metrics"]["completion_tokens"], step["metrics"]["extra"]["reasoning_tokens"]) for step in calls] == [
        (70, 38), (61, 26), (35, 21), (33, 19), (40, 17)]
