"""A LangChain `create_agent` whose older tool results LangChain v1's `ContextEditingMiddleware` clears from what the
model is sent (the `langgraph_openinference_context-editing` capture: `ClearToolUsesEdit(trigger=230, keep=2,
placeholder="[cleared]")`, three turns of one thread, seven calls).

The middleware sends a call "[cleared]" in place of every tool result but the two latest once the thread passes the
trigger, and every later call again; the thread keeps the results. The trajectory keeps each result once, on its call,
as the tool returned it, and the first call sent a result cleared lists it (`extra.context_edit`,
`trajectory/mappers/langchain_context_editing.py`).
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.trajectory.build import map_one_span
from evalkit.trajectory.mappers import langchain_context_editing
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "langgraph_openinference_context-editing"
SESSION = "lg-oi-context-editing-1"
PLACEHOLDER = "[cleared]"  # what record.py's ClearToolUsesEdit sends in place of a result
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?",
             "Is that hotel close to the fish market, and is anything on at Grieghallen on Friday?"]

Json = dict[str, Any]


def _first_sent_cleared() -> dict[int, list[str]]:
    """The ground truth of the clearing: by the log's call, the tool results it was the first sent as the placeholder
    (the fake LLM's requests are what the model was sent)."""
    seen: set[str] = set()
    first: dict[int, list[str]] = {}
    for entry in corpus.load(CAPTURE).llm_log:
        cleared = [m["tool_call_id"] for m in entry["request"]["messages"]
                   if m["role"] == "tool" and m["content"] == PLACEHOLDER and m["tool_call_id"] not in seen]
        seen.update(cleared)
        if cleared:
            first[entry["seq"]] = cleared
    return first


def _agent_steps() -> list[Json]:
    return [step for step in capture_document(CAPTURE, SESSION)["steps"] if step["source"] == "agent"]


def test_the_first_call_sent_each_result_cleared_lists_it() -> None:
    first = _first_sent_cleared()
    # Turn two's first call the failed get_weather's, its second find_hotel's, turn three's answer two more.
    assert first == {3: ["call_0_0"], 4: ["call_0_1"], 6: ["call_1_0", "call_3_0"]}
    names = {call["id"]: call["name"] for truth in capture_truth(CAPTURE).calls for call in truth.tool_calls}
    steps = _agent_steps()
    assert len(steps) == len(corpus.load(CAPTURE).llm_log)  # one step a call, in the log's order
    edits = {seq: step["extra"]["context_edit"] for seq, step in enumerate(steps) if "context_edit" in step["extra"]}
    sent_cleared = 0
    expected = {}
    for seq, cleared in first.items():
        sent_cleared += len(cleared)
        expected[seq] = {"by": "ContextEditingMiddleware", "strategy": "clear_tool_uses",
                         "cleared_tool_results": [{"tool_call_id": call_id, "function_name": names[call_id],
                                                   "placeholder": PLACEHOLDER} for call_id in cleared],
                         "results_sent_cleared": sent_cleared}
    assert edits == expected


def test_the_mapper_marks_only_the_calls_first_sent_a_result_cleared() -> None:
    calls = sorted((op for op in map(map_one_span, capture_spans(CAPTURE)) if isinstance(op, LlmCall)),
                   key=lambda call: call.span.start_time_unix_nano)
    langchain_context_editing.complete_calls(capture_spans(CAPTURE), calls)
    marked = {index: [r["tool_call_id"] for r in call.extra["context_edit"]["cleared_tool_results"]]
              for index, call in enumerate(calls) if "context_edit" in call.extra}
    assert marked == _first_sent_cleared()


def test_each_result_once_on_its_call_as_the_tool_returned_it() -> None:
    """The placeholder later calls are sent is no result, no copied step, no error; every question once."""
    document = capture_document(CAPTURE, SESSION)
    steps = document["steps"]
    assert not any(step.get("is_copied_context") for step in steps)
    assert [step["message"] for step in steps if step["source"] == "user"] == QUESTIONS
    shown = capture_truth(CAPTURE).tool_results  # what each call's result was when the model first saw it
    results = [(call_id, result) for step in steps for call_id, result in results_by_call(step).items()]
    assert sorted(call_id for call_id, _ in results) == sorted(shown)
    assert all(result["content"] == shown[call_id] != PLACEHOLDER for call_id, result in results)
    # Only the tool that raised is flagged; its cleared copy re-sent (still `status: "error"`) flags nothing more.
    assert [call_id for call_id, result in results if (result.get("extra") or {}).get("is_error")] == ["call_0_0"]
    assert not any(PLACEHOLDER in str(step.get("message")) for step in steps)
