"""A LangChain `create_agent` whose booking tool waits for a person's approval, under OpenInference (the
`langgraph_openinference_interrupt` capture).

`HumanInTheLoopMiddleware` stops turn 1 after the model's parallel calls with LangGraph's `interrupt()`: the tracer
records the request only as the `GraphInterrupt` exception of the `after_model` node's run (ended OK), its message a
Python repr. The application resumes the thread with `Command(resume={"decisions": [{"type": "approve"}]})`, which the
tracer records as the input of the graph's next run (another trace); the node runs again, the model call does not.
`trajectory/mappers/langgraph_interrupts.py` reads both: what the agent asked is an agent step of no LLM call when it
asked, the person's answer a user step where the resumed run starts. Turn 2 is streamed; every call thinks first.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import langgraph_interrupts
from tests.captures import corpus

CAPTURE = "langgraph_openinference_interrupt"
SESSION = "lg-oi-interrupt-1"
APPROVAL = {"decisions": [{"type": "approve"}]}


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _llm_step_index(steps: list[dict[str, Any]], seq: int) -> int:
    """The position of the step of the log's call `seq` (known by its reasoning, distinct per call)."""
    reasoning = corpus.load(CAPTURE).llm_log[seq]["response"]["reasoning"]
    (index,) = [i for i, step in enumerate(steps) if step.get("reasoning_content") == reasoning]
    return index


def test_the_session_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert document["agent"]["name"] == "travel_agent"
    # Three traces (the interrupted invoke, the resume, the streamed turn), one session.
    assert len({span.trace_id for span in capture_spans(CAPTURE)}) == 3
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent",
                                                        "user", "agent", "agent"]


def test_what_the_agent_asked_the_person_is_a_step_when_it_asked() -> None:
    """The premise: the request is in no span but the `after_model` run's GraphInterrupt, a run ended OK."""
    interrupted = [span for span in capture_spans(CAPTURE) if any(
        event.attributes.get("exception.type") == langgraph_interrupts.GRAPH_INTERRUPT for event in span.events)]
    assert [(span.name, span.status_code) for span in interrupted] == [("HumanInTheLoopMiddleware.after_model", 1)]

    document = _document()
    steps = document["steps"]
    first_call = _llm_step_index(steps, 0)
    asked = steps[first_call + 1]
    # Between the call whose book_hotel needs approval and the answer given.
    assert (asked["source"], asked["llm_call_count"]) == ("agent", 0)
    assert asked["message"] == ("Tool execution requires approval\n\n"
                                "Tool: book_hotel\nArgs: {'city': 'Oslo', 'nights': 2}")
    ((request,),) = [asked["extra"]["interrupt"]]
    assert [(a["name"], a["args"]) for a in request["value"]["action_requests"]] == [
        (c["function_name"], c["arguments"]) for c in steps[first_call]["tool_calls"]
        if c["function_name"] == "book_hotel"]
    assert request["value"]["review_configs"][0]["allowed_decisions"] == ["approve", "edit", "reject"]
    assert asked["extra"]["span_id"] == interrupted[0].span_id
    assert "event exception: exception.message" not in document["extra"].get("unmapped_attributes", [])


def test_the_persons_answer_is_a_user_step_where_it_was_given() -> None:
    """The resumed run's input is the Command: its resume value is the user's step, before the call after it; the
    Command is no question (no user step of its JSON)."""
    steps = _document()["steps"]
    second_call = _llm_step_index(steps, 1)
    answer = steps[second_call - 1]
    assert answer["source"] == "user"
    assert json.loads(answer["message"]) == APPROVAL
    assert answer["extra"]["from"] == "resume"
    assert steps[second_call - 2]["extra"].get("interrupt")  # right after what it answers
    assert not any('"graph"' in corpus.message_text(step.get("message")) for step in steps)


def test_nothing_is_shown_twice_after_resuming() -> None:
    """The node that interrupted runs again on resume, and again after each later call (no interrupt then): one
    step asks; the approved tool ran once, after the approval, its result on the call that asked for it."""
    document = _document()
    steps = document["steps"]
    assert sum(1 for step in steps if step.get("llm_call_count") == 0) == 1
    assert len(corpus.llm_steps(document)) == len(corpus.load(CAPTURE).llm_log) == 5
    first = steps[_llm_step_index(steps, 0)]
    results = results_by_call(first)
    booked = results[first["tool_calls"][0]["tool_call_id"]]
    assert booked["content"] == "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42"
    assert "is_error" not in booked.get("extra", {})
    weather = results[first["tool_calls"][1]["tool_call_id"]]
    assert (weather["content"], weather["extra"]["is_error"]) == ("the weather service did not answer in time", True)
    # The booking ran in the resumed trace, the interrupt in the first.
    spans = {span.span_id: span for span in capture_spans(CAPTURE)}
    asked = steps[_llm_step_index(steps, 0) + 1]
    assert spans[booked["extra"]["span_id"]].trace_id != spans[asked["extra"]["span_id"]].trace_id


def test_a_resume_of_any_value_is_its_answer_and_other_commands_none() -> None:
    command = {"graph": None, "update": None, "resume": None, "goto": []}
    assert langgraph_interrupts.resume_answer(json.dumps({**command, "resume": "yes, book it"})) == "yes, book it"
    assert langgraph_interrupts.resume_answer(json.dumps({**command, "resume": APPROVAL})) == json.dumps(APPROVAL)
    assert langgraph_interrupts.resume_answer(json.dumps({**command, "goto": ["model"]})) is None
    assert langgraph_interrupts.resume_answer(json.dumps({"messages": [{"role": "user", "content": "hi"}]})) is None


def test_what_any_interrupt_asked_is_its_text() -> None:
    """HumanInTheLoopMiddleware's requests read by their descriptions; a plain `interrupt(value)` asks its value."""
    assert langgraph_interrupts.asked_text([{"value": "Do you approve the booking?", "id": "1"}]) == \
        "Do you approve the booking?"
    per_call = {"type": "tool_approval", "tool_call_id": "toolu_0_0", "name": "book_hotel", "args": {},
                "description": "Booking charges the card"}
    assert langgraph_interrupts.asked_text([{"value": per_call, "id": "2"}]) == "Booking charges the card"
    assert langgraph_interrupts.asked_text([{"value": {"draft": "Dear Ann"}, "id": "3"}]) == '{"draft": "Dear Ann"}'
