"""Re-record: a Google ADK agent on Gemini with a sub-agent, two turns of one ADK session, traced by OpenInference.

    python3 -m venv /tmp/cap-adk-oi && /tmp/cap-adk-oi/bin/pip install \
        google-adk==2.12.0 google-genai==2.34.0 openinference-instrumentation-google-adk==1.0.5 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.42.1 opentelemetry-exporter-otlp-proto-http==1.42.1
    /tmp/cap-adk-oi/bin/python tests/captures/google-adk_openinference/record.py

`google-adk_native`'s agents (a root agent with a weather tool and a booking sub-agent), on
`gemini-2.5-flash` through ADK's own Gemini model (google-genai pointed at the fake with
GOOGLE_GEMINI_BASE_URL), set up as the instrumentation's README does: a tracer provider of the
application's, not made global, given to `GoogleADKInstrumentor().instrument(tracer_provider=…)`.
ADK's own spans go to the global provider, so none are exported here: the instrumentation replaces
ADK's agent and model spans by its `agent_run [<name>]` / `call_llm` spans and makes ADK's
`execute_tool` spans OpenInference TOOL spans (ADK still writes its own `gen_ai.*` /
`gcp.vertex.agent.*` attributes on them). Its `invocation [<app>]` span takes ADK's `session_id`
(the one given to `Runner.run_async`) as `session.id`, and every span under it inherits it.

Turn one: the root agent calls a tool twice in parallel (Gemini's function calls carry no id: ADK
makes `adk-…` ids for its tool spans and strips them before each request), then answers. Turn two:
it transfers to its sub-agent (`transfer_to_agent`), whose tool answers with an error (ADK's
convention: an error dict), then succeeds on the retry.

google-adk 2.12.0, not 2.13: with 2.13 this instrumentation (1.0.5, the newest) records no LLM call
at all, under either ADK telemetry schema. 2.13 opens `call_llm` in `telemetry.tracing._start_call_llm_span`
with `tracing.tracer`, whose `start_span` the instrumentation's `_SelectiveExecuteToolTracer` hands to
ADK's own tracer (the global provider's; under the default schema 2 there is no `call_llm` span and
`trace_call_llm` is a no-op): `_TraceCallLlm` then finds a non-recording span and returns. 2.12 opens it
with `_model_call.tracer`, which the instrumentation replaces by its own. (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-oi-travel-1"
MODEL = "gemini-2.5-flash"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 210, "output_tokens": 24},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C.", "input_tokens": 262, "output_tokens": 18},
    {"text": "Handing you to our booking desk.",
     "tool_calls": [{"name": "transfer_to_agent", "arguments": {"agent_name": "booking_agent"}}],
     "input_tokens": 290, "output_tokens": 15},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 1}}],
     "input_tokens": 240, "output_tokens": 12},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "input_tokens": 281, "output_tokens": 12},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42).", "input_tokens": 318, "output_tokens": 17},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
QUESTIONS = ["Weather in Paris and Oslo?", "Book me a hotel in Oslo, one night."]
PACKAGES = ["google-adk", "google-genai", "openinference-instrumentation-google-adk", "openinference-instrumentation",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("LlmAgent on gemini-2.5-flash (ADK's Gemini model), two turns of one ADK session: parallel tool calls "
             "then the answer; then transfer_to_agent to a sub-agent, a tool call answered with an error dict and "
             "its retry. The instrumentation's provider not global (its README): no ADK-native spans. google-adk "
             "2.12: with 2.13 the instrumentation records no LLM call")
    with Recording(Path(__file__).parent, REPLIES, framework="google-adk", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        # ADK's Gemini model builds a google-genai client, which reads the API key and base URL from the
        # environment (the server's root: the SDK adds `v1beta/models/…`).
        os.environ.update({"GOOGLE_API_KEY": "fake", "GOOGLE_GENAI_USE_VERTEXAI": "false",
                           "GOOGLE_GEMINI_BASE_URL": rec.base_url.removesuffix("/v1") + "/"})
        from openinference.instrumentation.google_adk import GoogleADKInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-travel"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        GoogleADKInstrumentor().instrument(tracer_provider=provider)

        from google.adk.agents import LlmAgent
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

        booking = LlmAgent(name="booking_agent", model=MODEL, description="Books hotels.",
                           instruction="You book hotels.", tools=[book_hotel])
        root = LlmAgent(name="travel_desk", model=MODEL, instruction="You answer travel questions; "
                        "transfer hotel bookings to booking_agent.", tools=[get_weather], sub_agents=[booking])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="travel", user_id="u1", session_id=SESSION)
            runner = Runner(agent=root, app_name="travel", session_service=sessions)
            for question in QUESTIONS:
                message = types.Content(role="user", parts=[types.Part(text=question)])
                async for event in runner.run_async(user_id="u1", session_id=SESSION, new_message=message):
                    if event.is_final_response() and event.content and event.content.parts:
                        print(event.content.parts[0].text)

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
