"""Mastra's Memory (the `mastra_native_memory` capture): a two-message window, working memory, semantic recall.

Mastra adds its working memory to every turn's prompt as a second system message (its instructions for the
`updateWorkingMemory` tool, the template, the note as stored), rewritten at each turn after an update
(`trajectory/mappers/mastra_working_memory.py`). The fake LLM's log is the ground truth: what each call was sent.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from typing import Any

import pytest
from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import mastra_working_memory
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "mastra_native_memory"
SESSION = "mastra-ada-trip-thread-1"
QUESTIONS = ["Hi, I'm Ada from Lyon and I'm off to Paris next week. What's the weather and the local time in Paris?",
             "Change of plan: I'm going to Nice instead. What's the weather there?",
             "Remind me: was Paris sunny?"]
_NOTE = re.compile(r"<working_memory_data>\n(.*)\n</working_memory_data>", re.S)


def _document(spans: list[Span] | None = None) -> dict[str, Any]:
    result = trajectory_from_spans(capture_spans(CAPTURE) if spans is None else spans, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _sent_memory() -> list[str]:
    """The working-memory system message each call was sent, from the fake LLM's log."""
    sent = []
    for entry in corpus.load(CAPTURE).llm_log:
        systems = [item["content"] for item in entry["request"]["input"] if item.get("role") == "system"]
        sent.append(next(text for text in systems if text.startswith(mastra_working_memory.MARK)))
    return sent


def _first_steps_of_turns(document: dict[str, Any]) -> list[dict[str, Any]]:
    steps = document["steps"]
    return [steps[index + 1] for index, step in enumerate(steps) if step["source"] == "user"]


def test_the_working_memory_message_is_one_system_step_before_the_first_question() -> None:
    """Each turn's prompt held Mastra's working-memory message (its note changing at turns 2 and 3): one system step,
    the message the first turn was sent, after the agent's instructions; no system step again."""
    sent = _sent_memory()
    assert len(set(sent)) == 3  # one message a turn: the note as the last update left it
    document = _document()
    systems = [step for step in document["steps"] if step["source"] == "system"]
    assert [step["message"] for step in systems] == [
        "You are a terse travel assistant. Use your tools for weather and local time.", sent[0]]
    assert [step["source"] for step in document["steps"][:3]] == ["system", "system", "user"]


def test_a_turn_sent_another_note_has_it_on_its_first_step() -> None:
    """Turns 2 and 3 were sent the note the last `updateWorkingMemory` call stored: on their first steps, as sent."""
    sent_notes = [match.group(1) for match in map(_NOTE.search, _sent_memory()) if match]
    document = _document()
    first_steps = _first_steps_of_turns(document)
    assert [step.get("extra", {}).get(mastra_working_memory.EXTRA_KEY) for step in first_steps] == [
        None, sent_notes[3], sent_notes[5]]
    # What the turns' first calls were sent is what the updates before them stored.
    updates = [call["arguments"]["memory"] for step in document["steps"] for call in step.get("tool_calls") or ()
               if call["function_name"] == "updateWorkingMemory"]
    assert [sent_notes[3], sent_notes[5]] == updates
    # Only where the note changed: no other step carries one.
    assert sum(mastra_working_memory.EXTRA_KEY in step.get("extra", {}) for step in document["steps"]) == 2


def test_other_instructions_are_a_system_step_again() -> None:
    """A working-memory message whose instructions differ (a read-only memory's), not only its note, is a system step
    of its own."""
    spans = capture_spans(CAPTURE)
    read_only = "WORKING_MEMORY_SYSTEM_INSTRUCTION (READ-ONLY):\n<working_memory_data>\nAda\n</working_memory_data>"
    third_turn_step = max((s for s in spans if s.attributes.get("mastra.span.type") == "model_step"),
                          key=lambda s: s.start_time_unix_nano)
    preview = str(third_turn_step.attributes["mastra.model_step.input"])
    changed = preview.replace(_json_string(_sent_memory()[5]), _json_string(read_only))
    assert changed != preview
    altered = [replace(s, attributes={**s.attributes, "mastra.model_step.input": changed}) if s is third_turn_step
               else s for s in spans]
    document = _document(altered)
    assert [step["message"] for step in document["steps"] if step["source"] == "system"][-1] == read_only
    assert mastra_working_memory.EXTRA_KEY not in _first_steps_of_turns(document)[2].get("extra", {})


def test_the_conversation_whatever_window_the_model_was_sent() -> None:
    """Each question and answer once, in order: turn 3 was sent turn 1's answer recalled (behind a placeholder user
    message "." Mastra adds) and not turn 1's question, neither a step; the memory updates are the tool calls they
    were; the tokens and cost the calls'."""
    document = _document()
    assert [step["message"] for step in document["steps"] if step["source"] == "user"] == QUESTIONS
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    agent_steps = [step for step in document["steps"] if step["source"] == "agent"]
    assert [step["message"] for step in agent_steps] == [call.text for call in truth.calls]
    assert not any(step.get("extra", {}).get("is_copied_context") for step in document["steps"])
    updates = [(call, result) for step in agent_steps for call in step.get("tool_calls") or ()
               for result in step["observation"]["results"]
               if call["function_name"] == "updateWorkingMemory" and result["source_call_id"] == call["tool_call_id"]]
    assert [result["content"] for _, result in updates] == ['{"success":true}', '{"success":true}']
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens, truth.output_tokens)
    # gpt-4o-mini at $0.15 / $0.60 per million tokens.
    assert final["total_cost_usd"] == pytest.approx(truth.input_tokens * 0.15e-6 + truth.output_tokens * 0.6e-6)


def _json_string(text: str) -> str:
    """`text` as it is written inside the preview's JSON (without its quotes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1]
