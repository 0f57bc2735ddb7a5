"""Re-record: a Google ADK multi-agent system on Gemini (a coordinator, two sub-agents, an AgentTool), OpenInference.

    python3 -m venv /tmp/cap-adk-oi-multi && /tmp/cap-adk-oi-multi/bin/pip install \
        google-adk==2.12.0 google-genai==2.34.0 openinference-instrumentation-google-adk==1.0.5 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.42.1 opentelemetry-exporter-otlp-proto-http==1.42.1
    /tmp/cap-adk-oi-multi/bin/python tests/captures/google-adk_openinference_multi-agent/record.py

What Phoenix users trace: an ADK multi-agent system under OpenInference's ADK instrumentation, set up
as its README does (the application's tracer provider, not made global, given to
`GoogleADKInstrumentor().instrument(tracer_provider=…)`; ADK's own spans go to the global provider,
so none are exported). The corpus had ADK's hand-overs only under ADK's own tracing
(`google-adk_native_agent-tool`, `google-adk_native_workflow-agents`) and, under OpenInference, one
agent with one sub-agent (`google-adk_openinference`). All agents on `gemini-2.5-flash` through ADK's
Gemini model (google-genai pointed at the fake with GOOGLE_GEMINI_BASE_URL).

The coordinator (`trip_coordinator`) has a function tool (`get_weather`), an `AgentTool` wrapping
`events_guide` (an agent with a tool of its own: ADK runs it in a `Runner` and in-memory session of
its own, its answer the call's result) and two sub-agents it may transfer to (`booking_agent`,
`activities_agent`). The `App` carries ADK's `ReflectAndRetryToolPlugin`, so a raising tool is
answered with the plugin's reflection instead of failing the run.

Turn one: the coordinator calls `get_weather` twice and `events_guide` at once (three parallel
function calls, id-less as Gemini sends them); the guide calls its tool and answers; the coordinator
answers. Turn two, of the same ADK session and streamed (`RunConfig(streaming_mode=SSE)`): the
coordinator transfers to `booking_agent`, whose `book_hotel` raises once (the reservation system times
out) and succeeds on the retry; the booking agent answers and hands over to its sibling
`activities_agent` (`transfer_to_agent` between sub-agents), which buys the tickets and answers.
Ten LLM calls.

google-adk 2.12.0, not the newest (2.15.0), as in `google-adk_openinference`: from 2.13 on this
instrumentation (1.0.5, the newest) records no `call_llm` span at all (tried with 2.15.0: agent and
tool spans only), and 2.12 caps opentelemetry-sdk at 1.42.1. The versions the capture was recorded
with are in meta.json.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "adk-oi-multi-agent-1"
MODEL = "gemini-2.5-flash"
REPLIES: list[dict[str, Any]] = [
    # Turn one: the coordinator asks for both cities' weather and the events guide at once.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}},
                    {"name": "events_guide", "arguments": {"request": "What is on in Lisbon this weekend?"}}],
     "input_tokens": 402, "output_tokens": 41},
    # The events guide, in its own runner: its tool, then its answer (the AgentTool call's result).
    {"tool_calls": [{"name": "find_events", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 188, "output_tokens": 11},
    {"text": "Saturday: a fado night at Clube de Fado. Sunday: the Feira da Ladra flea market.",
     "input_tokens": 236, "output_tokens": 23},
    {"text": "Lisbon is sunny at 24°C and Porto cloudy at 19°C. In Lisbon: fado on Saturday night, the Feira da "
             "Ladra flea market on Sunday.", "input_tokens": 521, "output_tokens": 38},
    # Turn two, streamed: the coordinator hands the booking over.
    {"text": "Handing you to our booking desk.",
     "tool_calls": [{"name": "transfer_to_agent", "arguments": {"agent_name": "booking_agent"}}],
     "input_tokens": 590, "output_tokens": 16},
    # The booking agent: its tool raises once (the plugin's reflection), then succeeds.
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Lisbon", "nights": 2}}],
     "input_tokens": 344, "output_tokens": 12},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Lisbon", "nights": 2}}],
     "input_tokens": 452, "output_tokens": 12},
    {"text": "Booked two nights at Hotel Alfama in Lisbon, ref LIS-7. Our activities desk will get the tickets.",
     "tool_calls": [{"name": "transfer_to_agent", "arguments": {"agent_name": "activities_agent"}}],
     "input_tokens": 497, "output_tokens": 29},
    # The activities agent, its sibling: buys the tickets and answers.
    {"tool_calls": [{"name": "buy_tickets", "arguments": {"event": "fado night", "count": 2}}],
     "input_tokens": 421, "output_tokens": 14},
    {"text": "Two tickets for Saturday's fado night at Clube de Fado, ref FADO-12. Enjoy Lisbon!",
     "input_tokens": 468, "output_tokens": 22},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 19°C"}
QUESTIONS = ["A weekend in Lisbon: the weather in Lisbon and Porto, and what is on?",
             "Book me two nights in Lisbon, and two tickets for the fado night."]
PACKAGES = ["google-adk", "google-genai", "openinference-instrumentation-google-adk", "openinference-instrumentation",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    notes = ("coordinator LlmAgent (gemini-2.5-flash, ADK's Gemini model) with a function tool, an "
             "AgentTool(events_guide) whose agent calls a tool of its own, and two sub-agents; turn one: three "
             "parallel calls (two function calls and the AgentTool); turn two streamed (SSE): transfer_to_agent to "
             "booking_agent, whose tool raises once (ReflectAndRetryToolPlugin) and is retried, then a transfer to its "
             "sibling activities_agent, which answers. The instrumentation's provider not global (its README): no "
             "ADK-native spans")
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

        provider = TracerProvider(resource=Resource.create({"service.name": "adk-trip-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        GoogleADKInstrumentor().instrument(tracer_provider=provider)

        from google.adk.agents import LlmAgent, RunConfig
        from google.adk.agents.run_config import StreamingMode
        from google.adk.apps import App
        from google.adk.plugins.reflect_retry_tool_plugin import ReflectAndRetryToolPlugin
        from google.adk.runners import Runner
        from google.adk.sessions import InMemorySessionService
        from google.adk.tools.agent_tool import AgentTool
        from google.genai import types

        timeouts = ["Lisbon"]  # the reservation system times out on the first booking only

        def get_weather(city: str) -> str:
            """The weather forecast for a city this weekend."""
            return WEATHER[city]

        def find_events(city: str) -> list[str]:
            """Events in a city this weekend."""
            return ["Sat: fado night, Clube de Fado", "Sun: Feira da Ladra flea market"]

        def book_hotel(city: str, nights: int) -> dict[str, str]:
            """Book a hotel room."""
            if city in timeouts:
                timeouts.remove(city)
                raise TimeoutError("the reservation system did not answer")
            return {"status": "success", "booking": f"Hotel Alfama in {city}, {nights} nights, ref LIS-7"}

        def buy_tickets(event: str, count: int) -> dict[str, str]:
            """Buy tickets for an event."""
            return {"status": "success", "tickets": f"{count} x {event}, ref FADO-12"}

        guide = LlmAgent(name="events_guide", model=MODEL, description="Knows what is on in a city.",
                         instruction="Say what is on in the city asked about.", tools=[find_events])
        booking = LlmAgent(name="booking_agent", model=MODEL, description="Books hotels.",
                           instruction="You book hotels; transfer event tickets to activities_agent.",
                           tools=[book_hotel])
        activities = LlmAgent(name="activities_agent", model=MODEL, description="Buys event tickets.",
                              instruction="You buy event tickets.", tools=[buy_tickets])
        root = LlmAgent(name="trip_coordinator", model=MODEL,
                        instruction="You plan weekend trips. Ask events_guide what is on; transfer hotel bookings "
                                    "to booking_agent and event tickets to activities_agent.",
                        tools=[get_weather, AgentTool(agent=guide)], sub_agents=[booking, activities])
        app = App(name="trips", root_agent=root, plugins=[ReflectAndRetryToolPlugin(max_retries=2)])

        async def run() -> None:
            sessions = InMemorySessionService()
            await sessions.create_session(app_name="trips", user_id="u1", session_id=SESSION)
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
