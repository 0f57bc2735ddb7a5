"""Agno's human in the loop under OpenInference's Agno instrumentation (the `agno_openinference_confirmation`
capture): a `requires_confirmation` tool called twice in parallel pauses the run, the application confirms the Paris
booking and rejects the Oslo one with a note, `continue_run` carries the run on; a streamed turn follows. The model is
Agno's OpenAIResponses on gpt-5 with `reasoning_effort="medium"` (`trajectory/mappers/agno.py`,
`trajectory/mappers/agno_paused_runs.py`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_truth

CAPTURE = "agno_openinference_confirmation"
SESSION = "agno-oi-confirm-1"
PARIS = 'book_hotel {"city": "Paris", "nights": 2}'
OSLO = 'book_hotel {"city": "Oslo", "nights": 2}'


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _llm_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [step for step in document["steps"] if step.get("llm_call_count") == 1]


def test_each_call_has_the_effort_its_responses_request_set() -> None:
    """Agno's OpenAIResponses sends `reasoning={"effort": "medium", …}`, recorded as `llm.invocation_parameters`."""
    steps = _llm_steps(_document())
    assert len(steps) == len(capture_truth(CAPTURE).calls) == 5
    assert [step.get("reasoning_effort") for step in steps] == ["medium"] * 5


def test_the_paused_run_asks_and_the_continued_run_starts_with_the_decisions() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    sources = [(step["source"], step.get("llm_call_count")) for step in document["steps"]]
    assert sources == [("system", None), ("user", None), ("agent", 1), ("agent", 0), ("user", None), ("agent", 1),
                       ("user", None), ("agent", 1), ("agent", 1), ("agent", 1)]
    asked, decided = document["steps"][3], document["steps"][4]
    # What the run paused for: both parallel bookings, each its call's id (an agent step of no LLM call).
    assert asked["message"] == f"Confirmation asked for {PARIS}\nConfirmation asked for {OSLO}"
    first_calls = [(c["tool_call_id"], c["function_name"]) for c in document["steps"][2]["tool_calls"]]
    assert [(r["tool_call_id"], r["tool"]) for r in asked["extra"]["interrupt"]] == first_calls
    # The person's decisions, where the continued run starts: Paris confirmed (its booking ran), Oslo rejected with
    # what the model was shown as that call's result.
    oslo_id = first_calls[1][0]
    assert decided["message"] == f"Confirmed {PARIS}\nRejected {OSLO}: {truth.tool_results[oslo_id]}"
    assert decided["extra"]["from"] == "resume"
    # Agno's placeholder for the paused run ("I have tools to execute, but I need confirmation.") is no one's words.
    assert not [step for step in document["steps"] if "I have tools to execute" in str(step.get("message"))]


def test_nothing_twice_and_each_call_its_own_reasoning() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    steps = _llm_steps(document)
    assert [step["reasoning_content"] for step in steps] == [call.reasoning for call in truth.calls]
    questions = [step["message"] for step in document["steps"] if step["source"] == "user"
                 and step.get("extra", {}).get("from") != "resume"]
    assert questions == ["Book a hotel in Paris and one in Oslo, two nights each.",
                         "What weather will I have in Paris?"]
