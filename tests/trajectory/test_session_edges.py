"""Sessions as they really arrive: mixed emitters, out of order, parents missing, odd models, errors."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import atif
import pytest
from span_fixtures import by_trace, load_simple

from evalkit.trajectory.from_spans import SessionTrajectory, trajectory_from_spans
from evalkit.trajectory.overrides import MappingOverrides
from evalkit.trajectory.prices import PriceBook, model_candidates, normalise_provider
from evalkit.trajectory.span import STATUS_ERROR, LogRecord, Span, SpanEvent

TRACE = "0af7651916cd43dd8448eb211c80319c"
T0 = 1_800_000_000_000_000_000


def span(
    span_id: str, name: str, attributes: dict[str, Any], *, parent: str = "", at: int = 0, **fields: Any
) -> Span:
    return Span(
        trace_id=fields.pop("trace_id", TRACE),
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=fields.pop("kind", 3),
        start_time_unix_nano=T0 + at * 1_000_000_000,
        end_time_unix_nano=T0 + at * 1_000_000_000 + 500_000_000,
        status_code=fields.pop("status_code", 0),
        attributes=attributes,
        **fields,
    )


def messages(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


def genai_chat(
    span_id: str, at: int, inputs: list[dict[str, Any]], output: dict[str, Any], **usage: Any
) -> Span:
    return span(
        span_id,
        "chat gpt-4o",
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": usage.pop("provider", "openai"),
            "gen_ai.request.model": usage.pop("model", "gpt-4o"),
            "gen_ai.input.messages": messages(*inputs),
            "gen_ai.output.messages": messages(output),
            "gen_ai.conversation.id": "conv-1",
            **{f"gen_ai.usage.{key}": value for key, value in usage.items()},
        },
        parent=usage.pop("parent", "a000000000000001"),
        at=at,
    )


USER = {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]}
CALL = {
    "role": "assistant",
    "parts": [{"type": "tool_call", "id": "c1", "name": "weather", "arguments": {"city": "Paris"}}],
}
RESULT = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": "sunny"}]}
ANSWER = {"role": "assistant", "parts": [{"type": "text", "content": "Sunny."}]}


def session() -> list[Span]:
    return [
        span(
            "a000000000000001",
            "invoke_agent helper",
            {
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "helper",
                "gen_ai.usage.input_tokens": 999,
            },
            kind=1,
            at=0,
        ),
        genai_chat("b000000000000001", 1, [USER], CALL, input_tokens=100, output_tokens=10),
        span(
            "c000000000000001",
            "execute_tool weather",
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "weather",
                "gen_ai.tool.call.id": "c1",
                "gen_ai.tool.call.result": "sunny (tool span)",
            },
            parent="a000000000000001",
            kind=1,
            at=2,
        ),
        genai_chat("b000000000000002", 3, [USER, CALL, RESULT], ANSWER, input_tokens=130, output_tokens=5),
    ]


def valid(result: SessionTrajectory) -> dict[str, Any]:
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    atif.Trajectory.model_validate(document)
    return document


def test_agent_span_usage_is_not_counted_and_tool_span_wins_over_history() -> None:
    document = valid(trajectory_from_spans(session()))
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", "Weather in Paris?"),
        ("agent", ""),
        ("agent", "Sunny."),
    ]
    assert document["steps"][1]["observation"]["results"][0]["content"] == "sunny (tool span)"
    assert document["final_metrics"]["total_prompt_tokens"] == 230
    # gpt-4o: (100 x 2.5 + 10 x 10) + (130 x 2.5 + 5 x 10) = 725 per million
    assert document["final_metrics"]["total_cost_usd"] == 0.000725
    assert document["agent"]["name"] == "helper"
    assert document["session_id"] == "conv-1"


def test_arrival_order_does_not_matter() -> None:
    in_order = valid(trajectory_from_spans(session()))
    reversed_order = valid(trajectory_from_spans(list(reversed(session()))))
    assert reversed_order == in_order


def test_a_retried_span_shows_once() -> None:
    spans = session()
    assert valid(trajectory_from_spans([*spans, spans[1]])) == valid(trajectory_from_spans(spans))


def test_spans_whose_parent_never_arrived_are_kept() -> None:
    spans = session()[1:]  # the invoke_agent root was lost
    result = trajectory_from_spans(spans)
    document = valid(result)
    assert [s["source"] for s in document["steps"]] == ["user", "agent", "agent"]
    assert document["steps"][1]["observation"]["results"][0]["content"] == "sunny (tool span)"
    assert any("parent never arrived" in warning for warning in result.warnings)


def test_unknown_model_is_unpriced_not_free() -> None:
    spans = [
        genai_chat(
            "b000000000000001",
            1,
            [USER],
            ANSWER,
            input_tokens=10,
            output_tokens=2,
            model="house-model-7",
            provider="acme",
            parent="",
        )
    ]
    document = valid(trajectory_from_spans(spans))
    step = document["steps"][1]
    assert "cost_usd" not in step["metrics"]
    assert step["metrics"]["extra"]["price_source"] == "unpriced"
    assert "house-model-7" in step["metrics"]["extra"]["unpriced_reason"]
    assert "total_cost_usd" not in document["final_metrics"]
    assert document["final_metrics"]["extra"] == {"unpriced_steps": ["steps[1]"]}


def test_one_unpriced_step_makes_the_total_unknown() -> None:
    spans = session()
    spans[3] = replace(spans[3], attributes={**spans[3].attributes, "gen_ai.request.model": "mystery"})
    document = valid(trajectory_from_spans(spans))
    assert document["steps"][1]["metrics"]["cost_usd"] == 0.00035
    assert "total_cost_usd" not in document["final_metrics"]
    assert document["final_metrics"]["extra"]["unpriced_steps"] == ["steps[2]"]



def test_prompt_cache_reads_and_writes_are_totalled_and_priced_at_their_rates() -> None:
    # Semconv's input_tokens count the cached ones too (1,000 of 1,200 read; 800 of 900 written).
    spans = session()
    spans[1] = genai_chat("b000000000000001", 1, [USER], CALL, input_tokens=900, output_tokens=10,
                          model="claude-sonnet-4-5", provider="anthropic", **{"cache_creation.input_tokens": 800})
    spans[3] = genai_chat("b000000000000002", 3, [USER, CALL, RESULT], ANSWER, input_tokens=1200, output_tokens=5,
                          model="claude-sonnet-4-5", provider="anthropic", **{"cache_read.input_tokens": 1000})
    document = valid(trajectory_from_spans(spans))
    first, second = document["steps"][1]["metrics"], document["steps"][2]["metrics"]
    assert (first["prompt_tokens"], first["extra"]["cache_creation_input_tokens"]) == (900, 800)
    assert (second["prompt_tokens"], second["cached_tokens"]) == (1200, 1000)
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_cached_tokens"]) == (2100, 1000)
    assert final["extra"] == {"total_cache_creation_input_tokens": 800}
    # claude-sonnet-4-5 per million: $3 in, $3.75 written, $0.30 read, $15 out.
    # (100 x 3 + 800 x 3.75 + 10 x 15) + (200 x 3 + 1000 x 0.3 + 5 x 15) = 3450 + 975
    assert final["total_cost_usd"] == 0.004425


@pytest.mark.parametrize(
    ("model", "provider", "expected"),
    [
        # gpt-4o: 1000 x $2.5 + 100 x $10 per million
        ("openai/gpt-4o-2024-08-06", None, 0.0035),
        ("gpt-4o-2024-08-06", "openai.chat", 0.0035),
        ("gpt-4o", "az.ai.openai", 0.0035),
        # gemini-2.5-flash: $0.30 in, $2.50 out per million: 300 + 250
        ("models/gemini-2.5-flash", "gcp.gen_ai", 0.00055),
        ("gemini-2.5-flash", "gcp.vertex_ai", 0.00055),
    ],
)
def test_prefixed_and_aliased_model_ids_are_priced(model: str, provider: str | None, expected: float) -> None:
    attributes = {"model": model, "input_tokens": 1000, "output_tokens": 100, "parent": ""}
    if provider:
        attributes["provider"] = provider
    chat = genai_chat("b000000000000001", 1, [USER], ANSWER, **attributes)
    if not provider:
        chat = replace(
            chat, attributes={k: v for k, v in chat.attributes.items() if k != "gen_ai.provider.name"}
        )
    document = valid(trajectory_from_spans([chat]))
    assert document["steps"][1]["metrics"]["cost_usd"] == expected
    assert document["steps"][1]["metrics"]["extra"]["price_source"].startswith("genai-prices@")


def test_normalisation_helpers() -> None:
    assert normalise_provider("x_ai") == "x-ai"
    assert normalise_provider("azure.ai.inference") == "azure"
    assert normalise_provider("openai.chat") == "openai"
    assert normalise_provider("anthropic.messages") == "anthropic"
    assert model_candidates("openai/gpt-4o-2024-08-06") == [
        ("openai/gpt-4o-2024-08-06", None),
        ("gpt-4o-2024-08-06", "openai"),
        ("gpt-4o", "openai"),
    ]
    assert model_candidates("models/gemini-2.5-flash")[1] == ("gemini-2.5-flash", None)


def test_price_file_wins_and_valid_from_picks_the_rule_in_force() -> None:
    book = PriceBook.from_yaml(
        """
rules:
  - {provider: "openai", model: "gpt-4o*", input: 1, output: 1}
  - {provider: "openai", model: "gpt-4o*", input: 3, output: 3, valid_from: 2027-01-01}
  - {provider: "openai", model: "gpt-4o*", input: 2, output: 2, valid_from: 2026-01-01}
"""
    )
    spans = [genai_chat("b000000000000001", 1, [USER], ANSWER, input_tokens=1000, output_tokens=0, parent="")]
    document = valid(trajectory_from_spans(spans, prices=book))
    # The call is in 2027 (T0): the 2027 rule applies. 1000 x $3
    assert document["steps"][1]["metrics"]["cost_usd"] == 0.003
    assert document["steps"][1]["metrics"]["extra"]["price_source"] == "prices.yaml"
    early = replace(spans[0], start_time_unix_nano=1_780_000_000_000_000_000)  # 2026-05
    assert valid(trajectory_from_spans([early], prices=book))["steps"][1]["metrics"]["cost_usd"] == 0.002


def test_reported_cost_wins_over_a_computed_one() -> None:
    chat = genai_chat("b000000000000001", 1, [USER], ANSWER, input_tokens=1000, output_tokens=100, parent="")
    chat = replace(chat, attributes={**chat.attributes, "gen_ai.usage.cost": 0.0123})
    document = valid(trajectory_from_spans([chat]))
    assert document["steps"][1]["metrics"]["cost_usd"] == 0.0123
    assert document["steps"][1]["metrics"]["extra"]["price_source"] == "reported"
    assert document["final_metrics"]["total_cost_usd"] == 0.0123


def test_error_span_and_exception_event_show_on_the_step() -> None:
    chat = genai_chat("b000000000000001", 1, [USER], {"role": "assistant", "parts": []}, parent="")
    chat = replace(
        chat,
        status_code=STATUS_ERROR,
        status_message="rate limited",
        attributes={**chat.attributes, "error.type": "RateLimitError"},
        events=(
            SpanEvent(
                "exception", T0, {"exception.type": "openai.RateLimitError", "exception.message": "429"}
            ),
        ),
    )
    document = valid(trajectory_from_spans([chat]))
    error = document["steps"][1]["extra"]["error"]
    assert error == {
        "status": "error",
        "message": "rate limited",
        "type": "RateLimitError",
        "exceptions": [{"type": "openai.RateLimitError", "message": "429"}],
    }
    # A request the model answered nothing to: no LLM call, priced nothing, the total cost known
    # (trajectory/mappers/failed_attempts.py, `mark_unanswered`).
    assert document["steps"][1]["llm_call_count"] == 0 and "metrics" not in document["steps"][1]
    assert document["final_metrics"]["total_cost_usd"] == 0


def _run_with_one_call(run_id: str, at: int, asked: str, recorded: bool) -> list[Span]:
    """An `invoke_agent` span recording what it was asked (`gen_ai.input.messages`), and its one chat
    call: answered, its input recorded, or failed before it recorded any (the connection refused)."""
    question = messages({"role": "user", "parts": [{"type": "text", "content": asked}]})
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper", "gen_ai.input.messages": question}
    call: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                            "gen_ai.request.model": "gpt-4o"}
    failed: dict[str, Any] = {"status_code": STATUS_ERROR, "status_message": "Connection refused"}
    if recorded:
        call |= {"gen_ai.input.messages": question, "gen_ai.output.messages": messages(ANSWER)}
        failed = {}
    return [span(run_id, "invoke_agent helper", agent, kind=1, at=at),
            span(run_id.replace("a", "b", 1), "chat gpt-4o", call, parent=run_id, at=at + 1, **failed)]


def test_a_run_whose_call_recorded_no_input_is_asked_what_its_agent_span_says() -> None:
    """A call that failed before it recorded its input (pydantic-ai writes a call's messages once the
    model answers) leaves the agent span the one place the question is: the run still shows it, once;
    a run whose call recorded it is unchanged (no second user step)."""
    spans = [*_run_with_one_call("a000000000000001", 0, "Weather in Paris?", recorded=True),
             *_run_with_one_call("a000000000000002", 5, "And in Rome?", recorded=False)]
    document = valid(trajectory_from_spans(spans))
    steps = document["steps"]
    assert [(step["source"], step["message"]) for step in steps] == [
        ("user", "Weather in Paris?"), ("agent", "Sunny."), ("user", "And in Rome?"), ("agent", "")]
    assert steps[2]["extra"]["from"] == "agent span"
    assert steps[3]["extra"]["error"] == {"status": "error", "message": "Connection refused"}


def test_mixed_emitters_in_one_session() -> None:
    """A pydantic-ai agent whose tool uses an OpenLLMetry client, and an OpenInference tool span."""
    pai = by_trace(load_simple("pydantic-ai_offline_spans_v5.json"))
    scripted = next(g for g in pai.values() if any(s.name.startswith("chat function") for s in g))
    root = next(s for s in scripted if s.name.startswith("invoke_agent"))
    tool = next(s for s in scripted if s.name.startswith("execute_tool"))
    ollm = [
        replace(
            s,
            trace_id=root.trace_id,
            parent_span_id=tool.span_id,
            start_time_unix_nano=tool.start_time_unix_nano + 1000 * (i + 1),
            end_time_unix_nano=tool.start_time_unix_nano + 1000 * (i + 2),
        )
        for i, s in enumerate(load_simple("openllmetry-openai-0.62.4_offline_spans.json")[:1])
    ]
    oi_tool = span(
        "d000000000000001",
        "lookup",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "lookup",
            "input.value": '{"q": "x"}',
            "output.value": "found",
            "session.id": "s-9",
        },
        trace_id=root.trace_id,
        parent=root.span_id,
        kind=1,
        at=0,
    )
    oi_tool = replace(
        oi_tool,
        start_time_unix_nano=root.end_time_unix_nano - 10,
        end_time_unix_nano=root.end_time_unix_nano - 5,
    )
    result = trajectory_from_spans([*scripted, *ollm, oi_tool])
    document = valid(result)
    assert set(result.emitters) == {"pydantic-ai", "otel-genai", "openllmetry", "openinference"}
    agent_steps = [s for s in document["steps"] if s["source"] == "agent"]
    # pydantic-ai's two calls, the OpenLLMetry call made inside its tool, the OpenInference tool dispatch.
    assert [s["extra"]["emitter"] for s in agent_steps] == [
        "pydantic-ai",
        "openllmetry",
        "pydantic-ai",
        "openinference",
    ]
    assert agent_steps[3]["llm_call_count"] == 0
    assert agent_steps[3]["observation"]["results"][0]["content"] == "found"
    assert document["final_metrics"]["total_prompt_tokens"] == 120 + 150 + 120


def test_event_form_from_span_events_and_log_records() -> None:
    chat = span(
        "b000000000000001",
        "chat gpt-4o",
        {
            "gen_ai.system": "openai",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.prompt_tokens": 50,
            "gen_ai.usage.completion_tokens": 7,
        },
        events=(
            SpanEvent("gen_ai.system.message", T0 + 1, {"gen_ai.system": "openai", "content": "Be terse."}),
            SpanEvent("gen_ai.user.message", T0 + 2, {"gen_ai.system": "openai", "content": "Hi"}),
        ),
    )
    logs = [
        LogRecord(
            T0 + 3,
            TRACE,
            "b000000000000001",
            "gen_ai.choice",
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "k1",
                            "type": "function",
                            "function": {"name": "clock", "arguments": '{"tz": "UTC"}'},
                        }
                    ],
                },
            },
        )
    ]
    document = valid(trajectory_from_spans([chat], logs))
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "Be terse."),
        ("user", "Hi"),
        ("agent", ""),
    ]
    assert document["steps"][2]["tool_calls"] == [
        {"tool_call_id": "k1", "function_name": "clock", "arguments": {"tz": "UTC"}}
    ]
    assert document["steps"][2]["extra"]["finish_reasons"] == ["tool_calls"]
    # gpt-4o: 50 x 2.5 + 7 x 10 = 195 per million
    assert document["steps"][2]["metrics"]["cost_usd"] == 0.000195


def test_openinference_agent_tokens_and_sparse_indices() -> None:
    agent = span(
        "a000000000000001",
        "agent",
        {
            "openinference.span.kind": "AGENT",
            "llm.token_count.prompt": 500,
            "input.value": "Hi",
            "output.value": "Hello",
            "session.id": "s1",
        },
        kind=1,
    )
    llm = span(
        "b000000000000001",
        "llm",
        {
            "openinference.span.kind": "LLM",
            "llm.model_name": "gpt-4o",
            "llm.provider": "openai",
            "llm.input_messages.0.message.role": "user",
            "llm.input_messages.0.message.content": "Hi",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.contents.0.message_content.type": "reasoning",
            "llm.output_messages.0.message.contents.0.message_content.text": "Greet back.",
            "llm.output_messages.0.message.tool_calls.1.tool_call.id": "t1",
            "llm.output_messages.0.message.tool_calls.1.tool_call.function.name": "wave",
            "llm.output_messages.0.message.tool_calls.1.tool_call.function.arguments": "{}",
            "llm.token_count.prompt": 100,
            "llm.token_count.completion": 20,
            "llm.token_count.prompt_details.cache_read": 60,
            "llm.cost.total": 0.5,
            "llm.custom.flag": True,
        },
        parent="a000000000000001",
        at=1,
    )
    result = trajectory_from_spans([agent, llm])
    document = valid(result)
    step = document["steps"][1]
    assert step["reasoning_content"] == "Greet back."
    assert step["tool_calls"] == [{"tool_call_id": "t1", "function_name": "wave", "arguments": {}}]
    assert (
        step["metrics"]["prompt_tokens"],
        step["metrics"]["cached_tokens"],
        step["metrics"]["cost_usd"],
    ) == (100, 60, 0.5)
    assert step["metrics"]["extra"]["price_source"] == "reported"
    assert document["final_metrics"]["total_prompt_tokens"] == 100  # not 600
    assert result.unmapped_attributes == ["llm.custom.flag"]
    assert document["extra"]["unmapped_attributes"] == ["llm.custom.flag"]


def test_mapping_overrides() -> None:
    spans = session()
    spans[1] = replace(
        spans[1],
        attributes={
            **spans[1].attributes,
            "app.thread": "thread-7",
            "app.tenant": "acme",
            "app.variant": "B",
        },
    )
    noise = span(
        "e000000000000001", "healthcheck", {"http.route": "/health"}, parent="a000000000000001", at=4
    )
    overrides = MappingOverrides(
        version="v3",
        session_id_attribute="app.thread",
        attribute_map={"app.tenant": "trajectory.extra.tenant", "app.variant": "step.extra.variant"},
        ignore_span_names=["health*"],
    )
    result = trajectory_from_spans([*spans, noise], overrides=overrides)
    document = valid(result)
    assert document["session_id"] == "thread-7"
    assert document["extra"]["tenant"] == "acme"
    assert document["extra"]["mapping_version"] == "v3"
    assert document["steps"][1]["extra"]["variant"] == "B"
    assert result.unmapped_attributes == []
    plain = trajectory_from_spans([*spans, noise])
    assert plain.mapping_version == "built-in"
    assert "http.route" in plain.unmapped_attributes
    with pytest.raises(ValueError):
        MappingOverrides(attribute_map={"x": "steps.nowhere"})


def test_tool_spans_match_calls_without_ids_by_name_and_order() -> None:
    call = {
        "role": "assistant",
        "parts": [
            {"type": "tool_call", "name": "weather", "arguments": {"city": "Paris"}},
            {"type": "tool_call", "name": "weather", "arguments": {"city": "Rome"}},
        ],
    }
    spans = [
        genai_chat("b000000000000001", 1, [USER], call, input_tokens=10, output_tokens=5, parent=""),
        span(
            "c000000000000001",
            "execute_tool weather",
            {"gen_ai.tool.name": "weather", "gen_ai.tool.call.result": "sunny"},
            at=2,
        ),
        span(
            "c000000000000002",
            "execute_tool weather",
            {"gen_ai.tool.name": "weather", "gen_ai.tool.call.id": "x7", "gen_ai.tool.call.result": "rainy"},
            at=3,
        ),
    ]
    document = valid(trajectory_from_spans(spans))
    step = document["steps"][1]
    ids = [c["tool_call_id"] for c in step["tool_calls"]]
    assert [(r["source_call_id"], r["content"]) for r in step["observation"]["results"]] == [
        (ids[0], "sunny"),
        (ids[1], "rainy"),
    ]
    assert all(c["extra"] == {"synthesized_id": True} for c in step["tool_calls"])


def test_bytes_attribute_values_reach_the_document_as_base64() -> None:
    # OTLP allows bytes anywhere; undecodable ones once made the document fail to serialise.
    chat = genai_chat("b000000000000001", 1, [USER], CALL, parent="")
    chat = replace(chat, attributes={**chat.attributes, "gen_ai.request.seed_blob": b"\xff\x00",
                                     "custom.blob": b"\xfe"})
    tool = span("b000000000000002", "execute_tool weather", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather", "gen_ai.tool.call.id": "c1",
        "gen_ai.tool.call.arguments": {"city": "Paris", "raw": b"\xff"}, "gen_ai.tool.call.result": "sunny"}, at=2)
    unasked = span("b000000000000003", "execute_tool lookup", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "c9",
        "gen_ai.tool.call.arguments": {"key": b"\xff"}, "gen_ai.tool.call.result": "found"}, at=3)
    overrides = MappingOverrides(attribute_map={"custom.blob": "step.extra.blob"})
    document = valid(trajectory_from_spans([chat, tool, unasked], overrides=overrides))
    agent = document["steps"][1]
    assert agent["extra"]["request"]["seed_blob"] == {"bytes_base64": "/wA="}
    assert agent["extra"]["blob"] == {"bytes_base64": "/g=="}
    assert agent["observation"]["results"][0]["content"] == "sunny"
    dispatched = document["steps"][2]
    assert dispatched["llm_call_count"] == 0
    assert dispatched["tool_calls"][0]["arguments"] == {"key": {"bytes_base64": "/w=="}}
    json.dumps(document)  # serialisable as it is served


def _delegating_team(windows: dict[str, tuple[float, float]]) -> list[Span]:
    """An OpenInference team run (Agno's shape): one answer calling two delegation tools, each member's
    run beside the tool spans under the team's run; `windows` gives span id -> (start, end) in seconds."""
    def at(s: Span) -> Span:
        start, end = windows.get(s.span_id, (0, 0.5))
        return replace(s, start_time_unix_nano=T0 + int(start * 1e9), end_time_unix_nano=T0 + int(end * 1e9))

    def llm(span_id: str, parent: str, question: str, answer: str, calls: tuple[str, ...] = ()) -> Span:
        attributes: dict[str, Any] = {
            "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o",
            "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": question,
            "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": answer,
            "llm.token_count.prompt": 10, "llm.token_count.completion": 2}
        for i, call in enumerate(calls):
            attributes[f"llm.output_messages.0.message.tool_calls.{i}.tool_call.id"] = call
            attributes[f"llm.output_messages.0.message.tool_calls.{i}.tool_call.function.name"] = "delegate"
            attributes[f"llm.output_messages.0.message.tool_calls.{i}.tool_call.function.arguments"] = json.dumps(
                {"member_id": call})
        return span(span_id, "OpenAIChat.invoke", attributes, parent=parent)

    def run(span_id: str, parent: str, name: str, text: str) -> Span:
        return span(span_id, f"{name}.run", {"openinference.span.kind": "AGENT", "agent.name": name,
                                             "input.value": text, "output.value": f"{name} done",
                                             "session.id": "team-1"}, parent=parent)

    def tool(span_id: str, member: str) -> Span:
        return span(span_id, "delegate", {"openinference.span.kind": "TOOL", "tool.name": "delegate",
                                          "input.value": json.dumps({"member_id": member}),
                                          "output.value": f"{member} done"}, parent="a000000000000001")

    team = "a000000000000001"
    return [at(s) for s in (
        run(team, "", "team", "Plan it"),
        llm("b000000000000001", team, "Plan it", "", ("weather", "flights")),
        tool("c000000000000001", "weather"), tool("c000000000000002", "flights"),
        run("d000000000000001", team, "weather", "The weather"),
        llm("e000000000000001", "d000000000000001", "The weather", "weather done"),
        run("d000000000000002", team, "flights", "A flight"),
        llm("e000000000000002", "d000000000000002", "A flight", "flights done"),
    )]


def test_a_run_beside_the_one_tool_span_it_ran_within_is_that_tool_calls_subagent() -> None:
    # OpenInference's Agno instrumentation ends a tool span returning a generator once Agno drains it:
    # the member's run, started by that drain, hangs beside the tool span, within its time.
    document = valid(trajectory_from_spans(_delegating_team({
        "a000000000000001": (0, 10), "b000000000000001": (1, 2),
        "c000000000000001": (2, 5), "d000000000000001": (2.1, 4.9), "e000000000000001": (2.2, 4.8),
        "c000000000000002": (5, 8), "d000000000000002": (5.1, 7.9), "e000000000000002": (5.2, 7.8)})))
    names = {s["trajectory_id"]: s["agent"]["name"] for s in document["subagent_trajectories"]}
    results = document["steps"][1]["observation"]["results"]
    assert {r["source_call_id"]: [names[ref["trajectory_id"]] for ref in r["subagent_trajectory_ref"]]
            for r in results} == {"weather": ["weather"], "flights": ["flights"]}


def test_overlapping_tool_spans_adopt_no_run() -> None:
    # Concurrent delegations: both tool spans hold both runs, so neither call is known to have started either.
    document = valid(trajectory_from_spans(_delegating_team({
        "a000000000000001": (0, 10), "b000000000000001": (1, 2),
        "c000000000000001": (2, 8), "c000000000000002": (2.05, 8.1),
        "d000000000000001": (2.1, 4.9), "e000000000000001": (2.2, 4.8),
        "d000000000000002": (2.2, 7.9), "e000000000000002": (2.3, 7.8)})))
    results = document["steps"][1]["observation"]["results"]
    assert not [r for r in results if r.get("source_call_id") and r.get("subagent_trajectory_ref")]
    assert len(document["subagent_trajectories"]) == 2
