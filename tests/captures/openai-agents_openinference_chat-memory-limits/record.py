"""Re-record: openai-agents on the Chat Completions API with session memory, traced by OpenInference.

    python3 -m venv /tmp/cap-oa-oi && /tmp/cap-oa-oi/bin/pip install \
        openai-agents==0.24.0 openinference-instrumentation-openai-agents==2.6.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-oa-oi/bin/python tests/captures/openai-agents_openinference_chat-memory-limits/record.py

Four turns of one conversation kept by an `SQLiteSession` (the SDK re-sends the stored history
itself), every model call on `/v1/chat/completions`: turn one calls an agent used as a tool
(`Agent.as_tool`), which calls a tool of its own; turn two calls a tool twice in parallel; turn
three hits `max_turns` (MaxTurnsExceeded: the last tool result is never shown to the model); turn
four's tool raises with no failure function, so the run ends with the exception. (The versions the
capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oa-chat-memory-1"
REPLIES = [
    {"tool_calls": [{"name": "ask_researcher", "arguments": {"input": "What is the weather in Paris?"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"text": "Paris: sunny, 21°C."},
    {"text": "Paris is sunny at 21°C."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "Oslo is rainy at 9°C; Bergen is windy at 7°C."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Paris"}}]},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="Chat Completions API; SQLiteSession memory over four turns; an agent as a tool; "
                         "parallel tool calls; MaxTurnsExceeded; a tool raising with no failure function "
                         "ends the run") as rec:
        rec.env()
        from agents import Agent, MaxTurnsExceeded, Runner, SQLiteSession, function_tool, set_default_openai_api
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        set_default_openai_api("chat_completions")
        provider = TracerProvider(resource=Resource.create({"service.name": "weather-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        @function_tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        @function_tool(failure_error_function=None)
        def book_hotel(city: str) -> str:
            """Book a hotel room."""
            raise ConnectionError("the booking service is unreachable")

        researcher = Agent(name="Researcher", model="gpt-4o", instructions="You look up the weather.",
                           tools=[get_weather])
        desk = Agent(name="Weather desk", model="gpt-4o", instructions="You answer weather questions.",
                     tools=[researcher.as_tool(tool_name="ask_researcher", tool_description="Ask the researcher."),
                            get_weather, book_hotel])
        memory = SQLiteSession(SESSION)

        async def run() -> None:
            with using_session(SESSION):
                await Runner.run(desk, "Weather in Paris?", session=memory)
                await Runner.run(desk, "And Oslo and Bergen?", session=memory)
                try:
                    await Runner.run(desk, "Check Oslo, then Bergen, again.", session=memory, max_turns=2)
                except MaxTurnsExceeded as error:
                    print("turn three ended with:", error)
                try:
                    await Runner.run(desk, "Book me a hotel in Paris.", session=memory)
                except Exception as error:  # whatever the SDK raises, the run ended with it
                    print("turn four ended with:", type(error).__name__, error)

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
