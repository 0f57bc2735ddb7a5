"""The corpus's check of the user's questions (`tests/captures/questions.py`), on captures built offline.

`openai-agents_otel-genai_server-conversation` asks "Yes, please." twice on the API's conversation state: the
builder once dropped the second asking as re-sent history, and `corpus.compare` (one step per call, results,
tokens) did not see it. The questions check reads the askings from the fake LLM's log and finds each one a user
step of its call's trajectory.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from span_fixtures import capture_document

from tests.captures import corpus, questions

CAPTURE = "openai-agents_otel-genai_server-conversation"
SESSION = "oa-otel-genai-server-conversation-1"
YES = "Yes, please."


@pytest.fixture(scope="module")
def log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


@pytest.fixture(scope="module")
def built() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


@pytest.fixture
def document(built: dict[str, Any]) -> dict[str, Any]:
    return copy.deepcopy(built)


def _user_steps(document: dict[str, Any], text: str) -> list[dict[str, Any]]:
    return [s for s in document["steps"] if s["source"] == "user" and s.get("message") == text]


def test_a_question_asked_twice_on_the_apis_state_is_two_askings(log: list[dict[str, Any]]) -> None:
    # Each chained call (previous_response_id) sends only its new items: every input message is asked anew.
    assert [(a.seq, a.text) for a in questions.asked_anew(log)] == [
        (0, "Book me a hotel in Oslo for 2 nights, and what's the weather there?"), (2, YES), (4, YES),
        (6, "New trip: any tips for Paris in spring?")]


def test_the_capture_shows_every_question(document: dict[str, Any], log: list[dict[str, Any]]) -> None:
    assert questions.missing_questions(document, log) == []


def test_a_dropped_question_asked_again_is_a_problem(document: dict[str, Any], log: list[dict[str, Any]]) -> None:
    first, second = _user_steps(document, YES)
    document["steps"].remove(second)  # taken for re-sent history, as the builder once did
    assert questions.missing_questions(document, log) == [
        f"call 4: asked {YES!r}, no user step in 'Travel desk' before step 8"]
    document["steps"].remove(first)
    assert len(questions.missing_questions(document, log)) == 2


def test_a_question_shown_as_copied_context_is_a_problem(document: dict[str, Any],
                                                         log: list[dict[str, Any]]) -> None:
    _user_steps(document, YES)[1]["is_copied_context"] = True
    assert [p.split(":")[0] for p in questions.missing_questions(document, log)] == ["call 4"]


def test_a_question_after_the_call_it_was_asked_in_is_a_problem(document: dict[str, Any],
                                                                 log: list[dict[str, Any]]) -> None:
    steps = document["steps"]
    (first,) = _user_steps(document, "Book me a hotel in Oslo for 2 nights, and what's the weather there?")
    steps.append(steps.pop(steps.index(first)))
    assert [p.split(":")[0] for p in questions.missing_questions(document, log)] == ["call 0"]


@pytest.mark.parametrize(("capture", "askings"), [
    # DSPy re-renders its loop in one user message: a run's first call asks, the rest (the extract too) re-send.
    ("dspy_openinference", [0, 3]),
    # smolagents merges a step's observation and the next task into one text: the task is asked, not the error
    # merged into the managed agent's task on its retry.
    ("smolagents_openinference_managed-agent", [0, 2, 3]),
    # LlamaIndex's ReActAgent sends each Observation as a user message: a result, not a question.
    ("llamaindex_openinference_react", [0, 4]),
    # ADK sends the agent it transferred to the other agent's events as "For context:" user messages: history.
    ("google-adk_openinference", [0, 2]),
])
def test_restated_history_is_not_asked_again(capture: str, askings: list[int]) -> None:
    assert [a.seq for a in questions.asked_anew(corpus.load(capture).llm_log)] == askings


def test_only_adks_own_for_context_forms_are_history() -> None:
    # ADK's rewrites are read by their exact forms (its preamble, or "For context:" then "[<agent>] …" parts); a
    # person's question that opens with the same words is still a question, so no missing one can hide behind them.
    (entry,) = [e for e in corpus.load("google-adk_openinference").llm_log if e["seq"] == 3]
    contents = copy.deepcopy(entry["request"]["contents"])
    adk = [c for c in contents if c["parts"][0].get("text", "").startswith("For context:")]
    assert adk and [a.seq for a in questions.asked_anew([entry])] == []
    old_form = {"role": "user", "parts": [{"text": "For context:"}, {"text": "[travel_desk] said: Oslo is rainy."}]}
    asked = {"role": "user", "parts": [{"text": "For context: my flight lands at nine."}]}
    request = {**entry["request"], "contents": [*contents, old_form, asked]}
    assert [a.text for a in questions.asked_anew([{**entry, "request": request}])] == [
        "For context: my flight lands at nine."]


def test_a_call_on_the_apis_state_asks_every_input_message() -> None:
    # A chained call re-sends nothing: a question before the tool output it sends along is asked all the same.
    given = [{"role": "user", "content": "Go ahead."},
             {"type": "function_call_output", "call_id": "c1", "output": "ok"}]
    chained = {"seq": 0, "api": "openai.responses", "request": {"previous_response_id": "resp_1", "input": given}}
    assert [a.text for a in questions.asked_anew([chained])] == ["Go ahead."]
    # The same input where the client holds the history: the question is re-sent, before the result.
    assert questions.asked_anew([{**chained, "request": {"input": given}}]) == []
