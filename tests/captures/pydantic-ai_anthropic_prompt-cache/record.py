"""Re-record: a pydantic-ai agent on an Anthropic model with prompt caching, instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pc-pai-anthropic && /tmp/cap-pc-pai-anthropic/bin/pip install \
        'pydantic-ai-slim[anthropic]==2.68.0' anthropic==2.17.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pc-pai-anthropic/bin/python tests/captures/pydantic-ai_anthropic_prompt-cache/record.py

One run of one conversation (`conversation_id`) with `anthropic_cache_instructions` and
`anthropic_cache_tool_definitions` on (so the system prompt and the last tool carry
`cache_control`): the first call (a tool use) writes the cached prefix, the second (answering from
the tool's result) reads it back. Anthropic's wire `input_tokens` exclude the cache reads and writes,
reported beside them; pydantic-ai folds them back into its `input_tokens` (genai-prices' usage
extractor) and records `gen_ai.usage.cache_creation.input_tokens` / `gen_ai.usage.cache_read.input_tokens`
beside it. `run_sync` asks for no stream, but the model's default `max_tokens` (64000) is past what the
Anthropic SDK sends unstreamed, so pydantic-ai streams both requests behind the scenes. (The versions
the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-anthropic-cache-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 1800, "cache_write_tokens": 1500, "output_tokens": 40},
    {"text": "Lisbon is sunny at 24°C.", "input_tokens": 1900, "cache_read_tokens": 1500, "output_tokens": 12},
]
WEATHER = {"Lisbon": "sunny, 24°C"}
# A long, stable system prompt: the prefix worth caching.
INSTRUCTIONS = "You are a terse weather assistant. Use the get_weather tool for current conditions. " * 40


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "anthropic", "opentelemetry-sdk"], session_id=SESSION,
                   notes="Anthropic prompt caching (anthropic_cache_instructions, anthropic_cache_tool_definitions): "
                         "a tool-use call writing the cache, then an answer reading it") as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from pydantic_ai import Agent
        from pydantic_ai.capabilities.instrumentation import Instrumentation
        from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
        from pydantic_ai.models.instrumented import InstrumentationSettings
        from pydantic_ai.providers.anthropic import AnthropicProvider

        provider = TracerProvider(resource=Resource.create({"service.name": "pai-weather-cached"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        settings = InstrumentationSettings(tracer_provider=provider)
        model = AnthropicModel("claude-sonnet-4-5", provider=AnthropicProvider(
            base_url=rec.base_url.removesuffix("/v1"), api_key="sk-ant-fake"))
        agent = Agent(model, name="weather", instructions=INSTRUCTIONS,
                      model_settings=AnthropicModelSettings(anthropic_cache_instructions=True,
                                                            anthropic_cache_tool_definitions=True),
                      capabilities=[Instrumentation(settings=settings)])

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        agent.run_sync("What is the weather in Lisbon?", conversation_id=SESSION)
        rec.flush(provider)


if __name__ == "__main__":
    main()
