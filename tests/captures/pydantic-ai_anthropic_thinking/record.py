"""Re-record: a pydantic-ai agent on an Anthropic model with extended thinking, instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pydantic-ai_anthropic_thinking && /tmp/cap-pydantic-ai_anthropic_thinking/bin/pip install \
        'pydantic-ai-slim[anthropic]==2.78.0' anthropic==2.17.0 genai-prices==0.2.5 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_anthropic_thinking/bin/python tests/captures/pydantic-ai_anthropic_thinking/record.py

Two runs of one conversation (`conversation_id`), each its own trace, the second given the first's
`all_messages()`, on `claude-sonnet-4-6` with `anthropic_thinking={"type": "enabled", "budget_tokens": 2048}`:
every answer opens with a thinking block (its own text per call, signed), which pydantic-ai keeps as a
`ThinkingPart` and sends back in the history of every later call, signature and all. Each answer's usage
reports its thinking tokens (`output_tokens_details.thinking_tokens`, part of its `output_tokens`).
`max_tokens` is 4096 so that `agent.run` asks unstreamed (at the model's default 64000 the Anthropic SDK
makes pydantic-ai stream). Turn one (`agent.run`): the model thinks, then calls `get_weather` twice in
parallel, for Lisbon and Atlantis; Atlantis raises `ModelRetry`, which Anthropic is shown as an `is_error`
tool result; the model thinks again and asks for Porto instead, then thinks and answers. Turn two
(`run_stream`, every request streamed: `thinking_delta` and `signature_delta` events): the model thinks,
calls `packing_list`, whose list return pydantic-ai's Anthropic adapter sends as one text block an item,
then thinks and answers, streamed as text. Instrumented per agent with the `Instrumentation` capability.
claude-sonnet-4-6 is the newest Sonnet pydantic-ai lets take a budget (its profile refuses `budget_tokens` from
claude-sonnet-5 on). (The versions the capture was recorded with are in meta.json: pip freeze
gave pydantic-ai-slim and pydantic-graph 2.78.0, pydantic 2.14.4, anthropic 2.17.0, genai-prices 0.2.5,
opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.45.2.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-anthropic-thinking-1"
REPLIES = [
    {"reasoning": "Two cities to check: I can ask for Lisbon and Atlantis at once.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}],
     "input_tokens": 420, "output_tokens": 96, "reasoning_tokens": 38},
    {"reasoning": "Atlantis has no weather station; the user allowed Porto as the fallback, so I ask for Porto.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}],
     "input_tokens": 560, "output_tokens": 71, "reasoning_tokens": 30},
    {"reasoning": "Lisbon is 24°C and sunny, Porto 18°C and cloudy: Lisbon is the warmer one by six degrees.",
     "text": "Lisbon is sunny at 24°C; Atlantis has no weather station, so I checked Porto: cloudy at 18°C.",
     "input_tokens": 640, "output_tokens": 88, "reasoning_tokens": 34},
    {"reasoning": "The user goes to the warmer city, Lisbon; the packing list tool knows what suits its weather.",
     "tool_calls": [{"name": "packing_list", "arguments": {"city": "Lisbon", "days": 3}}],
     "input_tokens": 730, "output_tokens": 64, "reasoning_tokens": 27},
    {"reasoning": "Three items came back for three sunny days; I name them in one sentence.",
     "text": "For three days in sunny Lisbon, pack sunscreen, a light linen shirt and comfortable walking shoes.",
     "input_tokens": 810, "output_tokens": 75, "reasoning_tokens": 22},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
PACKING = {"Lisbon": ["sunscreen", "light linen shirt", "comfortable walking shoes"]}


async def conversation(rec: Recording) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.anthropic import AnthropicModel, AnthropicModelSettings
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.providers.anthropic import AnthropicProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-weather-thinking"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    settings = InstrumentationSettings(tracer_provider=provider)
    model = AnthropicModel("claude-sonnet-4-6", provider=AnthropicProvider(
        base_url=rec.base_url.removesuffix("/v1"), api_key="sk-ant-fake"))
    agent = Agent(model, name="weather", instructions="You compare the weather of cities and help pack for a trip.",
                  model_settings=AnthropicModelSettings(
                      max_tokens=4096, anthropic_thinking={"type": "enabled", "budget_tokens": 2048}),
                  capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        if city not in WEATHER:
            raise ModelRetry(f"No weather station in {city}; ask about another city.")
        return WEATHER[city]

    @agent.tool_plain
    def packing_list(city: str, days: int) -> list[str]:
        """What to pack for that many days in a city."""
        return PACKING[city]

    # Turn one: unstreamed, a parallel tool call with one call retried.
    first = await agent.run("Which is warmer right now, Lisbon or Atlantis? If Atlantis has no weather, use Porto.",
                            conversation_id=SESSION)
    print(first.output)

    # Turn two: streamed, carried on with the first turn's messages (its thinking parts re-sent).
    async with agent.run_stream("I'll go to the warmer one for three days. What should I pack?",
                                message_history=first.all_messages(), conversation_id=SESSION) as result:
        async for delta in result.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "pydantic-graph", "pydantic", "anthropic", "genai-prices",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="Anthropic extended thinking (budget_tokens 2048) on every call, thinking re-sent in "
                         "history; turn one unstreamed: parallel get_weather calls, one raising ModelRetry, the "
                         "model asking for another city; turn two run_stream with message_history: a tool call, "
                         "then the answer streamed") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
