"""Re-record: openai-agents (Responses API) with a handoff, traced by OpenInference.

    python3 -m venv /tmp/cap-oa-oi && /tmp/cap-oa-oi/bin/pip install \
        openai-agents==0.24.0 openai==3.57.0 openinference-instrumentation-openai-agents==2.6.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-oa-oi/bin/python tests/captures/openai-agents_openinference/record.py

Two turns of one session (one trace each, under OpenInference's synthetic AGENT root named after
the workflow): `Runner.run` with two parallel tool calls, then `Runner.run_streamed` re-sending
turn one's items, a third call of the same tool with other arguments, a handoff
(`transfer_to_booking_agent`) and, in the receiving agent, a failing tool call, a retry and the
answer. Every function call is scripted with the two ids the real Responses API gives it
(`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` the SDK sends
back names) and its item's own `id` (`fc_…`). (The versions the capture was recorded with are in
meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-travel-1"
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"tool_calls": [{"name": "transfer_to_booking_agent", "arguments": {}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 1}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42)."},
], SESSION)
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="two turns (run, run_streamed); parallel tool calls; same tool again with other "
                         "arguments; handoff to a second agent; a failing tool call and its retry"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, Runner, function_tool
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        @function_tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        @function_tool
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel room."""
            if nights < 2:
                raise ValueError("Hotel Nord takes bookings of two nights or more")
            return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

        booking = Agent(name="Booking agent", model="gpt-4o", instructions="You book hotels.",
                        tools=[book_hotel])
        triage = Agent(name="Travel desk", model="gpt-4o", instructions="You answer travel questions; "
                       "hand hotel bookings to the booking agent.", tools=[get_weather], handoffs=[booking])

        async def run() -> None:
            with using_session(SESSION):
                first = await Runner.run(triage, "Weather in Paris and Oslo?")
                second = Runner.run_streamed(triage, [
                    *first.to_input_list(),
                    {"role": "user", "content": "Is Bergen warmer? If not, book me a hotel in Oslo."}])
                async for _event in second.stream_events():
                    pass
                print(second.final_output)

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
