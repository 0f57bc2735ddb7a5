"""OpenInference's anthropic instrumentation on extended thinking, read from its capture
(`anthropic-sdk_openinference_thinking`): the Anthropic SDK's tool loop on claude-sonnet-4-6 with
`thinking={"type": "enabled", "budget_tokens": 2048}` and an effort (`output_config`: high in turn one, medium in
turn two), every answer a signed thinking block before its text and tool uses, re-sent in the next request; two
parallel tool uses, one raising once and called again; two turns of one session, the second streamed.

Before `anthropic_openinference.read_request`, no step had a `reasoning_effort`: the instrumentation records the
request's `output_config` in `llm.invocation_parameters`, and only OpenAI's `reasoning_effort` key was read there.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import anthropic_openinference, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "anthropic-sdk_openinference_thinking"
SESSION = "oi-anthropic-thinking-1"
Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _call_spans() -> list[Span]:
    spans = [span for span in capture_spans(CAPTURE) if span.scope_name == anthropic_openinference.SCOPE]
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def test_each_step_s_effort_is_the_one_its_request_set() -> None:
    steps = corpus.llm_steps(_document())
    requested = [entry["request"]["output_config"]["effort"] for entry in _log()]
    assert requested == ["high", "high", "high", "medium", "medium"]
    assert [step.get("reasoning_effort") for step in steps] == requested


def test_the_effort_is_output_config_s_and_a_thinking_budget_alone_is_none() -> None:
    """The budget says how many tokens the model may think, not how hard it works: without `output_config` the call
    has no effort, and the request keeps its `thinking` as recorded."""
    span = _call_spans()[0]
    as_recorded = openinference.map_span(SpanReader(span), ())
    assert isinstance(as_recorded, LlmCall) and as_recorded.reasoning_effort == "high"
    parameters = json.loads(span.attributes["llm.invocation_parameters"])
    assert parameters.pop("output_config") == {"effort": "high"}
    budget_only = replace(span, attributes={**span.attributes, "llm.invocation_parameters": json.dumps(parameters)})
    call = openinference.map_span(SpanReader(budget_only), ())
    assert isinstance(call, LlmCall)
    assert call.reasoning_effort is None
    assert call.extra["request"]["thinking"] == {"type": "enabled", "budget_tokens": 2048}


def test_each_step_s_reasoning_is_its_own_call_s_thinking_and_never_its_message() -> None:
    document = _document()
    log = _log()
    steps = corpus.llm_steps(document)
    assert len(steps) == len(log) == 5
    assert corpus.compare(document, corpus.GroundTruth.of(log)) == []
    thinking = [entry["response"]["reasoning"] for entry in log]
    assert len(set(thinking)) == 5
    assert [step.get("reasoning_content") for step in steps] == thinking
    for step in document["steps"]:
        assert not any(text in str(step.get("message")) for text in thinking)
        assert step["source"] != "agent" or step.get("llm_call_count") == 1  # no step of thinking alone
    # Each request re-sends the earlier answers' thinking blocks: no copied context, each question once.
    assert [(step["source"], bool(step.get("is_copied_context"))) for step in document["steps"]] == [
        ("system", False), ("user", False), ("agent", False), ("agent", False), ("agent", False),
        ("user", False), ("agent", False), ("agent", False)]
    # The failing booking is flagged on its call with the error the model was shown, and retried.
    results = [r for step in steps for r in (step.get("observation") or {}).get("results") or ()]
    (failed,) = [r for r in results if (r.get("extra") or {}).get("is_error")]
    assert failed["content"] == "TimeoutError: the booking service did not answer in time"
    assert steps[1]["observation"]["results"][0]["content"] == "Booked Hotel Nord in Oslo, 2 nights, ref OSL-42"


def test_the_thinking_tokens_are_part_of_the_output_tokens() -> None:
    steps = corpus.llm_steps(_document())
    usage = [entry["response"]["usage"] for entry in _log()]
    assert all(0 < u["reasoning_tokens"] < u["output_tokens"] for u in usage)
    assert [(s["metrics"]["completion_tokens"], s["metrics"]["extra"]["reasoning_tokens"]) for s in steps] == [
        (u["output_tokens"], u["reasoning_tokens"]) for u in usage]
