"""Capture `vercel-ai_native_anthropic-prompt-cache-streamed`: AI SDK 7, Anthropic, prompt caching, streamed."""

from __future__ import annotations

import json

from evalkit.trajectory.from_spans import trajectory_from_spans
from tests.trajectory.span_fixtures import capture_spans
from tests.trajectory.test_other_emitters import span, valid

CAPTURE = "vercel-ai_native_anthropic-prompt-cache-streamed"


def test_capture_cache_tokens_cost_error_and_nothing_unmapped() -> None:
    result = trajectory_from_spans(capture_spans(CAPTURE))
    document = valid(result)
    assert document["session_id"] == "vercel-anthropic-cache-1"
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    first, answer = document["steps"][2], document["steps"][3]
    # @ai-sdk/anthropic's inputTokens count the cache tokens; noCacheTokens is Anthropic's own input_tokens.
    assert (first["metrics"]["prompt_tokens"], first["metrics"]["cached_tokens"]) == (1900, 0)
    assert first["metrics"]["extra"]["cache_creation_input_tokens"] == 1800
    assert (answer["metrics"]["prompt_tokens"], answer["metrics"]["cached_tokens"]) == (2080, 1800)
    # claude-sonnet-4-5, per million: $3 in, $3.75 cache write, $0.30 cache read, $15 out.
    # 100 x 3 + 1800 x 3.75 + 88 x 15 = 8370; 280 x 3 + 1800 x 0.3 + 27 x 15 = 1785
    assert (first["metrics"]["cost_usd"], answer["metrics"]["cost_usd"]) == (0.00837, 0.001785)
    results = {r["source_call_id"]: r for r in first["observation"]["results"]}
    # The Anthropic provider sends the error-text as it is, with is_error: the model saw this text.
    assert results["toolu_0_1"]["content"] == "Error: unknown city: Atlantis"
    assert results["toolu_0_1"]["extra"]["is_error"] is True
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_cached_tokens"]) == (8360, 5400)
    assert final["extra"]["total_cache_creation_input_tokens"] == 1800
    # The streamed calls' ai.stream.firstChunk / ai.stream.finish events restate attributes read already.
    assert result.unmapped_attributes == []


def test_run_instructions_as_a_system_message() -> None:
    """AI SDK 7 writes `ai.prompt.system` as given: here a system message carrying a cache breakpoint."""
    system = {"role": "system", "content": "Be terse.",
              "providerOptions": {"anthropic": {"cacheControl": {"type": "ephemeral"}}}}
    for given in (system, [system]):
        run = span("3000000000000001", "ai.generateText", {
            "ai.operationId": "ai.generateText",
            "ai.telemetry.functionId": "weather-agent",
            "ai.prompt": json.dumps({"system": given, "prompt": "Weather in Paris?"}),
            "ai.response.text": "Sunny.",
        })
        steps = [(s["source"], s["message"]) for s in valid(trajectory_from_spans([run]))["steps"]]
        # The instructions before the question, though a run with no call spans drafts both at its start.
        assert steps == [("system", "Be terse."), ("user", "Weather in Paris?"), ("agent", "Sunny.")]
