"""Trajectories built from real captured spans of each emitter, checked step by step."""

from __future__ import annotations

from typing import Any

import atif
import pytest
from span_fixtures import by_trace, load_otlp_json, load_pb, load_simple

from evalkit.trajectory.from_spans import SessionTrajectory, trajectory_from_spans
from evalkit.trajectory.prices import GENAI_PRICES_SOURCE, PriceBook

# Round prices make the expected costs easy to check by hand: $/million tokens.
PRICES = PriceBook.from_yaml(
    """
rules:
  - provider: "openai"
    model: "gpt-4o*"
    input: 2
    output: 8
    cache_read: 1
  - provider: "function"
    model: "function:*"
    input: 1
    output: 4
    cache_read: 0.5
    cache_write: 2
"""
)


def _check_valid(result: SessionTrajectory) -> dict[str, Any]:
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    atif.Trajectory.model_validate(document)
    assert document["schema_version"] == "ATIF-v1.7"
    return document


def _shape(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(step["source"], step["message"]) for step in document["steps"]]


def _scripted_session() -> list[Any]:
    spans = load_simple("pydantic-ai_offline_spans_v5.json")
    return next(
        group for group in by_trace(spans).values() if any(s.name.startswith("chat function") for s in group)
    )


def test_pydantic_ai_scripted_run() -> None:
    result = trajectory_from_spans(_scripted_session(), prices=PRICES)
    document = _check_valid(result)
    assert _shape(document) == [
        ("system", "Be brief."),
        ("user", "Weather in Paris?"),
        ("agent", ""),
        ("agent", "It is sunny in Paris."),
    ]
    first, second = document["steps"][2], document["steps"][3]
    assert first["reasoning_content"] == "I should call get_weather."
    assert first["tool_calls"] == [
        {"tool_call_id": "call_1", "function_name": "get_weather", "arguments": {"city": "Paris"}}
    ]
    assert [(r["source_call_id"], r["content"]) for r in first["observation"]["results"]] == [
        ("call_1", "sunny in Paris")
    ]
    assert first["metrics"]["prompt_tokens"] == 120
    assert first["metrics"]["cached_tokens"] == 100
    assert first["metrics"]["extra"]["cache_creation_input_tokens"] == 5
    # 15 uncached x $1 + 100 cached x $0.5 + 5 written x $2 + 20 out x $4, per million
    assert first["metrics"]["cost_usd"] == 0.000155
    # 30 x $1 + 120 x $0.5 + 8 x $4
    assert second["metrics"]["cost_usd"] == 0.000122
    assert first["metrics"]["extra"]["price_source"] == "prices.yaml"
    final = document["final_metrics"]
    # The root span's gen_ai.aggregated_usage (270/28) is not added again.
    assert (final["total_prompt_tokens"], final["total_completion_tokens"], final["total_cached_tokens"]) == (
        270,
        28,
        220,
    )
    assert final["total_cost_usd"] == 0.000277
    assert final["total_steps"] == 4
    assert document["agent"]["name"] == "scripted_agent"
    assert document["session_id"] == "01a2263c-5246-7223-840e-1d51cd359145"
    assert result.unmapped_attributes == []
    assert result.emitters == ["pydantic-ai", "otel-genai"]


def test_pydantic_ai_test_model_is_unpriced_not_free() -> None:
    spans = load_simple("pydantic-ai_offline_spans_v5.json")
    session = next(group for group in by_trace(spans).values() if any(s.name == "chat test" for s in group))
    document = _check_valid(trajectory_from_spans(session))
    agent_steps = [step for step in document["steps"] if step["source"] == "agent"]
    assert len(agent_steps) == 2
    for step in agent_steps:
        assert "cost_usd" not in step["metrics"]
        assert step["metrics"]["extra"]["price_source"] == "unpriced"
    assert "total_cost_usd" not in document["final_metrics"]
    assert document["final_metrics"]["extra"]["unpriced_steps"] == ["steps[2]", "steps[3]"]
    assert agent_steps[0]["observation"]["results"][0]["content"] == "sunny in a"


def test_otlp_protobuf_and_json_give_the_same_trajectories_as_the_simple_capture() -> None:
    simple = {
        t: trajectory_from_spans(g).document()
        for t, g in by_trace(load_simple("pydantic-ai_offline_spans_v5.json")).items()
    }
    from_pb = {
        t: trajectory_from_spans(g).document()
        for t, g in by_trace(load_pb("pydantic-ai_offline_v5.pb")).items()
    }
    from_json = {
        t: trajectory_from_spans(g).document()
        for t, g in by_trace(load_otlp_json("pydantic-ai_offline_v5.otlp.json")).items()
    }
    assert len(simple) == 2
    assert from_pb == from_json
    for trace_id, document in simple.items():
        assert from_pb[trace_id]["steps"] == document["steps"]
        assert from_pb[trace_id]["final_metrics"] == document["final_metrics"]


@pytest.mark.parametrize(
    "capture",
    [
        "openllmetry-openai-0.53.4_legacy-indexed_offline_spans.json",
        "openllmetry-openai-0.62.4_offline_spans.json",
    ],
)
def test_openllmetry_both_generations(capture: str) -> None:
    result = trajectory_from_spans(load_simple(capture), prices=PRICES)
    document = _check_valid(result)
    assert _shape(document) == [
        ("system", "Be brief."),
        ("user", "Weather in Paris?"),
        ("agent", ""),
        ("agent", "It is sunny in Paris."),
    ]
    call_step = document["steps"][2]
    assert call_step["tool_calls"] == [
        {"tool_call_id": "call_abc", "function_name": "get_weather", "arguments": {"city": "Paris"}}
    ]
    # No tool span in this capture: the result comes from the second call's history.
    assert call_step["observation"]["results"] == [
        {"source_call_id": "call_abc", "content": "sunny", "extra": {"from": "input history"}}
    ]
    assert call_step["model_name"] == "gpt-4o-2024-08-06"
    # (20 x $2 + 100 x $1 + 20 x $8) / 1e6 and (22 x $2 + 128 x $1 + 8 x $8) / 1e6
    assert call_step["metrics"]["cost_usd"] == 0.0003
    assert document["steps"][3]["metrics"]["cost_usd"] == 0.000236
    assert document["final_metrics"]["total_cost_usd"] == 0.000536
    assert document["final_metrics"]["total_cached_tokens"] == 228
    assert document["agent"]["tool_definitions"][0]["function"]["name"] == "get_weather"
    assert result.unmapped_attributes == []
    assert result.emitters[0] == "openllmetry"


def test_openllmetry_priced_by_genai_prices() -> None:
    document = _check_valid(
        trajectory_from_spans(load_simple("openllmetry-openai-0.62.4_offline_spans.json"))
    )
    step = document["steps"][2]
    # gpt-4o list price: $2.50 in, $1.25 cached in, $10 out per million.
    # (20 x 2.5 + 100 x 1.25 + 20 x 10) / 1e6
    assert step["metrics"]["cost_usd"] == 0.000375
    assert step["metrics"]["extra"]["price_source"] == GENAI_PRICES_SOURCE
    # (22 x 2.5 + 128 x 1.25 + 8 x 10) / 1e6
    assert document["steps"][3]["metrics"]["cost_usd"] == 0.000295
    assert document["final_metrics"]["total_cost_usd"] == 0.00067


@pytest.mark.parametrize(
    "fixture",
    [
        "openinference__js-openinference-genai-fixture__openinference_client_span_tool_calls.json",
        "openinference__js-openinference-genai-fixture__openinference_client_span_input_output_only.json",
        "openinference__js-openinference-genai-fixture__otel_genai_client_span_tool_calls.json",
        "openinference__js-openinference-genai-fixture__otel_genai_deprecated_client_span_tool_calls.json",
    ],
)
def test_single_llm_span_fixtures(fixture: str) -> None:
    result = trajectory_from_spans(load_simple(fixture))
    document = _check_valid(result)
    assert _shape(document) == [
        ("user", "Weather in Paris?"),
        ("agent", "Absolutely! Let me check the weather for you."),
        ("agent", "The weather in Paris is currently rainy with a temperature of 57°F."),
    ]
    history, answer = document["steps"][1], document["steps"][2]
    # The first assistant turn was produced by a call we never saw: context, not a priced call.
    assert history["is_copied_context"] is True
    assert "metrics" not in history
    assert history["tool_calls"][0]["arguments"] == {"location": "Paris"}
    assert history["observation"]["results"][0]["source_call_id"] == "1234"
    assert history["observation"]["results"][0]["content"] == "rainy, 57°F"
    assert answer["model_name"] == "gpt-4-0613"
    assert (answer["metrics"]["prompt_tokens"], answer["metrics"]["completion_tokens"]) == (97, 52)
    # gpt-4 (0613): $30 in, $60 out per million: 97 x 30 + 52 x 60 = 6030 -> $0.00603
    assert answer["metrics"]["cost_usd"] == 0.00603
    assert document["final_metrics"]["total_cost_usd"] == 0.00603


def test_a_tool_execution_span_alone_is_a_deterministic_step() -> None:
    result = trajectory_from_spans(
        load_simple("openinference__js-openinference-genai-fixture__otel_genai_tool_execution_span.json")
    )
    document = _check_valid(result)
    [step] = document["steps"]
    assert step["llm_call_count"] == 0
    assert "metrics" not in step
    assert step["tool_calls"] == [
        {"tool_call_id": "1234", "function_name": "get_weather", "arguments": {"city": "New York"}}
    ]
    assert step["observation"]["results"][0]["content"].startswith('{"status": "success"')
    assert "gen_ai.tool.description" not in result.unmapped_attributes
