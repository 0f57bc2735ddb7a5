"""The Anthropic SDK's tool loop whose older tool results Anthropic's API clears from what the model is shown (the
`anthropic-sdk_openinference_context-editing` capture: the beta `context_management` edit `clear_tool_uses_20250919`,
trigger 530 input tokens, keep 1 tool use; two turns of one session, five calls, turn two streamed).

The API clears the weather and the failed hotel search on turn two's first call and the hotel too on its second, and
says only how many (`context_management.applied_edits`); the client re-sends everything. The trajectory keeps each
result once, on its call, as the tool returned it, and the first call the API cleared a result for lists it
(`extra.context_edit`, `trajectory/mappers/anthropic_context_editing.py`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import anthropic_context_editing
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "anthropic-sdk_openinference_context-editing"
SESSION = "oi-anthropic-context-editing-1"
QUESTIONS = ["I'm going to Bergen for 3 nights from Thursday: what's the weather, and find me a hotel near Bryggen.",
             "Is anything on at Grieghallen on Friday evening?"]

Json = dict[str, Any]


def _edits_applied() -> dict[int, Json]:
    """The ground truth: by the log's call, the clearing the fake LLM answered it with (as the API would)."""
    return {entry["seq"]: edit for entry in corpus.load(CAPTURE).llm_log
            for edit in (entry["response"].get("context_management") or {}).get("applied_edits", ())}


def _first_cleared() -> dict[int, list[str]]:
    """By the log's call, the tool results it was the first the API cleared: the oldest `cleared_tool_uses` results of
    its request (keep 1, no tool excluded), less those cleared before."""
    edits = _edits_applied()
    seen: set[str] = set()
    first: dict[int, list[str]] = {}
    for entry in corpus.load(CAPTURE).llm_log:
        if entry["seq"] not in edits:
            continue
        results = [block["tool_use_id"] for message in entry["request"]["messages"]
                   if isinstance(message["content"], list)
                   for block in message["content"] if block.get("type") == "tool_result"]
        cleared = results[:edits[entry["seq"]]["cleared_tool_uses"]]
        first[entry["seq"]] = [call_id for call_id in cleared if call_id not in seen]
        seen.update(cleared)
    return first


def _agent_steps() -> list[Json]:
    return [step for step in capture_document(CAPTURE, SESSION)["steps"] if step["source"] == "agent"]


def _calls() -> list[LlmCall]:
    return sorted((op for op in map(map_one_span, capture_spans(CAPTURE)) if isinstance(op, LlmCall)),
                  key=lambda call: call.span.start_time_unix_nano)


def test_the_first_call_the_api_cleared_each_result_for_lists_it() -> None:
    first = _first_cleared()
    # Turn two's first call: the weather and the failed search; its second: the hotel found on the retry.
    assert first == {3: ["toolu_0_0", "toolu_0_1"], 4: ["toolu_1_0"]}
    edits = _edits_applied()
    names = {call["id"]: call["name"] for truth in capture_truth(CAPTURE).calls for call in truth.tool_calls}
    steps = _agent_steps()
    assert len(steps) == len(corpus.load(CAPTURE).llm_log)  # one step a call, in the log's order
    marked = {seq: step["extra"]["context_edit"] for seq, step in enumerate(steps) if "context_edit" in step["extra"]}
    assert marked == {
        seq: {"by": "Anthropic API", "strategy": "clear_tool_uses_20250919",
              "cleared_tool_results": [{"tool_call_id": call_id, "function_name": names[call_id]}
                                       for call_id in cleared],
              "results_sent_cleared": edits[seq]["cleared_tool_uses"],
              "cleared_input_tokens": edits[seq]["cleared_input_tokens"], "identified_by": "position"}
        for seq, cleared in first.items()}


def test_the_mapper_marks_only_the_calls_first_cleared_a_result_for() -> None:
    calls = _calls()
    anthropic_context_editing.complete_calls(capture_spans(CAPTURE), calls)
    marked = {index: [r["tool_call_id"] for r in call.extra["context_edit"]["cleared_tool_results"]]
              for index, call in enumerate(calls) if "context_edit" in call.extra}
    assert marked == _first_cleared()


def test_a_tool_the_edit_excludes_is_never_counted_cleared() -> None:
    """`exclude_tools` keeps a tool's results whole: the API's count is of the others, oldest first."""
    calls = _calls()
    first_edited = calls[3]
    parameters = json.loads(first_edited.span.attributes["llm.invocation_parameters"])
    parameters["context_management"]["edits"][0]["exclude_tools"] = ["get_weather"]
    first_edited.span = replace(first_edited.span, attributes={
        **first_edited.span.attributes, "llm.invocation_parameters": json.dumps(parameters)})
    anthropic_context_editing.complete_calls(capture_spans(CAPTURE), [first_edited])
    cleared = first_edited.extra["context_edit"]["cleared_tool_results"]
    assert [r["tool_call_id"] for r in cleared] == ["toolu_0_1", "toolu_1_0"]


def test_each_result_once_on_its_call_as_the_tool_returned_it() -> None:
    """The results re-sent to the calls the API cleared them for are no new results, no copied steps."""
    steps = capture_document(CAPTURE, SESSION)["steps"]
    assert not any(step.get("is_copied_context") for step in steps)
    assert [step["message"] for step in steps if step["source"] == "user"] == QUESTIONS
    shown = capture_truth(CAPTURE).tool_results
    results = [(call_id, result) for step in steps for call_id, result in results_by_call(step).items()]
    assert sorted(call_id for call_id, _ in results) == sorted(shown)
    assert all(result["content"] == shown[call_id] for call_id, result in results)
    assert [call_id for call_id, result in results if (result.get("extra") or {}).get("is_error")] == ["toolu_0_1"]
