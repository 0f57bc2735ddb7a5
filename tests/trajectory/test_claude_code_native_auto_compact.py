"""Claude Code compacting its context on its own in the middle of a turn (auto-compact), in the CLI's own export (the
`claude-code_native_auto-compact` capture: turn one's parallel calls, one raising; the retry; auto-compact before the
turn's next request; the turn's answer sent the summary; a second turn).

The summary request follows the rule `/compact`'s does (`trajectory/mappers/claude_code_compaction.py`, the shared
`trajectory/context_compaction.py`): a step of the model's summary marked `by: auto-compact`, placed among the turn's
calls, its prompt no question, the "This session is being continued…" message no step, the turn carrying on with no
user step. What auto-compact adds: the environment `<system-reminder>`s the summary replaced are re-sent appended to
the retry's tool result, which is shown as the model was shown it (`trajectory/mappers/claude_code_reminders.py`).
"""

from __future__ import annotations

import re
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import claude_code
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ContextCompaction, LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_logs, capture_spans, capture_truth, results_by_call

CAPTURE = "claude-code_native_auto-compact"
QUESTIONS = ["What is the weather like in Lisbon and Porto right now?",
             "Will it be warm enough for the beach in Lisbon tomorrow?"]
SUMMARY_SEQ = 2  # the fake LLM's log: the summary request, after turn one's first two calls, before its answer
RETRY_CALL = "toolu_1_0"  # the retried Porto lookup: the result the reminders were appended to
SUMMARY_PROMPT = "Your task is to create a detailed summary of the conversation so far"
RESENT_SUMMARY = "This session is being continued from a previous conversation"
REMINDER = "<system-reminder>"

Json = dict[str, Any]


def _document() -> Json:
    built = trajectory_from_spans(capture_spans(CAPTURE), capture_logs(CAPTURE))
    assert built.valid, [str(issue) for issue in built.issues]
    return built.document()


def _calls() -> list[LlmCall]:
    """The capture's calls, each mapped with the events Claude Code's relinking gives it, in order."""
    spans: list[Span] = sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)
    linked = claude_code.relink_logs(spans, capture_logs(CAPTURE))
    operations = [claude_code.map_span(SpanReader(span), [log for log in linked if log.span_id == span.span_id])
                  for span in spans if span.name == claude_code.LLM_REQUEST]
    return [operation for operation in operations if isinstance(operation, LlmCall)]


def _shown(seq: int, call_id: str) -> str:
    """What the fake LLM's log says request `seq` showed the model for a tool call: its blocks one a line."""
    for message in corpus.load(CAPTURE).llm_log[seq]["request"]["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else ():
            if block.get("type") == "tool_result" and block.get("tool_use_id") == call_id:
                return "\n".join(part["text"] for part in block["content"])
    raise AssertionError(f"request {seq} shows no result for {call_id}")


def test_the_auto_compact_summary_is_marked_among_the_turns_calls() -> None:
    calls = _calls()
    assert len(calls) == 6
    marked = [(index, call.compaction) for index, call in enumerate(calls) if call.compaction is not None]
    (block,) = re.findall(r"<summary>(.*?)</summary>", capture_truth(CAPTURE).calls[SUMMARY_SEQ].text, re.DOTALL)
    sent = corpus.load(CAPTURE).llm_log[SUMMARY_SEQ]["request"]["messages"]
    assert marked == [(SUMMARY_SEQ, ContextCompaction("auto-compact", summarized_messages=len(sent),
                                                      resent_summary=block.strip()))]
    # The turn's next request is sent the summary, then the retry kept as it was: the turn carries on.
    after = corpus.load(CAPTURE).llm_log[SUMMARY_SEQ + 1]["request"]["messages"]
    assert RESENT_SUMMARY in after[0]["content"][-1]["text"] and block.strip() in after[0]["content"][-1]["text"]
    assert [b.get("id") for b in after[1]["content"] if b["type"] == "tool_use"] == [RETRY_CALL]


def test_each_question_once_the_turn_carrying_on_after_the_compaction_with_no_user_step() -> None:
    steps = _document()["steps"]
    assert not any(step.get("is_copied_context") for step in steps)
    users = [corpus.message_text(step["message"]) for step in steps if step["source"] == "user"]
    assert len(users) == len(QUESTIONS) and all(text.endswith(q) for text, q in zip(users, QUESTIONS, strict=True))
    agent = [step for step in steps if step["source"] == "agent"]
    assert [corpus.message_text(step["message"]) for step in agent] == [
        call.text for call in capture_truth(CAPTURE).calls]
    assert all(step["llm_call_count"] == 1 for step in agent)
    order = [("compaction" if "context_compaction" in step.get("extra", {}) else step["source"]) for step in steps]
    assert order == ["system", "system", "user", "agent", "agent", "compaction", "agent", "user", "agent", "agent"]
    (compaction,) = [step["extra"]["context_compaction"] for step in steps
                     if "context_compaction" in step.get("extra", {})]
    assert compaction == {"kind": "summary", "by": "auto-compact", "summarized_messages": 3}
    assert not any(SUMMARY_PROMPT in corpus.message_text(step["message"])
                   or RESENT_SUMMARY in corpus.message_text(step["message"]) for step in steps)


def test_a_result_claude_code_appended_its_reminders_to_is_shown_as_the_model_saw_it() -> None:
    """The summary replaced the message holding the environment reminders; the next request re-sent them in the retry's
    result. The result is what the model was shown, as Claude Code's reminders before a question are in its step."""
    steps = [step for step in _document()["steps"] if step.get("tool_calls")]
    retried = results_by_call(steps[1])[RETRY_CALL]
    shown = _shown(SUMMARY_SEQ + 1, RETRY_CALL)
    assert shown.startswith("cloudy, 18°C") and REMINDER in shown
    assert retried["content"] == shown and retried["extra"]["content_from"] == "input history"
    # Results shown as the tools returned them stay the tools' own, the raising one flagged.
    first = results_by_call(steps[0])
    assert [(c["arguments"], first[c["tool_call_id"]]["content"]) for c in steps[0]["tool_calls"]] == [
        ({"city": "Lisbon"}, "sunny, 24°C"), ({"city": "Porto"}, "weather service timed out for Porto")]
    assert first["toolu_0_1"]["extra"]["is_error"] is True
    assert not any("content_from" in result["extra"] for result in first.values())
    assert [r["content"] for r in results_by_call(steps[2]).values()] == ["Lisbon in 1 day(s): sunny, high 27°C"]


def test_the_trajectory_is_the_conversation_that_happened() -> None:
    """The corpus's checks, offline: every call's step, each result as the model was shown it, each question."""
    document, log = _document(), corpus.load(CAPTURE).llm_log
    assert corpus.compare(document, corpus.GroundTruth.of(log), call_ids=True) == []
    assert questions.missing_questions(document, log) == []
