"""The Vercel AI SDK traced into Langfuse, AI SDK 7's `generateText` then `streamText` (Responses API).

The capture `vercel-ai_langfuse`: `registerTelemetry(new LangfuseVercelAiSdkIntegration())` (@langfuse/vercel-ai-sdk,
which delegates to @ai-sdk/otel's GenAI-conventions `OpenTelemetry`: `invoke_agent` / `step <n>` / `chat` /
`execute_tool` spans, without the `ai.*` supplemental keys) and @langfuse/otel's `LangfuseSpanProcessor` (OTLP/JSON to
`/api/public/otel/v1/traces`), each turn in @langfuse/tracing's `propagateAttributes({sessionId, userId, ...})`: every
span carries `session.id`, `user.id` and `langfuse.trace.*`, the runtime context `langfuse.observation.metadata.*`.
Before, the chat, step and run spans (no `ai.*` key, no `gen_ai.execute_tool.duration`) were the Langfuse mapper's,
which read them as plain GenAI spans: the steps were Langfuse's, and the SDK's timing and run restatements unmapped.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import vercel_ai_otel_genai
from tests.captures import corpus

CAPTURE = "vercel-ai_langfuse"
SESSION = "vercel-langfuse-weather-1"
QUESTIONS = ["Weather and time in Paris, and the weather in Atlantis?", "And in Berlin?"]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _results(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every observation result of the session, by the tool call it answers."""
    return {result["source_call_id"]: result for step in document["steps"]
            for result in (step.get("observation") or {}).get("results") or ()}


def test_the_export_is_otlp_json_and_its_spans_read() -> None:
    # Langfuse's JS processor exports with @opentelemetry/exporter-trace-otlp-http: OTLP/JSON, hex ids.
    exports = corpus.load(CAPTURE).exports
    assert [(e.signal, e.content_type) for e in exports] == [("traces", "application/json")]
    spans = capture_spans(CAPTURE)
    assert sorted(span.name for span in spans) == sorted(
        ["invoke_agent gpt-4o"] * 2 + ["step 1"] * 2 + ["step 2"] * 2 + ["chat gpt-4o"] * 4
        + ["execute_tool get_weather"] * 3 + ["execute_tool get_time"])
    assert {len(span.trace_id) for span in spans} == {32}


def test_one_step_per_model_call_as_the_fake_llm_answered() -> None:
    truth = capture_truth(CAPTURE)
    document = _document()
    steps = corpus.llm_steps(document)
    assert len(truth.calls) == len(steps) == 4
    for step, call in zip(steps, truth.calls, strict=True):
        assert corpus.message_text(step.get("message")) == call.text
        assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()] == [
            (c["id"], c["name"], c["arguments"]) for c in call.tool_calls]
        # Each result on the step of the call that asked for it.
        assert set(_results({"steps": [step]})) == {c["id"] for c in call.tool_calls}
        metrics = step["metrics"]
        assert (metrics["prompt_tokens"], metrics["completion_tokens"]) == (call.input_tokens, call.output_tokens)
        assert metrics["cost_usd"] > 0
    # The system prompt once, each question once as a user step before the call that answered it (the second turn's
    # re-sent history no step again).
    assert [(step["source"], step.get("message") if step["source"] != "agent" else None)
            for step in document["steps"]] == [
        ("system", "You are a terse weather assistant."), ("user", QUESTIONS[0]), ("agent", None), ("agent", None),
        ("user", QUESTIONS[1]), ("agent", None), ("agent", None)]
    assert not any(step.get("is_copied_context") for step in document["steps"])
    # Every result as the model was shown it but the throwing tool's (the gap below).
    shown = {call_id: result["content"] for call_id, result in _results(document).items()}
    atlantis = truth.calls[0].tool_calls[1]["id"]
    assert {k: v for k, v in shown.items() if k != atlantis} == {
        k: v for k, v in truth.tool_results.items() if k != atlantis}
    assert document["final_metrics"]["total_steps"] == 7


def test_both_turns_are_one_session_by_langfuses_session_id() -> None:
    spans = capture_spans(CAPTURE)
    # Two traces (one a turn), their session only Langfuse's propagated `session.id`: no runtime context session.
    assert len({span.trace_id for span in spans}) == 2
    assert {span.attributes.get("session.id") for span in spans} == {SESSION}
    assert not any(key.startswith("ai.") for span in spans for key in span.attributes)
    document = _document()
    assert document["session_id"] == SESSION
    assert document["agent"]["name"] == "weather-agent"


def test_the_sdks_spans_are_the_ai_sdk_mappers_and_every_key_read() -> None:
    document = _document()
    # Without the integration's tracer read as the AI SDK's: the four steps the Langfuse mapper's, and the SDK's
    # timing (`gen_ai.client.operation.*`) and the runs' restated output unmapped.
    assert document["extra"]["unmapped_attributes"] == []
    emitters = {step["extra"]["emitter"] for step in corpus.llm_steps(document)}
    emitters |= {result["extra"]["emitter"] for result in _results(document).values()}
    assert emitters == {vercel_ai_otel_genai.NAME}
    # Langfuse's keys (its processor's and the integration's enrichSpan's) are read by the Langfuse mapper.
    assert "langfuse" in document["extra"]["emitters"]


def test_the_failing_tool_is_flagged_and_its_wrapping_in_no_span() -> None:
    # The raising get_weather's result is flagged, its text the error's. @ai-sdk/openai sent the model
    # {"error": <text>} (an `error-text` output wrapped); the integration writes the value alone, so no span says it was
    # wrapped (KNOWN_GAPS in the corpus test). The day a span records it, this fails.
    truth = capture_truth(CAPTURE)
    atlantis = truth.calls[0].tool_calls[1]["id"]
    failed = _results(_document())[atlantis]
    assert failed["extra"]["is_error"] is True
    assert failed["content"] == "Error: unknown city: Atlantis"
    assert json.loads(truth.tool_results[atlantis]) == {"error": failed["content"]}
    for span in capture_spans(CAPTURE):
        assert not [key for key, value in span.attributes.items()
                    if isinstance(value, str) and ('"error"' in value or '\\"error\\"' in value)], span.name
