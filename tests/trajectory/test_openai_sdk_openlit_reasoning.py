"""OpenLIT's OpenAI instrumentation on the Responses API with a reasoning model (the `openai-sdk_openlit_reasoning`
capture: o4-mini, `reasoning={"effort": "medium", "summary": "auto"}`, every output item re-sent as input).

What OpenLIT records of a Responses call is read as it is (`trajectory/mappers/openlit.py`): the effort asked, the
reasoning tokens within the output tokens, its placeholder for an output limit the request did not set dropped.
What it does not record (every reasoning summary, all but the last function call of a non-streamed answer, the
second turn, whose spans its own stream handling failed) is shown as missing, not made up (KNOWN_GAPS and
UNRECORDED_REASONING in the corpus test).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import openlit
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import STATUS_ERROR, Span
from tests.captures import corpus

CAPTURE = "openai-sdk_openlit_reasoning"
SESSION = "openlit-reasoning-trip-1"


def _call_spans() -> list[Span]:
    return sorted((span for span in capture_spans(CAPTURE) if span.scope_name == "openlit.instrumentation.openai"),
                  key=lambda span: span.start_time_unix_nano)


def _call(span: Span) -> LlmCall:
    operation = openlit.map_span(SpanReader(span), ())
    assert isinstance(operation, LlmCall)
    return operation


def _llm_steps(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in document["steps"] if s.get("llm_call_count") == 1]


def test_an_output_limit_the_request_did_not_set_is_no_request_parameter() -> None:
    """OpenLIT writes `gen_ai.request.max_tokens` -1 for a Responses call given no `max_output_tokens`."""
    recorded = [span for span in _call_spans() if span.status_code != STATUS_ERROR]
    assert len(recorded) == 3
    for span in recorded:
        assert span.attributes["gen_ai.request.max_tokens"] == -1
        request = _call(span).extra["request"]
        assert "max_tokens" not in request
        assert request["stream"] is False  # what the request did set is kept
    limited = replace(recorded[0], attributes={**recorded[0].attributes, "gen_ai.request.max_tokens": 256})
    assert _call(limited).extra["request"]["max_tokens"] == 256
    steps = _llm_steps(capture_document(CAPTURE, SESSION))
    assert [s["extra"]["request"].get("max_tokens", "none") for s in steps[:3]] == ["none"] * 3


def test_each_step_has_its_calls_effort_and_reasoning_tokens_and_no_reasoning_text() -> None:
    """Turn 1's steps: the effort asked, the model's reasoning tokens within its output tokens. No step shows
    reasoning text, since OpenLIT records none: not even the turn function's repr of the input list, which holds
    the re-sent reasoning items' summaries, is read as it."""
    document = capture_document(CAPTURE, SESSION)
    truth = capture_truth(CAPTURE).calls
    steps = _llm_steps(document)
    # Turn 2's two calls, whose spans OpenLIT failed with nothing recorded, are steps of no LLM call (below).
    assert (len(steps), len(truth)) == (3, 5)
    for step, call in zip(steps[:3], truth[:3], strict=True):
        metrics = step["metrics"]
        assert step["reasoning_effort"] == "medium"
        assert (metrics["prompt_tokens"], metrics["completion_tokens"]) == (call.input_tokens, call.output_tokens)
        assert metrics["extra"]["reasoning_tokens"] == call.reasoning_tokens < call.output_tokens
    assert all(call.reasoning for call in truth)
    assert not [s for s in document["steps"] if s.get("reasoning_content")]
    shown = repr(document["steps"])
    assert not [call.reasoning for call in truth if call.reasoning in shown]


def test_what_openlit_lost_is_missing_not_made_up() -> None:
    """Of call 0's two parallel calls only the last is recorded: its step asks for that one, answered by the raising
    conversion (flagged), and the weather lookup's `@openlit.trace` span, answering no recorded call, is no step.
    Turn 2's calls, whose spans OpenLIT's stream handling failed, are steps with nothing but that failure: read as
    every failed span recording nothing answered is (`failed_attempts.mark_unanswered`), no LLM call and no price of
    their own, though the model did answer them (the usage OpenLIT lost is missing from the totals, as its tokens)."""
    document = capture_document(CAPTURE, SESSION)
    steps = _llm_steps(document)
    failed = [s for s in document["steps"] if s.get("llm_call_count") == 0]
    assert len(steps) == 3 and len(failed) == 2
    first = steps[0]
    assert [call["function_name"] for call in first["tool_calls"]] == ["convert_currency"]
    (result,) = first["observation"]["results"]
    assert result["extra"]["is_error"] is True
    assert result["extra"]["error"]["message"] == "TimeoutError: exchange-rate service timed out"
    for step in failed:
        assert step["message"] == "" and not step.get("tool_calls") and "reasoning_effort" not in step
        assert "no attribute 'get'" in step["extra"]["error"]["message"]
        assert "metrics" not in step
    assert "unpriced_steps" not in (document["final_metrics"].get("extra") or {})
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "I'm in Tokyo with 200 EUR. What's the weather, and how much is that in yen?"]


def test_each_call_openlit_kept_is_named_by_its_call_id_not_its_items_id() -> None:
    """The Responses API gives a function call two ids: its item's own (`fc_…`) and the `call_id` (`call_…`) the
    loop's `function_call_output` names. OpenLIT's output message names the call it kept by the item id and restates
    the call_id as `gen_ai.tool.call.id`: the step's call is named by the call_id (`openlit._name_calls_by_call_id`),
    and its result is on it."""
    log = corpus.load(CAPTURE).llm_log
    kept = [entry["response"]["tool_calls"][-1] for entry in log[:2]]  # call 0's last (the conversion), call 1's
    spans = [span for span in _call_spans() if span.status_code != STATUS_ERROR][:2]
    for span, call in zip(spans, kept, strict=True):  # the premise: both ids on the span, each where it is
        (answer,) = json.loads(span.attributes["gen_ai.output.messages"])
        assert [part["id"] for part in answer["parts"]] == [call["item_id"]]
        assert span.attributes["gen_ai.tool.call.id"] == call["id"] != call["item_id"]
    steps = _llm_steps(capture_document(CAPTURE, SESSION))
    assert [[c["tool_call_id"] for c in step["tool_calls"]] for step in steps[:2]] == [[call["id"]] for call in kept]
    assert [[r["source_call_id"] for r in step["observation"]["results"]] for step in steps[:2]] == [
        [call["id"]] for call in kept]
    assert steps[1]["observation"]["results"][0]["content"] == "200 EUR = 32,480 JPY"
