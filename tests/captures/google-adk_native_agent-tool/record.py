"""Re-record: a Google ADK root agent calling a specialist agent as a tool (`AgentTool`), ADK's own OTel tracing.

    python3 -m venv /tmp/cap-adk && /tmp/cap-adk/bin/pip install \
        google-adk==2.13.0 google-genai==2.34.0 litellm==1.110.2 openai==3.63.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0
    /tmp/cap-adk/bin/python tests/captures/google-adk_native_agent-tool/record.py

The root `LlmAgent` (`travel_desk`, LiteLlm against the fake LLM) has `AgentTool(agent=weather_specialist)`
among its tools and a sub-agent (`booking_agent`) it transfers to. Turn one: the root asks the specialist
(the AgentTool call: ADK runs the specialist in a `Runner` of its own, in a fresh in-memory session, its
answer the call's result); the specialist calls its two function tools in parallel, `get_sea_temperature`
raises once (a station timeout) and ADK's `ReflectAndRetryToolPlugin` (on the `App`, inherited by the
AgentTool's runner) answers the model with reflection guidance instead of failing the run; the specialist
retries it, answers, and the root answers the user from that. Turn two, of the same ADK session
(`Runner` + `InMemorySessionService`, the same session id) and streamed (`RunConfig(streaming_mode=SSE)`):
the root transfers to `booking_agent` (`transfer_to_agent`), which answers. Seven LLM calls. Message
content on the spans (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`; ADK records none by
default). Recorded with google-adk 2.13.0 (the newest), google-genai 2.34.0, litellm 1.110.2, openai 3.63.0,
opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.44.0 and opentelemetry-semantic-conventions 0.65b0 (`pip freeze`;
also in meta.json), the OpenTelemetry pins those of the other `google-adk_native*` captures.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-agent-tool-1"
REPLIES: list[dict[str, Any]] = [
    # Turn one: the root asks its specialist, an agent called as a tool.
    {"tool_calls": [{"name": "weather_specialist",
                     "arguments": {"request": "This weekend's weather and sea temperature in Bergen."}}]},
    # The specialist, in its own runner: both its tools at once.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "get_sea_temperature", "arguments": {"city": "Bergen"}}]},
    # The sea-temperature station timed out (the plugin's reflection guidance): retried.
    {"tool_calls": [{"name": "get_sea_temperature", "arguments": {"city": "Bergen"}}]},
    {"text": "Bergen this weekend: rainy, 11°C; the sea is 12°C."},
    {"text": "Bergen will be rainy at 11°C this weekend, with the sea at 12°C: pack a raincoat."},
    # Turn two, streamed: the root hands the booking to its sub-agent, which answers.
    {"text": "Handing you to our booking desk.",
     "tool_calls": [{"name": "transfer_to_agent", "arguments": {"agent_name": "booking_agent"}}]},
    {"text": "Booked two nights at Hotel Bryggen in Bergen, ref BGO-7."},
]
WEATHER = {"Bergen": "rainy, 11°C"}
QUESTIONS = ["Is Bergen good for a weekend trip? Check the weather and the sea.",
             "Book me two nights in Bergen then."]


def main() -> None:
    # What matters of the virtualenv: ADK, the google-genai types it is built on, LiteLlm's path to the fake LLM (its
    # OpenAI client) and the OpenTelemetry SDK and exporter (`pip freeze`; meta.json records them as installed).
    packages = ["google-adk", "google-genai", "litellm", "openai", "opentelemetry-api", "opentelemetry-sdk",
                "opentelemetry-exporter-otlp-proto-http", "opentelemetry-semantic-conventions"]
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="native",
                   packages=packages, session_id=SESSION,
                   notes="root LlmAgent with AgentTool(weather_specialist): the specialist (its own runner and "
                         "session) calls two function tools in parallel, one raising once (ReflectAndRetryToolPlugin "
                         "answers the model; retried); a transfer_to_agent to a sub-agent; two turns of one ADK "
                         "session, the second streamed (SSE)") as rec:
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

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from google.adk.agents import LlmAgent, RunConfig
        from google.adk.agents.run_config import StreamingMode
        from google.adk.apps import App
        from google.adk.models.lite_llm import LiteLlm
        from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.adk.tools.agent_tool import AgentTool
        from google.genai import types

        timeouts = ["Bergen"]  # the station times out on the first reading only

        def get_weather(city: str) -> str:
            """The weather forecast for a city this weekend."""
            return WEATHER[city]

        def get_sea_temperature(city: str) -> dict[str, str]:
            """The sea temperature off a city's coast."""
            if city in timeouts:
                timeouts.remove(city)
                raise TimeoutError(f"the {city} sea station did not answer")
            return {"city": city, "sea_temperature": "12°C"}

        model = LiteLlm(model="openai/gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        specialist = LlmAgent(name="weather_specialist", model=model,
                              description="Reports the weather and sea temperature for a city.",
                              instruction="Report the weather and the sea temperature asked about.",
                              tools=[get_weather, get_sea_temperature])
        booking = LlmAgent(name="booking_agent", model=model, description="Books hotels.",
                           instruction="You book hotels.")
        root = LlmAgent(name="travel_desk", model=model,
                        instruction="You plan trips. Ask weather_specialist about the weather; transfer hotel "
                                    "bookings to booking_agent.",
                        tools=[AgentTool(agent=specialist)], sub_agents=[booking])
        app = App(name="travel", root_agent=root, plugins=[ReflectAndRetryToolPlugin(max_retries=2)])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="travel", user_id="u1", session_id=SESSION)
            runner = Runner(app=app, session_service=sessions)
            configs = [RunConfig(), RunConfig(streaming_mode=StreamingMode.SSE)]
            for question, config in zip(QUESTIONS, configs, strict=True):
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message,
                                                    run_config=config):
                    if event.is_final_response() and event.content and event.content.parts:
                        print(f"{event.author}: {event.content.parts[0].text}")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
