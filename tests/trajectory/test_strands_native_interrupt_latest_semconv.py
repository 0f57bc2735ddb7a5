"""Strands Agents' interrupts under its latest GenAI conventions (the `strands_native_interrupt_latest-semconv`
capture: `strands_native_interrupt`'s run with `OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`).

Its messages are GenAI messages, where Strands writes a tool result as a `tool_call_response` part whose `response` is
the toolResult's Bedrock content blocks (`[{"text": …}]`). The denied `rent_car` runs no tool span: its result is only
in the next call's input, and must read as the text the model was sent (`trajectory/mappers/strands.py`
`_result_blocks`), as under the default conventions.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, results_by_call

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "strands_native_interrupt_latest-semconv"
DEFAULT_CONVENTIONS = "strands_native_interrupt"
SESSION = "strands-interrupt-trip-1"
CAR = {"city": "Oslo", "days": 2}


def _shown(seq: int) -> dict[str, str]:
    """What the model was sent as each call's result in the log's request `seq`, by call id."""
    return {str(m["tool_call_id"]): str(m["content"]) for m in corpus.load(CAPTURE).llm_log[seq]["request"]["messages"]
            if m.get("role") == "tool"}


def test_a_result_in_a_calls_input_is_the_text_the_model_was_sent() -> None:
    chats = [call for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.operation.name") == "chat"
             if isinstance(call := strands.map_span(SpanReader(span), ()), LlmCall)]
    assert len(chats) == 5
    for seq, call in enumerate(chats):
        results = {part.call_id: part.text for message in call.input_messages for part in message.tool_results}
        assert results == _shown(seq)  # every result, not only the denied call's
    assert "declined rent_car" in _shown(2)["call_1_1"]


def test_the_denied_call_has_the_refusal_the_model_was_sent() -> None:
    steps = list(capture_document(CAPTURE, SESSION)["steps"])
    second = [step for step in steps if step.get("llm_call_count") == 1][1]
    refused = results_by_call(second)["call_1_1"]
    assert refused["content"] == _shown(2)["call_1_1"]
    assert refused["extra"]["from"] == "input history"  # no tool span ran it
    (denied,) = [step for step in steps if str(step.get("message", "")).startswith("Denied ")]
    assert denied["message"] == f"Denied rent_car {json.dumps(CAR)}: {_shown(2)['call_1_1']}"


def _as_read(name: str) -> list[dict[str, Any]]:
    """A capture's trajectory as a person reads it: each step's source, text, calls, results, what it asked."""
    steps = []
    for step in capture_document(name, SESSION)["steps"]:
        extra = step.get("extra") or {}
        steps.append({
            "source": step["source"], "message": step.get("message"), "llm_calls": step.get("llm_call_count"),
            "from": extra.get("from"), "tokens": step.get("metrics", {}).get("prompt_tokens"),
            "calls": [(call["tool_call_id"], call["function_name"], call.get("arguments"))
                      for call in step.get("tool_calls") or ()],
            "results": [(r.get("source_call_id"), r["content"], bool((r.get("extra") or {}).get("is_error")))
                        for r in (step.get("observation") or {}).get("results", ())],
            "asked": [(r["name"], r.get("tool_call_id"), r.get("tool"), r["reason"])
                      for r in extra.get("interrupt") or ()],
        })
    return steps


def test_the_trajectory_is_the_default_conventions_one() -> None:
    # Interrupts, decisions, the asking tool's one execution, results and tokens: the conventions change none of it.
    assert _as_read(CAPTURE) == _as_read(DEFAULT_CONVENTIONS)
