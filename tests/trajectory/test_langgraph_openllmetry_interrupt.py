"""A LangChain `create_agent` whose booking tool waits for a person's review, under OpenLLMetry's LangChain
instrumentation (the `langgraph_openllmetry_interrupt` capture); the reviewer edits the call.

`HumanInTheLoopMiddleware` stops turn 1 after the model's parallel calls with LangGraph's `interrupt()`: the
instrumentation records it as the `after_model` node's run failing (its `execute_task` span in ERROR, the
`GraphInterrupt` its exception event). The application resumes the thread with `Command(resume={"decisions":
[{"type": "edit", ...}]})`, recorded as the input of the graph's `workflow` span under the resumed `invoke_agent` run.
The edited book_hotel runs with the reviewer's arguments; the middleware prepends a notice to its return, which only
the next chat call's input shows. `langgraph_interrupts` (through `openllmetry_langgraph`) and
`openllmetry_langchain.read_call` read them: what the agent asked is an agent step of no LLM call, the edit a user step
where the resumed run starts, the edited call's result what the model was shown. Turn 2 is streamed.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.mappers import langgraph_interrupts, openllmetry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "langgraph_openllmetry_interrupt"
SESSION = "lg-ll-interrupt-1"
EDIT = {"decisions": [{"type": "edit", "edited_action": {"name": "book_hotel", "args": {"city": "Oslo", "nights": 3}}}]}


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _llm_step_index(steps: list[dict[str, Any]], seq: int) -> int:
    """The position of the step of the log's call `seq` (known by its response id)."""
    response_id = corpus.load(CAPTURE).llm_log[seq]["response"]["id"]
    (index,) = [i for i, step in enumerate(steps) if (step.get("extra") or {}).get("response_id") == response_id]
    return index


def _interrupted_spans() -> list[Any]:
    return [span for span in capture_spans(CAPTURE) if any(
        event.attributes.get("exception.type") == langgraph_interrupts.GRAPH_INTERRUPT for event in span.events)]


def test_the_session_is_the_conversation_that_happened() -> None:
    document = _document()
    assert corpus.compare(document, capture_truth(CAPTURE), call_ids=True) == []
    assert document["agent"]["name"] == "travel_agent"
    # Three traces of the agent's runs (the interrupted invoke, the resume, the streamed turn), one session.
    assert len({span.trace_id for span in capture_spans(CAPTURE) if span.name == "invoke_agent travel_agent"}) == 3
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent",
                                                        "user", "agent", "agent"]


def test_what_the_agent_asked_the_person_is_a_step_when_it_asked() -> None:
    """The premise: the request is in no span but the `after_model` node's `execute_task` span, which the
    instrumentation ends in ERROR on the GraphInterrupt. It asks; nothing failed."""
    interrupted = _interrupted_spans()
    assert [(span.name, span.status_code, span.attributes.get("error.type")) for span in interrupted] == [
        ("execute_task HumanInTheLoopMiddleware.after_model", 2, "GraphInterrupt")]

    document = _document()
    steps = document["steps"]
    first_call = _llm_step_index(steps, 0)
    asked = steps[first_call + 1]
    assert (asked["source"], asked["llm_call_count"]) == ("agent", 0)
    assert asked["message"] == ("Tool execution requires approval\n\n"
                                "Tool: book_hotel\nArgs: {'city': 'Oslo', 'nights': 2}")
    (request,) = asked["extra"]["interrupt"]
    assert [(a["name"], a["args"]) for a in request["value"]["action_requests"]] == [
        (c["function_name"], c["arguments"]) for c in steps[first_call]["tool_calls"]
        if c["function_name"] == "book_hotel"]
    assert asked["extra"]["span_id"] == interrupted[0].span_id
    assert not any("error" in (step.get("extra") or {}) for step in steps)
    unmapped = document["extra"].get("unmapped_attributes", [])
    assert "error.type" not in unmapped and "event exception: exception.message" not in unmapped


def test_the_persons_edit_is_a_user_step_where_it_was_given() -> None:
    """The resumed graph's `workflow` span's input is the Command: its resume value (the edit) is the user's step at
    the start of the resumed run, right after what it answers and before the call after it; the Command is no
    question (no user step of its JSON)."""
    steps = _document()["steps"]
    second_call = _llm_step_index(steps, 1)
    answer = steps[second_call - 1]
    assert answer["source"] == "user"
    assert json.loads(answer["message"]) == EDIT
    assert answer["extra"]["from"] == "resume"
    resumed = {span.span_id: span for span in capture_spans(CAPTURE)}[answer["extra"]["span_id"]]
    assert resumed.name == "invoke_agent travel_agent"
    assert steps[second_call - 2]["extra"].get("interrupt")
    assert not any('"graph"' in corpus.message_text(step.get("message")) for step in steps)


def test_the_edited_calls_result_is_what_the_model_was_shown() -> None:
    """The premise: the book_hotel span ran the reviewer's arguments and recorded the tool's own return; the
    middleware's notice, prepended after it, is only in the next call's input. The step keeps the model's call (2
    nights), its result what the model was shown (the notice and the 3 nights booked)."""
    (booked_span,) = [span for span in capture_spans(CAPTURE) if span.name == "execute_tool book_hotel"]
    assert '"inputs": {"city": "Oslo", "nights": 3}' in booked_span.attributes["traceloop.entity.input"]
    assert "reviewer" not in booked_span.attributes["traceloop.entity.output"]

    shown = {m["tool_call_id"]: m["content"] for m in corpus.load(CAPTURE).llm_log[1]["request"]["messages"]
             if m["role"] == "tool"}
    steps = _document()["steps"]
    first = steps[_llm_step_index(steps, 0)]
    booking = first["tool_calls"][0]
    assert (booking["function_name"], booking["arguments"]) == ("book_hotel", {"city": "Oslo", "nights": 2})
    result = results_by_call(first)[booking["tool_call_id"]]
    assert result["content"] == shown[booking["tool_call_id"]]
    assert result["content"].startswith("Note: a human reviewer replaced this tool call")
    assert result["content"].endswith("Booked Hotel Nord in Oslo, 3 nights, ref OSL-42")
    assert result["extra"]["span_id"] == booked_span.span_id  # still the tool's run: only its content is as shown


def test_each_chat_call_shows_its_own_new_results() -> None:
    """What a call shows the model for a result is read from the results new in its input (after its last answer):
    the first resumed call shows both results of the interrupted answer, the next only the retried weather's, the
    history they are re-sent in is no result shown anew."""
    chats = sorted((span for span in capture_spans(CAPTURE) if span.name == "ChatOpenAI.chat"),
                   key=lambda span: span.start_time_unix_nano)
    calls = [openllmetry.map_span(SpanReader(span), []) for span in chats]
    assert all(isinstance(call, LlmCall) for call in calls)
    assert [sorted(call.shown_tool_results) for call in calls if isinstance(call, LlmCall)] == [
        [], ["call_0_0", "call_0_1"], ["call_1_0"], [], ["call_3_0"]]


def test_nothing_is_shown_twice_after_resuming() -> None:
    """The `after_model` node runs again on resume, and after each later call (no interrupt then): one step asks,
    one answers; the edited tool ran once, after the edit, its result on the call that asked for it."""
    document = _document()
    steps = document["steps"]
    assert sum(1 for step in steps if step.get("llm_call_count") == 0) == 1
    assert sum(1 for step in steps if (step.get("extra") or {}).get("from") == "resume") == 1
    assert len(corpus.llm_steps(document)) == len(corpus.load(CAPTURE).llm_log) == 5
    first = steps[_llm_step_index(steps, 0)]
    results = results_by_call(first)
    weather = results[first["tool_calls"][1]["tool_call_id"]]
    assert (weather["content"], weather["extra"]["is_error"]) == ("the weather service did not answer in time", True)
    booked = [r for step in steps for r in (step.get("observation") or {}).get("results", ())
              if "Booked Hotel Nord" in r["content"]]
    assert len(booked) == 1
    spans = {span.span_id: span for span in capture_spans(CAPTURE)}
    asked = steps[_llm_step_index(steps, 0) + 1]
    assert spans[booked[0]["extra"]["span_id"]].trace_id != spans[asked["extra"]["span_id"]].trace_id


def test_only_a_graph_run_resuming_an_interrupt_has_an_answer() -> None:
    """A Command of no `resume` (a `goto`, an `update`) answers nothing; nor does any other graph input."""
    command = {"graph": None, "update": None, "resume": None, "goto": []}
    assert langgraph_interrupts.command_answer({**command, "resume": EDIT}) == json.dumps(EDIT)
    assert langgraph_interrupts.command_answer({**command, "goto": ["model"]}) is None
    assert langgraph_interrupts.command_answer({"messages": [{"role": "user", "content": "hi"}]}) is None
