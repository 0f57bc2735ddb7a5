"""Re-record: a Google ADK agent (LiteLlm against the fake LLM) with a sub-agent, ADK's own OTel tracing.

    python3 -m venv /tmp/cap-adk && /tmp/cap-adk/bin/pip install \
        google-adk==2.13.0 litellm==1.110.2 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0
    /tmp/cap-adk/bin/python tests/captures/google-adk_native/record.py

The root agent calls a tool twice in parallel, then transfers to its sub-agent
(`transfer_to_agent`), whose tool answers with an error (ADK's convention: an error dict), then
succeeds on the retry. ADK's session id is the
session. Message content on the spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`;
ADK records none by default). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-travel-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris is sunny, Oslo rainy. Handing you to booking.",
     "tool_calls": [{"name": "transfer_to_agent", "arguments": {"agent_name": "booking_agent"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 1}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42)."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="native",
                   packages=["google-adk", "litellm", "opentelemetry-sdk"], session_id=SESSION,
                   notes="LlmAgent with LiteLlm; parallel tool calls; transfer_to_agent to a sub-agent; "
                         "a tool call answered with an error and its retry") as rec:
        rec.env()
        import os

        # ADK 2.x follows the GenAI semantic conventions and records no message content unless told
        # to; on the spans is what a user pointing it at an OTLP endpoint would choose.
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: no price table fetch
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-travel"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from google.adk.agents import LlmAgent
        from google.adk.models.lite_llm import LiteLlm
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        def book_hotel(city: str, nights: int) -> dict[str, str]:
            """Book a hotel room."""
            if nights < 2:  # ADK's convention for a tool that failed: an error the model reads
                return {"status": "error", "error_message": "Hotel Nord takes bookings of two nights or more"}
            return {"status": "success", "booking": f"Hotel Nord in {city}, {nights} nights, ref OSL-42"}

        model = LiteLlm(model="openai/gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        booking = LlmAgent(name="booking_agent", model=model, description="Books hotels.",
                           instruction="You book hotels.", tools=[book_hotel])
        root = LlmAgent(name="travel_desk", model=model, instruction="You answer travel questions; "
                        "transfer hotel bookings to booking_agent.", tools=[get_weather], sub_agents=[booking])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="travel", user_id="u1", session_id=SESSION)
            runner = Runner(agent=root, app_name="travel", session_service=sessions)
            message = types.Content(role="user", parts=[types.Part(
                text="Weather in Paris and Oslo? Then book me a hotel in Oslo.")])
            async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message):
                if event.is_final_response() and event.content and event.content.parts:
                    print(event.content.parts[0].text)

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
