"""Re-record: a Google ADK agent on Gemini with a sub-agent, two turns of one ADK session, traced by OpenLIT.

    python3 -m venv /tmp/cap-google-adk_openlit && /tmp/cap-google-adk_openlit/bin/pip install \
        google-adk==2.13.0 google-genai==2.34.0 openlit==1.45.0 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0
    /tmp/cap-google-adk_openlit/bin/python tests/captures/google-adk_openlit/record.py

Set up the way OpenLIT's quickstart shows: `openlit.init(otlp_endpoint=…)` (content capture on by default)
builds the tracer, logger and meter providers, all to the endpoint (the recorder), makes them global, and
instruments every library it finds: here its Google ADK instrumentation (`LlmAgent.__init__`,
`Runner.run_async` and `BaseAgent.run_async` wrapped; ADK's runner tracer replaced by a pass-through) and its
Google AI Studio one (google-genai's `generate_content` / `generate_content_stream`), plus the HTTP client
instrumentations it bundles. ADK's own tracing writes to the global provider too, so its spans are exported
beside OpenLIT's: the capture shows which spans each makes and whether one model call is reported twice.
ADK's own message content is left off (its default: a user of OpenLIT turns on OpenLIT's capture, not ADK's).

`google-adk_openinference`'s agents (a root agent with a weather tool and a booking sub-agent) on
`gemini-2.5-flash` through ADK's own Gemini model (google-genai pointed at the fake with
GOOGLE_GEMINI_BASE_URL). ADK's session id (`Runner.run_async(session_id=…)` on an `InMemorySessionService`
session) is the session. Turn one: the root agent asks the weather of two cities in parallel; the weather tool
raises once (Oslo's service times out), ADK's `ReflectAndRetryToolPlugin` (an App's plugin, as its docs show)
answers that call with its reflection guidance, the model asks again for Oslo, then answers. Turn two, streamed
(`RunConfig(streaming_mode=SSE)`): the root agent transfers to its sub-agent (`transfer_to_agent`), which books
the hotel, then answers. Six LLM calls.

Recorded offline: OpenLIT's pricing table (fetched from GitHub at init) is unreachable. (The versions the
capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-openlit-travel-1"
MODEL = "gemini-2.5-flash"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 210, "output_tokens": 24},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}], "input_tokens": 318, "output_tokens": 12},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C.", "input_tokens": 352, "output_tokens": 18},
    {"text": "Handing you to our booking desk.",
     "tool_calls": [{"name": "transfer_to_agent", "arguments": {"agent_name": "booking_agent"}}],
     "input_tokens": 380, "output_tokens": 15},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "input_tokens": 301, "output_tokens": 12},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42).", "input_tokens": 335, "output_tokens": 17},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
QUESTIONS = ["Weather in Paris and Oslo?", "Book me a hotel in Oslo for two nights."]
PACKAGES = ["google-adk", "google-genai", "openlit", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("openlit.init(otlp_endpoint=recorder): its Google ADK and Google AI Studio (google-genai) "
             "instrumentations (+ HTTP client spans, + log records, + metrics); ADK's own spans through the global "
             "provider openlit.init sets (ADK's content capture left off). LlmAgent on gemini-2.5-flash (ADK's "
             "Gemini model), two turns of one ADK session: parallel get_weather calls, one raising once "
             "(ReflectAndRetryToolPlugin answers with its reflection), retried, then the answer; then, streamed "
             "(SSE), transfer_to_agent to a sub-agent, its tool, its answer. Recorded offline: OpenLIT's pricing "
             "table unreachable")
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="openlit",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        # ADK's Gemini model builds a google-genai client, which reads the API key and base URL from the
        # environment (the server's root: the SDK adds `v1beta/models/…`).
        os.environ.update({"GOOGLE_API_KEY": "fake", "GOOGLE_GENAI_USE_VERTEXAI": "false",
                           "GOOGLE_GEMINI_BASE_URL": rec.base_url.removesuffix("/v1") + "/"})
        import openlit
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        openlit.init(application_name="adk-travel", environment="dev", otlp_endpoint=rec.otlp_endpoint)

        from google.adk.agents import LlmAgent, RunConfig
        from google.adk.agents.run_config import StreamingMode
        from google.adk.apps import App
        from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.genai import types

        failures = {"Oslo": 1}

        def get_weather(city: str) -> str:
            """The weather in a city."""
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError(f"weather service timed out for {city}")
            return WEATHER[city]

        def book_hotel(city: str, nights: int) -> dict[str, str]:
            """Book a hotel room."""
            return {"status": "success", "booking": f"Hotel Nord in {city}, {nights} nights, ref OSL-42"}

        booking = LlmAgent(name="booking_agent", model=MODEL, description="Books hotels.",
                           instruction="You book hotels.", tools=[book_hotel])
        root = LlmAgent(name="travel_desk", model=MODEL, instruction="You answer travel questions; "
                        "transfer hotel bookings to booking_agent.", tools=[get_weather], sub_agents=[booking])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="travel", user_id="u1", session_id=SESSION)
            app = App(name="travel", root_agent=root, plugins=[ReflectAndRetryToolPlugin(max_retries=2)])
            runner = Runner(app=app, session_service=sessions)
            configs = [RunConfig(), RunConfig(streaming_mode=StreamingMode.SSE)]
            for question, config in zip(QUESTIONS, configs, strict=True):
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message,
                                                    run_config=config):
                    if event.is_final_response() and event.content and event.content.parts:
                        print(event.content.parts[0].text)

        asyncio.run(run())
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
