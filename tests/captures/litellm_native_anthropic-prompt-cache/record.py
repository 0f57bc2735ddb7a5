"""Re-record: `litellm.acompletion` on Anthropic, its system prompt cached, traced by LiteLLM's "otel" callback.

    python3 -m venv /tmp/cap-pc-litellm-anthropic && /tmp/cap-pc-litellm-anthropic/bin/pip install \
        litellm==1.110.2 openai==3.63.0 opentelemetry-api==1.45.2 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pc-litellm-anthropic/bin/python tests/captures/litellm_native_anthropic-prompt-cache/record.py

LiteLLM's SDK callback configured as in `litellm_native` (`litellm.callbacks = ["otel"]`,
`USE_OTEL_LITELLM_REQUEST_SPAN=true`, the application's tracer provider set globally first, default
semantic conventions), the model `anthropic/claude-sonnet-4-5` reached through `ANTHROPIC_BASE_URL`.
The system message is one text block marked `cache_control: {"type": "ephemeral"}`, which LiteLLM
passes through to Anthropic's `system`. Under an application span carrying `session.id`: a call
answered by a tool use (it writes the cache: 1500 of its 1800 prompt tokens), the tool run, a call
answering in text, then a follow-up question answered in text (both read the 1500 cached tokens).
LiteLLM computes its own cost of each call from its bundled price map (`LITELLM_LOCAL_MODEL_COST_MAP`).
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "litellm-anthropic-cached-1"
MODEL = "anthropic/claude-sonnet-4-5"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 1800, "cache_write_tokens": 1500, "output_tokens": 42},
    {"text": "Lisbon is sunny at 24°C.", "input_tokens": 1900, "cache_read_tokens": 1500, "output_tokens": 12},
    {"text": "No umbrella needed: no rain is forecast.", "input_tokens": 1950, "cache_read_tokens": 1500,
     "output_tokens": 11},
]
WEATHER = {"Lisbon": "sunny, 24°C"}
# Long enough to be worth caching (Anthropic caches prompts of 1024 tokens and more).
SYSTEM_PROMPT = ("You are a terse weather assistant. Answer in one sentence, in the user's language; "
                 "call get_weather for any city the user names before answering. ") + \
    " ".join(f"Style rule {n}: be brief, be accurate, never guess a forecast." for n in range(1, 120))
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]


async def ask(litellm: Any, messages: list[dict[str, Any]]) -> None:
    """Ask until the model answers in text, running the tools it calls."""
    while True:
        answer = await litellm.acompletion(model=MODEL, messages=messages, tools=TOOLS, max_tokens=256,
                                           metadata={"session_id": SESSION})
        message = answer.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for call in message.tool_calls:
            messages.append({"role": "tool", "tool_call_id": call.id,
                             "content": WEATHER[json.loads(call.function.arguments)["city"]]})


async def conversation(litellm: Any, tracer: Any) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system",
         "content": [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]},
        {"role": "user", "content": "What is the weather in Lisbon?"},
    ]
    with tracer.start_as_current_span("weather-bot", attributes={"session.id": SESSION}):
        await ask(litellm, messages)
        messages.append({"role": "user", "content": "Should I bring an umbrella?"})
        await ask(litellm, messages)
    print(messages[-1]["content"])
    await asyncio.sleep(1)  # LiteLLM logs from a background worker: let it end the last spans


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="litellm", instrumentation="native",
                   packages=["litellm", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="litellm.acompletion on anthropic/claude-sonnet-4-5 in a hand-written loop, "
                         "litellm.callbacks=['otel'] (USE_OTEL_LITELLM_REQUEST_SPAN=true), under an application "
                         "span carrying session.id; system prompt cached (cache_control ephemeral): a tool use "
                         "writing the cache, a text answer and a follow-up question reading it") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: litellm's bundled prices
        os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = "true"
        import litellm
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        litellm.callbacks = ["otel"]
        tracer = provider.get_tracer("weather-bot")

        asyncio.run(conversation(litellm, tracer))
        rec.flush(provider)


if __name__ == "__main__":
    main()
