"""Re-record: a pydantic-ai conversation carried on with `message_history`, instrumented by pydantic-ai itself.

    python3 -m venv /tmp/cap-pai && /tmp/cap-pai/bin/pip install \
        'pydantic-ai-slim[openai]==2.68.0' openai==3.57.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pai/bin/python tests/captures/pydantic-ai_openai_history-retry-parallel/record.py

Three runs of one conversation (`conversation_id`), each its own trace, each given the previous
run's `all_messages()` (so every request re-sends the conversation so far): turn one calls a tool
twice in parallel, one call raising `ModelRetry` (the model is shown the retry prompt) and calls it
again; turn two answers from the history alone; turn three's tool raises an exception pydantic-ai
does not catch, so the run ends with it. (The versions the capture was recorded with are in
meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-history-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C."},
    {"text": "Paris is warmer, by 12 degrees."},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Paris"}}]},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "openai", "opentelemetry-sdk"], session_id=SESSION,
                   notes="three runs continued with message_history (history re-sent each turn); parallel tool "
                         "calls, one raising ModelRetry and retried; a turn answered from history; a last "
                         "turn whose tool raises and ends the run") as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from pydantic_ai import Agent, ModelRetry
        from pydantic_ai.capabilities.instrumentation import Instrumentation
        from pydantic_ai.models.instrumented import InstrumentationSettings
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        provider = TracerProvider(resource=Resource.create({"service.name": "pai-weather"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        settings = InstrumentationSettings(tracer_provider=provider)
        model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
        agent = Agent(model, name="weather", instructions="You answer weather questions tersely.",
                      capabilities=[Instrumentation(settings=settings)])

        @agent.tool_plain
        def get_weather(city: str) -> str:
            """The weather in a city."""
            if city not in WEATHER:
                raise ModelRetry(f"No weather station in {city}; ask about another city.")
            return WEATHER[city]

        @agent.tool_plain
        def book_hotel(city: str) -> str:
            """Book a hotel room."""
            raise ConnectionError("the booking service is unreachable")

        first = agent.run_sync("Weather in Paris and Atlantis? If Atlantis has none, Oslo.",
                               conversation_id=SESSION)
        second = agent.run_sync("Which is warmer?", message_history=first.all_messages(),
                                conversation_id=SESSION)
        try:
            agent.run_sync("Book me a hotel in the warmer one.", message_history=second.all_messages(),
                           conversation_id=SESSION)
        except ConnectionError as error:
            print("the last run ended with:", error)
        rec.flush(provider)


if __name__ == "__main__":
    main()
