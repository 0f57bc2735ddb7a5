"""Re-record: the agno_openinference run, but async and streamed (`agent.arun(..., stream=True)`).

    python3 -m venv /tmp/cap-agno && /tmp/cap-agno/bin/pip install \
        agno==3.1.10 openai==3.63.0 openinference-instrumentation-agno==1.0.15 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agno/bin/python tests/captures/agno_openinference_streamed/record.py

The same Agent, replies and two turns of one Agno session as `agno_openinference`, each turn an
async streamed run: Agno streams with `stream_options.include_usage` (the two tool calls, plain
functions, still run one after the other), and OpenInference records `OpenAIChat.ainvoke_stream`
spans whose `output.value` is `{"messages": [...]}` (not the list the non-streamed `invoke`
records). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agno-oi-stream-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris: sunny, 21°C. Oslo: rainy, 9°C."},
    {"text": "Let me look for flights to Atlantis.",
     "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Atlantis"}}]},
    {"text": "There are no flights to Atlantis: it has no airport."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openinference",
                   packages=["agno", "openai", "openinference-instrumentation-agno", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="async streamed (arun stream=True): two turns of one Agno session (history re-sent): parallel "
                         "tool calls, then text with a tool call that raises") as rec:
        rec.env()
        from openinference.instrumentation.agno import AgnoInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AgnoInstrumentor().instrument(tracer_provider=provider)

        from agno.agent import Agent
        from agno.db.in_memory import InMemoryDb
        from agno.models.openai import OpenAIChat

        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            return WEATHER[city]

        def lookup_flight(city: str) -> str:
            """Flights to a city.

            Args:
                city: the destination
            """
            raise ValueError(f"no airport in {city}")

        agent = Agent(name="trip-planner", model=OpenAIChat(id="gpt-4o", base_url=rec.base_url, api_key="sk-fake"),
                      tools=[get_weather, lookup_flight], instructions="You are a terse trip planner.",
                      db=InMemoryDb(), add_history_to_context=True, session_id=SESSION, telemetry=False)
        import asyncio

        async def turns() -> None:
            for question in ("Weather in Paris and Oslo?", "And a flight to Atlantis?"):
                async for event in agent.arun(question, stream=True):
                    if getattr(event, "event", "") == "RunCompleted":
                        print(event.content)

        asyncio.run(turns())
        rec.flush(provider)


if __name__ == "__main__":
    main()
