"""Gemini CLI's own OpenTelemetry export (trajectory/mappers/gemini_cli.py), read from its real capture.

Built offline from the capture's spans and the log records linked to them (a session's log records are read by trace
id: the CLI's response events, linked to none, never reach it; tests/trajectory_service's KNOWN_GAPS says what that
leaves out)."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_logs, capture_spans, capture_truth, results_by_call

CAPTURE = "gemini-cli_native"
ROUTER_WORK = {"by": "Gemini CLI", "purpose": "model routing", "role": "utility_router"}


@cache
def _document() -> str:
    logs = [log for log in capture_logs(CAPTURE) if log.trace_id]  # what the service reads with the session
    built = trajectory_from_spans(capture_spans(CAPTURE), logs, session_id=corpus.load(CAPTURE).session_id)
    assert built.valid, [str(issue) for issue in built.issues]
    assert built.unmapped_attributes == [] and built.warnings == []
    return json.dumps(built.document())


def document() -> dict[str, Any]:
    return dict(json.loads(_document()))


def test_each_call_is_a_step_with_its_text_thoughts_tool_calls_and_results() -> None:
    truth = capture_truth(CAPTURE)
    # What no span or trace-linked record holds: the thoughts' count (48) apart from the answer's, the cache reads.
    problems = corpus.compare(document(), truth.without_reasoning_tokens().without_cache_reads())
    assert problems == ["total_completion_tokens 132 != 180"]
    steps = corpus.llm_steps(document())
    assert steps[1]["reasoning_content"] == truth.calls[1].reasoning  # the streamed thought pieces, joined
    assert all("other_choices" not in (step.get("extra") or {}) for step in steps)  # a streamed answer is one answer
    assert document()["final_metrics"]["total_prompt_tokens"] == truth.input_tokens


def test_the_routers_calls_are_the_clis_own_work_and_ask_nothing() -> None:
    steps = corpus.llm_steps(document())
    routed = [step for step in steps if (step.get("extra") or {}).get("framework_work")]
    assert [step["model_name"] for step in routed] == ["gemini-3.5-flash-lite"] * 2
    assert all(step["extra"]["framework_work"] == ROUTER_WORK for step in routed)
    assert not any((step.get("extra") or {}).get("framework_work") for step in steps if step not in routed)
    # Each question a user step once, before the agent's call asked it, none before a router's; its system prompt
    # (the router's instructions) no system step.
    users = [step for step in document()["steps"] if step["source"] == "user"]
    assert [corpus.message_text(step["message"]).rsplit("</session_context>", 1)[-1].strip() for step in users] == [
        "What does this project do? Check its readme.", "How many lines does tides.py have?"]
    assert questions.missing_questions(document(), corpus.load(CAPTURE).llm_log) == []
    systems = [step for step in document()["steps"] if step["source"] == "system"]
    assert len(systems) == 1 and corpus.message_text(systems[0]["message"]).startswith("You are Gemini CLI")


def test_the_second_turns_question_is_asked_though_the_router_was_sent_it_first() -> None:
    ordered = [(step["source"], corpus.message_text(step["message"])[:34], step.get("tool_calls") and
                step["tool_calls"][0]["function_name"]) for step in document()["steps"]][-4:]
    assert ordered == [("agent", '{"complexity_reasoning": "A simple', None),
                       ("user", "How many lines does tides.py have?", None),
                       ("agent", "", "run_shell_command"), ("agent", "tides.py has 3 lines.", None)]


def test_the_failed_tool_is_flagged_with_what_the_model_was_shown() -> None:
    step = next(step for step in corpus.llm_steps(document())
                if [call["arguments"] for call in step.get("tool_calls") or ()] == [{"file_path": "readme.md"}])
    (result,) = results_by_call(step).values()
    assert json.loads(corpus.message_text(result["content"]))["error"].startswith("File not found: ")
    assert result["extra"]["error"]["type"] == "file_not_found"


def test_tool_calls_are_named_by_the_ids_the_cli_sent() -> None:
    sent = {part["functionResponse"]["id"] for entry in corpus.load(CAPTURE).llm_log
            for content in entry["request"]["contents"] for part in content["parts"] if "functionResponse" in part}
    named = [call["tool_call_id"] for step in corpus.llm_steps(document()) for call in step.get("tool_calls") or ()]
    assert len(named) == 4 and set(named) <= sent
    for step in corpus.llm_steps(document()):
        assert set(results_by_call(step)) == {call["tool_call_id"] for call in step.get("tool_calls") or ()}
