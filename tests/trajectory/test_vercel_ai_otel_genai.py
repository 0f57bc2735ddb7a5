"""The Vercel AI SDK on OpenAI's Responses API with reasoning, in @ai-sdk/otel's GenAI-conventions integration.

The capture `vercel-ai_otel-genai`: AI SDK 7's generateText then streamText on `openai.responses('o4-mini')` with
`providerOptions.openai` reasoningEffort medium and reasoningSummary auto, traced by `registerTelemetry(new
OpenTelemetry({runtimeContext: true, usage: true}))`: `invoke_agent` / `step <n>` / `chat` / `execute_tool` spans in
the GenAI conventions, with the SDK's `ai.*` supplemental keys beside them
(`trajectory/mappers/vercel_ai_otel_genai.py`).
Read by the GenAI mapper alone, no step had its reasoning tokens (only `ai.usage.outputTokenDetails.reasoningTokens`
records them) and an object tool result was not the JSON the model was shown (decoded, then written with Python's
spacing).
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from tests.captures import corpus

CAPTURE = "vercel-ai_otel-genai"
SESSION = "vercel-otel-genai-reasoning-1"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _first_call_ids() -> list[str]:
    """The call_ids (`call_…`) of turn one's three parallel calls, in order: get_weather Paris, get_time Paris,
    get_weather Atlantis (each call's item has an id of its own too, `fc_…`, as the Responses API gives them)."""
    return [call["id"] for call in corpus.load(CAPTURE).llm_log[0]["response"]["tool_calls"]]


def _results(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every observation result of the session, by the tool call it answers."""
    return {result["source_call_id"]: result for step in document["steps"]
            for result in (step.get("observation") or {}).get("results") or ()}


def test_completion_tokens_count_the_reasoning_and_break_it_out() -> None:
    calls = capture_truth(CAPTURE).calls
    steps = corpus.llm_steps(_document())
    assert len(calls) == 5 and all(call.reasoning_tokens for call in calls)
    # The Responses API reported each call's reasoning tokens within its output tokens; the integration writes them as
    # the supplemental `ai.usage.outputTokenDetails.reasoningTokens` alone, and the step shows them beside its
    # completion tokens, not added again.
    shown = [(step["metrics"]["completion_tokens"], step["metrics"]["extra"].get("reasoning_tokens")) for step in steps]
    assert shown == [(call.output_tokens, call.reasoning_tokens) for call in calls]


def test_an_object_result_is_the_json_the_model_was_shown() -> None:
    truth = capture_truth(CAPTURE)
    results = _results(_document())
    weather, time, _atlantis = _first_call_ids()
    # get_time returned {city, time}: the span's `gen_ai.tool.call.result` is JSON.stringify of it, and so is the
    # function_call_output the provider sent.
    shown = truth.tool_results[time]
    assert json.loads(shown) == {"city": "Paris", "time": "14:05"}
    assert results[time]["content"] == shown
    # A string result is the string itself, not its JSON.
    assert results[weather]["content"] == truth.tool_results[weather] == "sunny, 21°C"


def test_each_step_reasons_as_its_own_call() -> None:
    calls = capture_truth(CAPTURE).calls
    document = _document()
    steps = corpus.llm_steps(document)
    assert all(call.reasoning for call in calls)
    assert len({call.reasoning for call in calls}) == len(calls)  # distinct, so a step cannot show another's
    assert [step.get("reasoning_content") for step in steps] == [call.reasoning for call in calls]
    for step in document["steps"]:
        # The reasoning is no message text and no step of its own, and its re-sending (the history's `reasoning`
        # parts) copies no step.
        assert not any(call.reasoning in corpus.message_text(step.get("message")) for call in calls)
        assert not step.get("is_copied_context")
    # Both turns, found by the runtime context's session id, one session: the second question a user step.
    assert [(step["source"], step.get("message") if step["source"] == "user" else None)
            for step in document["steps"]] == [
        ("system", None), ("user", "Weather and time in Paris, and the weather in Atlantis?"), ("agent", None),
        ("agent", None), ("agent", None), ("user", "And in Berlin?"), ("agent", None), ("agent", None)]


def test_every_key_is_read_by_this_emitter() -> None:
    document = _document()
    assert document["extra"]["unmapped_attributes"] == []
    emitters = {result["extra"]["emitter"] for result in _results(document).values()}
    emitters |= {step["extra"]["emitter"] for step in corpus.llm_steps(document)}
    assert emitters == {"vercel-ai-otel-genai"}


def test_the_failed_tools_wrapping_is_in_no_span() -> None:
    # The raising get_weather's result is flagged, its text the next call's input history. @ai-sdk/openai sent the
    # model {"error": <text>} (an `error-text` output wrapped); the integration writes a tool result's value alone,
    # whatever its type (`convertToolResultOutputToResponse`), so no span says it was wrapped, nor that it was an
    # error but the tool span's status (KNOWN_GAPS in the corpus test). The day a span records it, this fails.
    truth = capture_truth(CAPTURE)
    atlantis = _first_call_ids()[2]
    failed = _results(_document())[atlantis]
    assert failed["extra"]["is_error"] is True
    assert failed["content"] == "Error: unknown city: Atlantis"
    assert json.loads(truth.tool_results[atlantis]) == {"error": failed["content"]}
    for span in capture_spans(CAPTURE):
        assert not [key for key, value in span.attributes.items() if _names_an_error_key(value)], span.name


def _names_an_error_key(value: Any) -> bool:
    """Whether an attribute's text holds an `error` key, as JSON or as JSON within a JSON string."""
    return isinstance(value, str) and ('"error"' in value or '\\"error\\"' in value)


def test_the_reasoning_effort_is_in_no_span() -> None:
    # Every request asked for medium effort (providerOptions.openai.reasoningEffort); the integration records no
    # provider options, so no step can show it. The day a span records it, this fails until it is read.
    log = corpus.load(CAPTURE).llm_log
    assert {json.dumps(entry["request"]["reasoning"]) for entry in log} == {'{"effort": "medium", "summary": "auto"}'}
    for span in capture_spans(CAPTURE):
        assert not [key for key, value in span.attributes.items() if "effort" in key or value == "medium"]
    assert not any("reasoning_effort" in step for step in corpus.llm_steps(_document()))
