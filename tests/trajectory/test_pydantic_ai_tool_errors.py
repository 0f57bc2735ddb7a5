"""pydantic-ai's errored tool returns as its OpenAI adapters sent them, `{"error": …}`, rebuilt from the tool spans'
outcomes (`trajectory/mappers/pydantic_ai_tool_errors.py`), on the captures that record them.

A tool raising `ModelRetry` is recorded unwrapped on its tool span (`gen_ai.tool.call.result`, beside
`pydantic_ai.tool.retry.cause`) and in the next call's input; the model on OpenAI was sent `{"error": <message>}`
(`model_response_str()`, wrapped for `ERROR_OUTCOMES`): pydantic-ai_openai_history-retry-parallel (Chat Completions,
pydantic-ai 2.68), pydantic-ai_openinference (the same under OpenInference's span processor, 2.78),
pydantic-ai_openai_deferred-approval (the Responses API, 2.78, beside a denied call, which goes as it is). On Anthropic
the same retry goes unwrapped with `is_error` (pydantic-ai_anthropic_thinking). No capture raises `ToolFailed` or
fails an argument's validation: those rules are checked on a capture's retry span rewritten into what pydantic-ai 2.78's
instrumentation records for them (capabilities/instrumentation.py `_run_tool_span`, `on_tool_validate_error`).
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.span import Span, SpanEvent
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

Json = dict[str, Any]
ATLANTIS = "No weather station in Atlantis; ask about another city."
RETRIED_ON_OPENAI = {  # capture -> (the call that raised ModelRetry, what it recorded)
    "pydantic-ai_openai_history-retry-parallel": ("call_0_1", ATLANTIS),
    "pydantic-ai_openinference": ("call_0_1", ATLANTIS),
    "pydantic-ai_openai_deferred-approval": ("call_forecast_friday", "No forecast for 'Friday': give the date as "
                                                                      "YYYY-MM-DD."),
}
DEFERRED = "pydantic-ai_openai_deferred-approval"
FORECAST = "call_forecast_friday"


def _result(document: Json, call_id: str) -> Json:
    (result,) = [found for step in corpus.llm_steps(document) for key, found in results_by_call(step).items()
                 if key == call_id]
    return result


def _document(name: str) -> Json:
    return capture_document(name, corpus.load(name).session_id)


@pytest.mark.parametrize("name", sorted(RETRIED_ON_OPENAI))
def test_a_retried_call_shows_what_the_openai_adapter_sent(name: str) -> None:
    call_id, message = RETRIED_ON_OPENAI[name]
    # The premise: the tool span records the retry and the message unwrapped, the model was sent it wrapped.
    (tool_span,) = [s for s in capture_spans(name) if s.attributes.get("gen_ai.tool.call.id") == call_id]
    assert tool_span.attributes["pydantic_ai.tool.retry.cause"] == "model_retry"
    assert tool_span.attributes["gen_ai.tool.call.result"] == message
    shown = capture_truth(name).tool_results[call_id]
    assert shown == json.dumps({"error": message}, separators=(",", ":"))

    document = _document(name)
    result = _result(document, call_id)
    assert (result["content"], result["extra"]["is_error"]) == (shown, True)
    assert corpus.compare(document, capture_truth(name)) == []


def test_only_the_errored_return_of_a_parallel_pair_is_wrapped() -> None:
    document = _document("pydantic-ai_openai_history-retry-parallel")
    assert _result(document, "call_0_0")["content"] == "sunny, 21°C"


def test_a_denied_call_goes_as_it_is() -> None:
    """A denial is an ordinary result (not in `ERROR_OUTCOMES`): the model was sent the person's message as is."""
    shown = capture_truth(DEFERRED).tool_results["call_book_sol"]
    assert shown == "Ana wants to compare prices first: do not book Hotel Sol now."
    assert _result(_document(DEFERRED), "call_book_sol")["content"] == shown


def test_a_retry_on_anthropic_goes_unwrapped_with_is_error() -> None:
    name = "pydantic-ai_anthropic_thinking"
    (tool_span,) = [s for s in capture_spans(name) if s.attributes.get("pydantic_ai.tool.retry.cause")]
    call_id = tool_span.attributes["gen_ai.tool.call.id"]
    (block,) = {json.dumps(b) for entry in corpus.load(name).llm_log for m in entry["request"]["messages"]
                if isinstance(m["content"], list) for b in m["content"]
                if b.get("type") == "tool_result" and b["tool_use_id"] == call_id}
    assert json.loads(block)["is_error"] is True
    document = capture_document(name, "pai-anthropic-thinking-1")
    assert _result(document, call_id)["content"] == tool_span.attributes["gen_ai.tool.call.result"] == (
        capture_truth(name).tool_results[call_id])


def _rewritten(forecast: Span, inputs_result: Any = None) -> list[Span]:
    """The deferred capture's spans with its get_forecast retry span replaced by `forecast`, and, given
    `inputs_result`, the content the later calls' inputs record for it."""
    spans = []
    for span in capture_spans(DEFERRED):
        if span.attributes.get("gen_ai.tool.call.id") == FORECAST:
            span = forecast
        elif inputs_result is not None and FORECAST in str(span.attributes.get("gen_ai.input.messages", "")):
            messages = json.loads(span.attributes["gen_ai.input.messages"])
            for message in messages:
                for part in message["parts"]:
                    if part.get("id") == FORECAST and part["type"] == "tool_call_response":
                        part["result"] = inputs_result
            span = replace(span, attributes={**span.attributes, "gen_ai.input.messages": json.dumps(messages)})
        spans.append(span)
    return spans


def _forecast_span() -> Span:
    (span,) = [s for s in capture_spans(DEFERRED) if s.attributes.get("gen_ai.tool.call.id") == FORECAST]
    return span


def _forecast_result(spans: list[Span]) -> str:
    result = trajectory_from_spans(spans, session_id=corpus.load(DEFERRED).session_id)
    assert result.valid, [str(issue) for issue in result.issues]
    return str(_result(result.document(), FORECAST)["content"])


def _as_failed(span: Span, recorded: str) -> Span:
    """What `_run_tool_span` records for a `ToolFailed`: the return unwrapped, the `ToolFailedError`, no retry."""
    attributes = {k: v for k, v in span.attributes.items() if not k.startswith("pydantic_ai.tool.retry.")}
    (raised,) = span.events
    event = SpanEvent(raised.name, raised.time_unix_nano, {
        **raised.attributes, "exception.type": "pydantic_ai.exceptions.ToolFailedError", "exception.message": recorded})
    return replace(span, attributes={**attributes, "gen_ai.tool.call.result": recorded}, events=(event,))


def test_a_failed_call_shows_its_text_wrapped() -> None:
    """`ToolFailed` (outcome 'failed'), on a span recording no retry: wrapped as a retry is."""
    message = "Madrid's forecast service is closed for good."
    assert _forecast_result(_rewritten(_as_failed(_forecast_span(), message), message)) == (
        '{"error":"Madrid\'s forecast service is closed for good."}')


def test_a_failed_calls_structured_content_is_wrapped_as_a_string() -> None:
    """A failed return's structured content keeps the string it has always been sent as (`_error_value`)."""
    content = {"closed": ["Madrid"]}
    recorded = '{"closed":["Madrid"]}'
    assert _forecast_result(_rewritten(_as_failed(_forecast_span(), recorded), content)) == (
        '{"error":"{\\"closed\\":[\\"Madrid\\"]}"}')


def test_a_rejected_arguments_validation_errors_go_in_as_json() -> None:
    """A retry whose content is structured (an argument's validation errors, cause 'validation_error') is put in the
    wrapper as the JSON array it is, not as a string of it (`_error_value`)."""
    errors = [{"type": "missing", "loc": ["date"], "msg": "Field required", "input": {"city": "Madrid"}}]
    recorded = json.dumps(errors, separators=(",", ":"))  # pydantic's compact JSON of the content
    span = _forecast_span()
    validation = replace(span, attributes={**span.attributes, "pydantic_ai.tool.retry.cause": "validation_error",
                                           "gen_ai.tool.call.result": recorded})
    assert _forecast_result(_rewritten(validation, errors)) == '{"error":' + recorded + "}"
