"""Strands Agents' interrupts (human in the loop) under its own tracing (the `strands_native_interrupt` capture).

`travel_desk` on the OpenAI provider, a `BeforeToolCallEvent` hook asking a person before each booking: turn one the
model calls `get_weather` (timing out once) and `book_hotel` in parallel, the hook stops the run, the app approves;
the model calls `get_weather` again and `rent_car`, the hook stops the run, the app denies (the hook's `cancel_tool`
message is what the model is sent). Turn two (`stream_async`): `book_table` asks the person itself
(`tool_context.interrupt`) about a deposit, answered, and runs again. Five model calls, five agent runs (each a trace),
three of them stopped for an interrupt (`trajectory/mappers/strands_interrupts.py`).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from tests.captures import corpus

CAPTURE = "strands_native_interrupt"
SESSION = "strands-interrupt-trip-1"
HOTEL = {"city": "Oslo", "nights": 2}
CAR = {"city": "Oslo", "days": 2}
TABLE = {"city": "Oslo", "people": 2, "time": "Friday 20:00"}


def _steps() -> list[dict[str, Any]]:
    return list(capture_document(CAPTURE, SESSION)["steps"])


def _shown(seq: int, call_id: str) -> str:
    """What the model was sent as a call's result in the log's request `seq`."""
    (content,) = [m["content"] for m in corpus.load(CAPTURE).llm_log[seq]["request"]["messages"]
                  if m.get("role") == "tool" and m.get("tool_call_id") == call_id]
    return str(content)


def test_each_interrupt_is_what_the_run_asked_and_the_next_run_starts_with_the_decision() -> None:
    steps = _steps()
    llm = [i for i, step in enumerate(steps) if step.get("llm_call_count") == 1]
    assert len(llm) == 5
    # Where each run stopped, after the call whose tools it was running: what it asked, then what the person decided.
    asked_hotel, approved = steps[llm[0] + 1: llm[0] + 3]
    asked_car, denied = steps[llm[1] + 1: llm[1] + 3]
    asked_deposit, answered = steps[llm[3] + 1: llm[3] + 3]
    assert [(s["source"], s["llm_call_count"]) for s in (asked_hotel, asked_car, asked_deposit)] == [("agent", 0)] * 3
    assert asked_hotel["message"] == (
        f"approve_book_hotel (before book_hotel {json.dumps(HOTEL)}): "
        f'{{"tool": "book_hotel", "input": {json.dumps(HOTEL)}, "message": "Approve book_hotel?"}}')
    assert asked_car["message"].startswith(f"approve_rent_car (before rent_car {json.dumps(CAR)}): ")
    assert asked_deposit["message"] == (
        f"deposit (asked by book_table {json.dumps(TABLE)}): "
        '{"message": "Fiskeriet needs a 200 NOK deposit: pay it?", "amount": "200 NOK"}')
    assert [(r["name"], r["tool_call_id"]) for s in (asked_hotel, asked_car, asked_deposit)
            for r in s["extra"]["interrupt"]] == [
        ("approve_book_hotel", "call_0_1"), ("approve_rent_car", "call_1_1"), ("deposit", "call_3_0")]
    assert [(s["source"], s["extra"]["from"]) for s in (approved, denied, answered)] == [("user", "resume")] * 3
    assert approved["message"] == f"Approved book_hotel {json.dumps(HOTEL)}"
    assert denied["message"] == f"Denied rent_car {json.dumps(CAR)}: {_shown(2, 'call_1_1')}"
    assert answered["message"] == f"Answered deposit for book_table {json.dumps(TABLE)}"
    # The run carrying each on is the next one: its call follows the decision.
    assert [llm[1], llm[2], llm[4]] == [llm[0] + 3, llm[1] + 3, llm[3] + 3]


def test_a_tool_that_asked_is_one_execution_with_its_real_result_on_its_call() -> None:
    executions = [(span, strands.map_span(SpanReader(span), ())) for span in capture_spans(CAPTURE)
                  if span.name == "execute_tool book_table"]
    # Its first span ended when it asked (no status, no result); the second ran once answered.
    assert [isinstance(execution, ToolExecution) for _, execution in executions] == [False, True]
    steps = _steps()
    assert not [step for step in steps if (step.get("extra") or {}).get("dispatch")]
    (booking,) = [step for step in steps if any(c["tool_call_id"] == "call_3_0" for c in step.get("tool_calls") or ())]
    result = results_by_call(booking)["call_3_0"]
    assert result["content"] == _shown(4, "call_3_0")
    assert result["extra"]["span_id"] == executions[1][0].span_id


def test_the_approved_call_has_its_tools_result_and_the_denied_one_the_refusal() -> None:
    steps = _steps()
    first, second = [step for step in steps if step.get("llm_call_count") == 1][:2]
    assert results_by_call(first)["call_0_1"]["content"] == _shown(1, "call_0_1")  # run in the resumed run
    assert results_by_call(first)["call_0_0"]["extra"]["is_error"] is True  # the weather service timed out
    refused = results_by_call(second)["call_1_1"]
    assert refused["content"] == _shown(2, "call_1_1")  # no span ran it: the message the model was sent
    assert not (refused.get("extra") or {}).get("is_error")  # a person's refusal is no failure of the tool
