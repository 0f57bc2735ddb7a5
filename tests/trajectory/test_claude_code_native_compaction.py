"""Claude Code compacting its context with its `/compact` command, in the CLI's own export (the
`claude-code_native_compaction` capture: a turn of parallel tool calls, one raising and retried; `/compact`; a second
turn, sent the summary in place of the first).

Claude Code's summary request (query source `compact`) is a compaction of the session's context
(`trajectory/mappers/claude_code_compaction.py`), built by the rule every emitter's compaction shares
(`trajectory/context_compaction.py`): its step is the model's summary, marked, by /compact; its summary prompt, which
Claude Code appends to the tool result's message, is no question; the "This session is being continued…" message the
later requests start with, holding the summary's `<summary>` block reformatted, is no step; nothing earlier is lost.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import claude_code
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ContextCompaction, LlmCall
from evalkit.trajectory.span import LogRecord, Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_logs, capture_spans, capture_truth, results_by_call

CAPTURE = "claude-code_native_compaction"
QUESTIONS = ["What is the weather like in Lisbon and Porto right now?",
             "Will it be warm enough for the beach in Lisbon tomorrow?"]
SUMMARY_SEQ = 3  # the fake LLM's log: the summary request, after turn one's three calls
# Where Claude Code's summary prompt asks for the summary, and how its later requests re-send it.
SUMMARY_PROMPT = "Your task is to create a detailed summary of the conversation so far"
RESENT_SUMMARY = "This session is being continued from a previous conversation"

Json = dict[str, Any]


def _document() -> Json:
    built = trajectory_from_spans(capture_spans(CAPTURE), capture_logs(CAPTURE))
    assert built.valid, [str(issue) for issue in built.issues]
    return built.document()


def _calls(logs: list[LogRecord] | None = None) -> list[LlmCall]:
    """The capture's calls, each mapped with the events Claude Code's relinking gives it, in order."""
    spans: list[Span] = sorted(capture_spans(CAPTURE), key=lambda span: span.start_time_unix_nano)
    linked = claude_code.relink_logs(spans, capture_logs(CAPTURE) if logs is None else logs)
    operations = [claude_code.map_span(SpanReader(span), [log for log in linked if log.span_id == span.span_id])
                  for span in spans if span.name == claude_code.LLM_REQUEST]
    return [operation for operation in operations if isinstance(operation, LlmCall)]


def _summary_answer() -> str:
    return capture_truth(CAPTURE).calls[SUMMARY_SEQ].text


def test_the_summary_request_is_marked_a_compaction_by_compact_of_what_it_was_sent() -> None:
    calls = _calls()
    assert len(calls) == 6
    marked = [(index, call.compaction) for index, call in enumerate(calls) if call.compaction is not None]
    # What later calls are sent of it: the content of the answer's <summary> block, not the <analysis> before it.
    (block,) = re.findall(r"<summary>(.*?)</summary>", _summary_answer(), re.DOTALL)
    sent = corpus.load(CAPTURE).llm_log[SUMMARY_SEQ]["request"]["messages"]
    assert marked == [(SUMMARY_SEQ, ContextCompaction("/compact", summarized_messages=len(sent),
                                                      resent_summary=block.strip()))]
    later = corpus.load(CAPTURE).llm_log[SUMMARY_SEQ + 1]["request"]["messages"][0]["content"]
    assert RESENT_SUMMARY in later and block.strip() in later and "<analysis>" not in later
    # Its summary prompt a message of its own after the tool result's message it was appended to, asked last.
    summary = calls[SUMMARY_SEQ]
    assert SUMMARY_PROMPT in summary.input_messages[-1].text
    assert [p.kind for p in summary.input_messages[-1].parts] == ["text"]
    assert [(p.kind, p.call_id) for p in summary.input_messages[-2].parts] == [("tool_result", "toolu_1_0")]


def test_auto_compact_is_named_by_its_trigger() -> None:
    """Claude Code's `compaction` event names its trigger (`manual` for /compact, `auto` for auto-compact, as its
    PreCompact hook's input does): the capture's event as an auto-compact would have sent it."""
    logs = [replace(log, attributes={**log.attributes, "trigger": "auto"}) if log.event_name == "compaction" else log
            for log in capture_logs(CAPTURE)]
    (compaction,) = [call.compaction for call in _calls(logs) if call.compaction is not None]
    assert compaction.by == "auto-compact"


def test_each_question_and_answer_once_in_order_the_compaction_a_step_of_its_own() -> None:
    steps = _document()["steps"]
    assert not any(step.get("is_copied_context") for step in steps)
    # Claude Code sends each question after its `<system-reminder>`s (the second after /compact's record): that text.
    users = [corpus.message_text(step["message"]) for step in steps if step["source"] == "user"]
    assert len(users) == len(QUESTIONS) and all(text.endswith(q) for text, q in zip(users, QUESTIONS, strict=True))
    agent = [step for step in steps if step["source"] == "agent"]
    assert [corpus.message_text(step["message"]) for step in agent] == [
        call.text for call in capture_truth(CAPTURE).calls]
    assert all(step["llm_call_count"] == 1 for step in agent)
    compactions = [(corpus.message_text(step["message"]), step["extra"]["context_compaction"])
                   for step in agent if "context_compaction" in step.get("extra", {})]
    assert compactions == [(_summary_answer(), {"kind": "summary", "by": "/compact", "summarized_messages": 5})]
    order = [("compaction" if "context_compaction" in step.get("extra", {}) else step["source"]) for step in steps]
    assert order == ["system", "system", "user", "agent", "agent", "agent", "compaction", "user", "agent", "agent"]


def test_the_summary_prompt_is_no_question() -> None:
    assert not any(SUMMARY_PROMPT in corpus.message_text(step["message"]) for step in _document()["steps"])


def test_the_summary_sent_again_is_no_step() -> None:
    assert not any(RESENT_SUMMARY in corpus.message_text(step["message"]) for step in _document()["steps"])


def test_nothing_the_summary_replaced_is_lost() -> None:
    """Turn one's parallel calls, the raising one flagged with the message the model was shown, and its retry, though
    the model was later sent a summary of them."""
    calls = [step for step in _document()["steps"] if step.get("tool_calls")]
    first = results_by_call(calls[0])
    assert [(c["function_name"], c["arguments"], first[c["tool_call_id"]]["content"]) for c in calls[0]["tool_calls"]] \
        == [("mcp__weather__get_weather", {"city": "Lisbon"}, "sunny, 24°C"),
            ("mcp__weather__get_weather", {"city": "Porto"}, "weather service timed out for Porto")]
    assert first["toolu_0_1"]["extra"]["is_error"] is True
    assert [r["content"] for r in results_by_call(calls[1]).values()] == ["cloudy, 18°C"]
    assert [r["content"] for r in results_by_call(calls[2]).values()] == ["Lisbon in 1 day(s): sunny, high 27°C"]
