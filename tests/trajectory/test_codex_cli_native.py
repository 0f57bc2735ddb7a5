"""The Codex CLI's own OpenTelemetry export (tests/captures/codex-cli_native; trajectory/mappers/codex_cli.py).

Read as the service reads a session: its spans and the log records linked to their traces (the CLI's
`codex.sse_event` records, linked to none, are never read with them)."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_logs, capture_spans

CAPTURE = "codex-cli_native"


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    capture = corpus.load(CAPTURE)
    logs = [log for log in capture_logs(CAPTURE) if log.trace_id]
    result = trajectory_from_spans(capture_spans(CAPTURE), logs, session_id=capture.session_id)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.data


def _calls(document: dict[str, Any]) -> list[dict[str, Any]]:
    return corpus.llm_steps(document)


def test_each_model_call_is_a_step_with_the_tool_calls_it_made(document: dict[str, Any]) -> None:
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    steps = _calls(document)
    assert len(steps) == len(truth.calls) == 6
    assert [[(t["tool_call_id"], t["function_name"], t["arguments"]) for t in s.get("tool_calls") or ()]
            for s in steps] == [[(c["id"], c["name"], c["arguments"]) for c in call.tool_calls]
                                for call in truth.calls]
    assert {s["model_name"] for s in steps} == {"gpt-5.5"}


def test_each_result_is_on_its_call_as_the_model_was_shown_it(document: dict[str, Any]) -> None:
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    results = {r["source_call_id"]: corpus.message_text(r["content"])
               for s in _calls(document) for r in (s.get("observation") or {}).get("results") or ()}
    assert results == truth.tool_results
    assert len(results) == 4


def test_the_command_that_exited_non_zero_is_flagged(document: dict[str, Any]) -> None:
    flagged = {r["source_call_id"]: r["extra"]["error"]
               for s in _calls(document) for r in (s.get("observation") or {}).get("results") or ()
               if (r.get("extra") or {}).get("is_error")}
    assert flagged == {"fc_1_0": {"status": "error", "message": "Process exited with code 1", "type": "exit code"}}


def test_both_turns_are_one_session_each_prompt_a_user_step_before_its_calls(document: dict[str, Any]) -> None:
    assert document["session_id"] == corpus.load(CAPTURE).session_id
    sources = [(s["source"], corpus.message_text(s.get("message")) if s["source"] == "user" else None)
               for s in document["steps"]]
    assert sources == [("user", "greet.sh should print a greeting but something is off. Have a look and fix it."),
                       *[("agent", None)] * 4, ("user", "Run it to confirm."), *[("agent", None)] * 2]


def test_each_turns_tokens_are_on_its_last_call(document: dict[str, Any]) -> None:
    # The CLI records no call's usage with the session's traces: each turn's sums (session_task.turn) on its last call.
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                                truth.output_tokens)
    counted = [((s.get("metrics") or {}).get("prompt_tokens"), (s.get("metrics") or {}).get("completion_tokens"),
                ((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens")) for s in _calls(document)]
    turn_one, turn_two = truth.calls[:4], truth.calls[4:]
    assert counted == [(None, None, None)] * 3 + [
        (sum(c.input_tokens for c in turn_one), sum(c.output_tokens for c in turn_one), 12),
        (None, None, None),
        (sum(c.input_tokens for c in turn_two), sum(c.output_tokens for c in turn_two), 9)]


def test_no_answer_text_or_reasoning_is_recorded(document: dict[str, Any]) -> None:
    # Codex 0.171 exports neither (KNOWN_GAPS): no step makes one up, none shows a tool's output as an answer.
    steps = _calls(document)
    assert len(steps) == 6
    assert all(not corpus.message_text(s.get("message")) and not s.get("reasoning_content") for s in steps)
