"""OpenInference's smolagents instrumentation on a planning agent (the `smolagents_openinference_planning` capture).

A ToolCallingAgent with `planning_interval=2`: before step 1 it asks the model for a plan, before step 3 for an
updated one, each an LLM call of its own with smolagents' planning templates as its prompt (`stop_sequences`
`["<end_plan>"]`); its memory re-sends each plan to the action calls wrapped in a text of its own. Run one calls
get_weather twice in parallel, then lookup_flight, which raises once and is retried after the updated plan; run two
(`reset=False`, streamed) plans again (an update: the memory holds run one) and answers (`trajectory/mappers/
smolagents_planning.py`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import openinference, smolagents_planning
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus, questions

CAPTURE = "smolagents_openinference_planning"
SESSION = "smol-oi-planning-1"
RUN_ONE_TASK = "Weather in Paris and Oslo, and a flight from Oslo to Paris?"
RUN_TWO_TASK = "Which of the two cities is warmer?"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _planning_seqs() -> list[int]:
    """The calls smolagents asked for a plan: the ones it sent its `<end_plan>` stop sequence (the ground truth)."""
    return [entry["seq"] for entry in _log() if entry["request"].get("stop") == ["<end_plan>"]]


def _calls() -> list[LlmCall]:
    calls = []
    for span in sorted(capture_spans(CAPTURE), key=lambda s: s.start_time_unix_nano):
        if span.attributes.get("openinference.span.kind") == "LLM":
            call = openinference.map_span(SpanReader(span), ())
            assert isinstance(call, LlmCall)
            calls.append(call)
    return calls


def test_the_session_is_the_conversation_that_happened() -> None:
    assert corpus.compare(_document(), capture_truth(CAPTURE), call_ids=True) == []


def test_each_planning_call_is_a_step_marked_planning_whose_message_is_the_plan() -> None:
    """A plan is no action: its step says so (`extra.planning`, as smolagents heads it in its log), its message the
    plan the model wrote, its tokens the call's."""
    truth = capture_truth(CAPTURE)
    planned = [truth.calls[seq] for seq in _planning_seqs()]
    assert len(planned) == 3
    steps = [s for s in _document()["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]
    assert len(steps) == len(truth.calls) == 8
    assert [(s["extra"].get("planning"), s["message"]) for s in steps if "planning" in s["extra"]] == [
        (smolagents_planning.INITIAL_PLAN, planned[0].text), (smolagents_planning.UPDATED_PLAN, planned[1].text),
        (smolagents_planning.UPDATED_PLAN, planned[2].text)]
    plans = [s for s in steps if "planning" in s["extra"]]
    assert [(s["metrics"]["prompt_tokens"], s["metrics"]["completion_tokens"]) for s in plans] == [
        (c.input_tokens, c.output_tokens) for c in planned]
    assert not [s for s in plans if s.get("tool_calls")]


def test_the_planning_templates_are_instructions_and_the_task_is_what_the_user_asked() -> None:
    """The initial plan is asked in one user message, smolagents' template around the task; an update closes with a
    user template. Neither is anyone's question: system steps, and the question before the first plan is the run's
    task as the memory states it to every later call (from the run's span), not a copy of history."""
    document = _document()
    users = [s for s in document["steps"] if s["source"] == "user"]
    assert not [s for s in users if "You are a world expert" in s["message"] or "Now write your updated facts"
                in s["message"]]
    assert not [s for s in users if s.get("is_copied_context")]
    assert [s["message"] for s in users if s["message"].startswith("New task:")] == [
        f"New task:\n{RUN_ONE_TASK}", f"New task:\n{RUN_TWO_TASK}"]
    systems = [s["message"] for s in document["steps"] if s["source"] == "system"]
    assert [text.split("\n", 1)[0] for text in systems] == [
        "You are a world expert at analyzing a situation to derive facts, and plan accordingly towards solving a task.",
        "You are an expert assistant who can solve any task using tool calls. You will be given a task to solve as "
        "best you can.",
        "You are a world expert at analyzing a situation, and plan accordingly towards solving a task.",
        "Now write your updated facts below, taking into account the above history:",
        "You are a world expert at analyzing a situation, and plan accordingly towards solving a task."]
    # Run one: its planning template, its task, its plan, in that order.
    first = [(s["source"], s.get("extra", {}).get("planning")) for s in document["steps"][:3]]
    assert first == [("system", None), ("user", None), ("agent", smolagents_planning.INITIAL_PLAN)]
    assert document["steps"][1]["message"] == f"New task:\n{RUN_ONE_TASK}"


def test_a_plan_the_memory_re_sends_is_the_planning_call_s_answer_not_a_copied_step() -> None:
    """smolagents re-sends a plan to the action calls as "Here are the facts I know and the plan…" (an update's also
    restating the task) with the plan in a code fence: read as the plan, it is the answer a planning step shows,
    never a copied agent step."""
    calls = _calls()
    plans = [c.output_messages[0].text for c in calls if "planning" in c.extra]
    last = calls[-1]  # run two's last action call re-sends the whole memory: three plans
    resent = [m.text for m in last.input_messages if m.role == "assistant" and not m.tool_calls]
    assert resent == plans
    every_step = [s for t in corpus.all_trajectories(_document()) for s in t["steps"]]
    assert not [s for s in every_step if s.get("is_copied_context")]


def test_a_planning_request_asks_the_task_its_template_wraps_and_not_the_template() -> None:
    """The corpus's reading of what each call was asked (`tests/captures/questions.py`): a planning request's template
    is no question; an initial plan's asks the task it wraps, an update's what the memory asks anew before it (run
    two's task). Each is a user step before its call's."""
    proceed = "Now proceed and carry out this plan."
    assert [(a.seq, a.text.strip()) for a in questions.asked_anew(_log())] == [
        (0, f"New task:\n{RUN_ONE_TASK}"), (1, proceed), (4, proceed), (6, f"New task:\n{RUN_TWO_TASK}"), (7, proceed)]
    assert questions.missing_questions(_document(), _log()) == []
