"""Vercel AI SDK, Langfuse and MLflow spans, attribute for attribute as those SDKs write them."""

from __future__ import annotations

import json
from typing import Any

import atif

from evalkit.trajectory.from_spans import SessionTrajectory, trajectory_from_spans
from evalkit.trajectory.span import Span
from tests.trajectory.span_fixtures import capture_spans

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
T0 = 1_800_000_000_000_000_000


def span(
    span_id: str, name: str, attributes: dict[str, Any], *, parent: str = "", at: int = 0, scope: str = ""
) -> Span:
    return Span(
        trace_id=TRACE,
        span_id=span_id,
        parent_span_id=parent,
        name=name,
        kind=1,
        start_time_unix_nano=T0 + at * 1_000_000_000,
        end_time_unix_nano=T0 + at * 1_000_000_000 + 900_000_000,
        status_code=0,
        attributes=attributes,
        scope_name=scope,
    )


def valid(result: SessionTrajectory) -> dict[str, Any]:
    assert result.valid, [str(issue) for issue in result.issues]
    document = result.document()
    atif.Trajectory.model_validate(document)
    return document


def test_vercel_ai_sdk_v4_generate_text_with_a_tool() -> None:
    root = span(
        "1000000000000001",
        "ai.generateText",
        {
            "operation.name": "ai.generateText weather-function",
            "ai.operationId": "ai.generateText",
            "ai.telemetry.functionId": "weather-function",
            "ai.telemetry.metadata.sessionId": "chat-42",
            "ai.model.id": "gpt-4o",
            "ai.model.provider": "openai.chat",
            "ai.prompt": json.dumps({"system": "You are helpful.", "prompt": "Weather in SF?"}),
            "ai.response.text": "It is 72F in SF.",
            "ai.usage.promptTokens": 300,
            "ai.usage.completionTokens": 30,
        },
    )
    step1 = span(
        "1000000000000002",
        "ai.generateText.doGenerate",
        {
            "operation.name": "ai.generateText.doGenerate weather-function",
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.model.id": "gpt-4o",
            "ai.model.provider": "openai.chat",
            "ai.prompt.format": "prompt",
            "ai.prompt.messages": json.dumps(
                [
                    {"role": "system", "content": "You are helpful."},
                    {"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]},
                ]
            ),
            "ai.prompt.tools": [
                json.dumps(
                    {
                        "type": "function",
                        "name": "weather",
                        "description": "Get weather",
                        "parameters": {"type": "object"},
                    }
                )
            ],
            "ai.prompt.toolChoice": json.dumps({"type": "auto"}),
            "ai.response.finishReason": "tool-calls",
            "ai.response.toolCalls": json.dumps(
                [
                    {
                        "toolCallType": "function",
                        "toolCallId": "call_w",
                        "toolName": "weather",
                        "args": '{"city":"SF"}',
                    }
                ]
            ),
            "ai.response.id": "chatcmpl-1",
            "ai.response.model": "gpt-4o-2024-08-06",
            "ai.usage.promptTokens": 120,
            "ai.usage.completionTokens": 18,
            "gen_ai.system": "openai.chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.response.model": "gpt-4o-2024-08-06",
            "gen_ai.usage.prompt_tokens": 120,
            "gen_ai.usage.completion_tokens": 18,
        },
        parent="1000000000000001",
        at=1,
    )
    tool = span(
        "1000000000000003",
        "ai.toolCall",
        {
            "operation.name": "ai.toolCall weather-function",
            "ai.operationId": "ai.toolCall",
            "ai.toolCall.name": "weather",
            "ai.toolCall.id": "call_w",
            "ai.toolCall.args": '{"city":"SF"}',
            "ai.toolCall.result": '{"temperature":72}',
        },
        parent="1000000000000001",
        at=2,
    )
    step2 = span(
        "1000000000000004",
        "ai.generateText.doGenerate",
        {
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.model.id": "gpt-4o",
            "ai.model.provider": "openai.chat",
            "ai.prompt.messages": json.dumps(
                [
                    {"role": "system", "content": "You are helpful."},
                    {"role": "user", "content": [{"type": "text", "text": "Weather in SF?"}]},
                    {
                        "role": "assistant",
                        "content": [
                            {
                                "type": "tool-call",
                                "toolCallId": "call_w",
                                "toolName": "weather",
                                "args": {"city": "SF"},
                            }
                        ],
                    },
                    {
                        "role": "tool",
                        "content": [
                            {
                                "type": "tool-result",
                                "toolCallId": "call_w",
                                "toolName": "weather",
                                "result": {"temperature": 72},
                            }
                        ],
                    },
                ]
            ),
            "ai.response.text": "It is 72F in SF.",
            "ai.response.finishReason": "stop",
            "ai.response.model": "gpt-4o-2024-08-06",
            "ai.usage.promptTokens": 180,
            "ai.usage.completionTokens": 12,
        },
        parent="1000000000000001",
        at=3,
    )
    result = trajectory_from_spans([root, step1, tool, step2])
    document = valid(result)
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "You are helpful."),
        ("user", "Weather in SF?"),
        ("agent", ""),
        ("agent", "It is 72F in SF."),
    ]
    assert document["steps"][2]["tool_calls"] == [
        {"tool_call_id": "call_w", "function_name": "weather", "arguments": {"city": "SF"}}
    ]
    # As JSON.stringify wrote it, which is what the provider sent the model (not Python's `{"temperature": 72}`).
    assert document["steps"][2]["observation"]["results"][0]["content"] == '{"temperature":72}'
    assert document["session_id"] == "chat-42"
    assert document["agent"]["name"] == "weather-function"
    # The root's 300/30 is the sum of the two calls; counted once: 120+180, 18+12.
    assert (
        document["final_metrics"]["total_prompt_tokens"],
        document["final_metrics"]["total_completion_tokens"],
    ) == (300, 30)
    # gpt-4o via provider id openai.chat: 300 x $2.5 + 30 x $10 = 1050 per million
    assert document["final_metrics"]["total_cost_usd"] == 0.00105
    assert result.unmapped_attributes == []
    assert result.emitters == ["vercel-ai", "otel-genai"]


def test_vercel_ai_sdk_7_capture_session_tool_error_and_json_result() -> None:
    """The real AI SDK 7 capture (LegacyOpenTelemetry), built without the service."""
    document = valid(trajectory_from_spans(capture_spans("vercel-ai_native")))
    # AI SDK 7 has no telemetry metadata: the session id is runtime context it was told to include.
    assert document["session_id"] == "vercel-weather-1"
    parallel = document["steps"][2]
    results = {r["source_call_id"]: r for r in parallel["observation"]["results"]}
    assert [c["function_name"] for c in parallel["tool_calls"]] == ["get_weather", "get_weather", "get_time"]
    # Each result on its call's `call_id` (the model's `call_…`; its Responses item's own id is `fc_68b2…`).
    assert [c["tool_call_id"] for c in parallel["tool_calls"]] == [
        "call_Vx7wthrParis1", "call_Vx7wthrAtlnt1", "call_Vx7timeParis1"]
    assert set(results) == {c["tool_call_id"] for c in parallel["tool_calls"]}
    assert results["call_Vx7wthrParis1"]["content"] == "sunny, 21°C"
    assert results["call_Vx7wthrAtlnt1"]["extra"]["is_error"] is True
    assert results["call_Vx7wthrAtlnt1"]["content"] == "Error: unknown city: Atlantis"
    # JSON.stringify's text, as the provider sent it, not Python's `{"city": "Paris", ...}`.
    assert results["call_Vx7timeParis1"]["content"] == '{"city":"Paris","time":"14:05"}'


def test_vercel_ai_sdk_v6_usage_details_and_anthropic_v5_exclusive_prompt() -> None:
    v6 = span(
        "2000000000000001",
        "ai.streamText.doStream",
        {
            "ai.operationId": "ai.streamText.doStream",
            "ai.model.id": "claude-sonnet-4-5",
            "ai.model.provider": "anthropic.messages",
            "ai.prompt.messages": json.dumps([{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]),
            "ai.response.text": "Hello!",
            "ai.response.reasoning": "Say hello.",
            "ai.usage.inputTokens": 1000,
            "ai.usage.outputTokens": 50,
            "ai.usage.inputTokenDetails.noCacheTokens": 100,
            "ai.usage.inputTokenDetails.cacheReadTokens": 800,
            "ai.usage.inputTokenDetails.cacheWriteTokens": 100,
            "ai.usage.reasoningTokens": 20,
        },
    )
    document = valid(trajectory_from_spans([v6]))
    step = document["steps"][1]
    assert step["reasoning_content"] == "Say hello."
    assert (step["metrics"]["prompt_tokens"], step["metrics"]["cached_tokens"]) == (1000, 800)
    assert step["metrics"]["extra"]["cache_creation_input_tokens"] == 100
    assert step["metrics"]["extra"]["reasoning_tokens"] == 20
    # claude-sonnet-4-5: $3 in, $0.30 cache read, $3.75 cache write, $15 out per million:
    # 100 x 3 + 800 x 0.3 + 100 x 3.75 + 50 x 15 = 300 + 240 + 375 + 750 = 1665
    assert step["metrics"]["cost_usd"] == 0.001665

    v5 = span(
        "2000000000000002",
        "ai.generateText.doGenerate",
        {
            "ai.operationId": "ai.generateText.doGenerate",
            "ai.model.id": "claude-sonnet-4-5",
            "ai.model.provider": "anthropic.messages",
            "ai.response.text": "Hello!",
            "ai.usage.inputTokens": 100,
            "ai.usage.outputTokens": 50,
            "ai.usage.cachedInputTokens": 800,
        },
    )
    step = valid(trajectory_from_spans([v5]))["steps"][0]
    assert step["metrics"]["prompt_tokens"] == 900
    assert step["metrics"]["extra"]["prompt_tokens_normalisation"] == "cache tokens added to prompt tokens"


def test_langfuse_generation_tool_and_reported_cost() -> None:
    agent = span(
        "3000000000000001",
        "support-agent",
        {
            "langfuse.observation.type": "agent",
            "session.id": "lf-session",
            "langfuse.trace.name": "support",
            "langfuse.observation.input": json.dumps("Reset my password"),
        },
        scope="langfuse-sdk",
    )
    generation = span(
        "3000000000000002",
        "llm-call",
        {
            "langfuse.observation.type": "generation",
            "langfuse.observation.model.name": "gpt-4o-mini",
            "langfuse.observation.model.parameters": json.dumps({"temperature": 0}),
            "langfuse.observation.input": json.dumps(
                [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Reset my password"}]
            ),
            "langfuse.observation.output": json.dumps(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "t9",
                            "type": "function",
                            "function": {"name": "reset", "arguments": '{"user":"me"}'},
                        }
                    ],
                }
            ),
            "langfuse.observation.usage_details": json.dumps(
                {"input": 40, "output": 10, "input_cached_tokens": 60}
            ),
            "langfuse.observation.cost_details": json.dumps(
                {"input": 0.00002, "output": 0.00001, "total": 0.00003}
            ),
        },
        parent="3000000000000001",
        at=1,
        scope="langfuse-sdk",
    )
    tool = span(
        "3000000000000003",
        "reset",
        {
            "langfuse.observation.type": "tool",
            "langfuse.observation.input": json.dumps({"user": "me"}),
            "langfuse.observation.output": json.dumps("done"),
        },
        parent="3000000000000001",
        at=2,
        scope="langfuse-sdk",
    )
    result = trajectory_from_spans([agent, generation, tool])
    document = valid(result)
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "Be kind."),
        ("user", "Reset my password"),
        ("agent", ""),
    ]
    step = document["steps"][2]
    # Langfuse's "input" excludes cached tokens: 40 + 60.
    assert (step["metrics"]["prompt_tokens"], step["metrics"]["cached_tokens"]) == (100, 60)
    assert step["metrics"]["cost_usd"] == 0.00003
    assert step["metrics"]["extra"]["price_source"] == "reported"
    # No call id on the tool observation: matched by name and order.
    assert step["observation"]["results"][0]["source_call_id"] == "t9"
    assert step["observation"]["results"][0]["content"] == "done"
    assert document["session_id"] == "lf-session"
    assert document["agent"]["name"] == "support-agent"
    assert result.unmapped_attributes == []


def test_langfuse_openai_client_usage_is_openai_s_own_object() -> None:
    # What `langfuse.openai` (langfuse 5.2) writes: the response's usage object, prompt_tokens counting the
    # cached tokens, cache and reasoning nested (tests/captures/langfuse-sdk_openai has the shape, without a
    # cache hit); and the trace's user as `user.id`.
    generation = span(
        "3000000000000011",
        "OpenAI-generation",
        {
            "langfuse.observation.type": "generation",
            "langfuse.observation.model.name": "gpt-4o",
            "session.id": "lf-session",
            "user.id": "user-1",
            "langfuse.observation.input": json.dumps({"messages": [{"role": "user", "content": "Hi"}]}),
            "langfuse.observation.output": json.dumps({"role": "assistant", "content": "Hello"}),
            "langfuse.observation.usage_details": json.dumps({
                "prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110,
                "prompt_tokens_details": {"cached_tokens": 60, "audio_tokens": 0},
                "completion_tokens_details": {"reasoning_tokens": 4},
            }),
        },
        scope="langfuse-sdk",
    )
    result = trajectory_from_spans([generation])
    document = valid(result)
    metrics = document["steps"][-1]["metrics"]
    assert (metrics["prompt_tokens"], metrics["cached_tokens"], metrics["completion_tokens"]) == (100, 60, 10)
    assert metrics["extra"]["reasoning_tokens"] == 4
    assert "prompt_tokens_normalisation" not in metrics["extra"]
    assert result.unmapped_attributes == []


def test_mlflow_chat_model_and_tool() -> None:
    llm = span(
        "4000000000000001",
        "ChatOpenAI",
        {
            "mlflow.spanType": json.dumps("CHAT_MODEL"),
            "mlflow.traceRequestId": json.dumps("tr-1"),
            "mlflow.spanInputs": json.dumps(
                {"messages": [{"role": "user", "content": "2+2?"}], "model": "gpt-4o"}
            ),
            "mlflow.spanOutputs": json.dumps(
                {
                    "model": "gpt-4o-2024-08-06",
                    "choices": [
                        {
                            "message": {
                                "role": "assistant",
                                "content": None,
                                "tool_calls": [
                                    {
                                        "id": "m1",
                                        "type": "function",
                                        "function": {"name": "add", "arguments": '{"a":2,"b":2}'},
                                    }
                                ],
                            }
                        }
                    ],
                }
            ),
            "mlflow.chat.tokenUsage": json.dumps(
                {"input_tokens": 400, "output_tokens": 40, "total_tokens": 440}
            ),
            "mlflow.llm.provider": json.dumps("openai"),
            "session.id": "ml-1",
        },
    )
    tool = span(
        "4000000000000002",
        "add",
        {
            "mlflow.spanType": json.dumps("TOOL"),
            "mlflow.spanInputs": json.dumps({"a": 2, "b": 2}),
            "mlflow.spanOutputs": json.dumps(4),
        },
        at=1,
    )
    result = trajectory_from_spans([llm, tool])
    document = valid(result)
    step = document["steps"][1]
    assert step["model_name"] == "gpt-4o-2024-08-06"
    assert step["tool_calls"][0]["arguments"] == {"a": 2, "b": 2}
    assert step["observation"]["results"][0] == {
        "source_call_id": "m1",
        "content": "4",
        "extra": {
            "span_id": "4000000000000002",
            "trace_id": TRACE,
            "emitter": "mlflow",
            "duration_ms": 900.0,
        },
    }
    # gpt-4o: 400 x 2.5 + 40 x 10 = 1400 per million
    assert step["metrics"]["cost_usd"] == 0.0014
    assert document["session_id"] == "ml-1"
    assert result.unmapped_attributes == []


def test_haystack_2_9_message_fields_and_anthropic_usage() -> None:
    """Haystack 2.9's `ChatMessage.to_dict()` (`_role`, `_content`, `_meta`) from a pipeline's Anthropic generator
    component: its usage's input tokens exclude the cache reads (trajectory/mappers/haystack.py)."""
    messages = [{"_role": "system", "_meta": {}, "_name": None, "_content": [{"text": "Be brief."}]},
                {"_role": "user", "_meta": {}, "_name": None, "_content": [{"text": "Capital of France?"}]}]
    replies = [{"_role": "assistant", "_name": None, "_content": [{"text": "Paris."}],
                "_meta": {"model": "claude-sonnet-4-5", "finish_reason": "end_turn",
                          "usage": {"input_tokens": 20, "output_tokens": 3, "cache_read_input_tokens": 100}}}]
    pipeline = span("2000000000000001", "haystack.pipeline.run", {"haystack.pipeline.input_data": "{}"})
    generator = span("2000000000000002", "haystack.component.run", {
        "haystack.component.name": "llm",
        "haystack.component.type": "AnthropicChatGenerator",
        "haystack.component.input": json.dumps({"messages": messages}),
        "haystack.component.output": json.dumps({"replies": replies}),
        "haystack.component.visits": 1,
    }, parent="2000000000000001")
    document = valid(trajectory_from_spans([pipeline, generator], session_id="hs-29"))
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("system", "Be brief."), ("user", "Capital of France?"), ("agent", "Paris.")]
    answer = document["steps"][-1]
    assert (answer["model_name"], answer["extra"]["provider"], answer["extra"]["finish_reasons"]) == (
        "claude-sonnet-4-5", "anthropic", ["end_turn"])
    assert (answer["metrics"]["prompt_tokens"], answer["metrics"]["cached_tokens"]) == (120, 100)
    assert document["extra"]["unmapped_attributes"] == []
