"""Re-record: a pydantic-ai agent on a `FallbackModel` whose first model fails, instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pydantic-ai_openai_fallback-model && \
        /tmp/cap-pydantic-ai_openai_fallback-model/bin/pip install \
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_openai_fallback-model/bin/python tests/captures/pydantic-ai_openai_fallback-model/record.py

The agent's model is `FallbackModel(gpt-4o, gpt-4o-mini)`, both `OpenAIChatModel`s on the fake LLM, each through an
`AsyncOpenAI` client with `max_retries=0` (the SDK would otherwise retry a 500 or a 429 itself, and pydantic-ai never
see it fail). Instrumented for every agent with `Agent.instrument_all(InstrumentationSettings(...))`, as
pydantic-ai_openai_streamed. Two runs of one conversation (`conversation_id`), each its own trace. Turn one
(`agent.run`): gpt-4o calls `get_weather` for Paris and Atlantis in parallel, Atlantis raising `ModelRetry`; the next
request to gpt-4o fails with HTTP 500, pydantic-ai falls back to gpt-4o-mini, which asks for Oslo instead; gpt-4o
answers. Turn two (`agent.run_stream`, given turn one's `all_messages()`): gpt-4o fails with HTTP 429, gpt-4o-mini
streams the answer. Six requests, four of them answered: `llm_errors.jsonl` holds the two failed ones (what a
fallback is for, and what a trajectory must neither show as an answer nor lose). Installed then (pip freeze, the
packages that matter; also in meta.json): pydantic-ai-slim 2.78.0 (the newest), pydantic-graph 2.78.0, pydantic 2.14.4,
genai-prices 0.2.5 (pydantic-ai's `operation.cost`), openai 3.63.0, httpx2 2.17.0, opentelemetry-api / -sdk /
-exporter-otlp-proto-http 1.45.2.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-fallback-1"
REPLIES = [
    # Turn one, gpt-4o.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}],
     "input_tokens": 164, "output_tokens": 31},
    # gpt-4o fails; the fallback, gpt-4o-mini, is asked the same.
    {"error": {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 231, "output_tokens": 16},
    # The next request goes to gpt-4o first again.
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C.", "input_tokens": 268, "output_tokens": 18},
    # Turn two, streamed: gpt-4o is rate-limited, gpt-4o-mini streams the answer.
    {"error": {"status": 429, "message": "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500.",
               "type": "requests", "code": "rate_limit_exceeded"}},
    {"text": "Paris is warmer, by 12 degrees.", "input_tokens": 290, "output_tokens": 10},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


async def conversation(rec: Recording) -> None:
    from openai import AsyncOpenAI
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent, ModelRetry
    from pydantic_ai.models.fallback import FallbackModel
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-fallback-weather"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))

    def chat_model(name: str) -> OpenAIChatModel:
        client = AsyncOpenAI(base_url=rec.base_url, api_key="sk-fake", max_retries=0)
        return OpenAIChatModel(name, provider=OpenAIProvider(openai_client=client))

    agent = Agent(FallbackModel(chat_model("gpt-4o"), chat_model("gpt-4o-mini")), name="weather",
                  instructions="You answer weather questions tersely.")

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The weather in a city."""
        if city not in WEATHER:
            raise ModelRetry(f"No weather station in {city}; ask about another city.")
        return WEATHER[city]

    first = await agent.run("Weather in Paris and Atlantis? If Atlantis has none, Oslo.", conversation_id=SESSION)
    print(first.output)
    async with agent.run_stream("Which is warmer?", message_history=first.all_messages(),
                                conversation_id=SESSION) as result:
        async for delta in result.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "pydantic-graph", "pydantic", "genai-prices", "openai", "httpx2",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="an agent on FallbackModel(gpt-4o, gpt-4o-mini), the SDK's retries off: turn one's parallel "
                         "tool calls, one raising ModelRetry, then gpt-4o failing with HTTP 500 and gpt-4o-mini "
                         "answering; turn two (message_history, run_stream) gpt-4o failing with HTTP 429 and "
                         "gpt-4o-mini streaming the answer; the failed requests are in llm_errors.jsonl") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
