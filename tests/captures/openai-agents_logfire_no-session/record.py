"""Re-record: openai-agents with its own tracing switched on, bridged to OTLP by logfire, no session id.

    python3 -m venv /tmp/cap-oa-lf && /tmp/cap-oa-lf/bin/pip install \
        openai-agents==0.24.0 openai==3.57.0 logfire==5.4.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-oa-lf/bin/python tests/captures/openai-agents_logfire_no-session/record.py

openai-agents' tracing has no OTLP exporter; `logfire.instrument_openai_agents()` turns its traces
into OTel spans, exported to OTEL_EXPORTER_OTLP_ENDPOINT (`send_to_logfire=False`). The scenario of
openai-agents_openinference (two turns, parallel tool calls, a third call of the same tool, a
handoff, a failing tool and its retry), both turns in one `agents.trace`, with no session id (as
openai-agents users usually run it): the trace is the session. Every function call is scripted with
the two ids the real Responses API gives it (`with_api_call_ids`): its `call_id` (`call_…`, which
the `function_call_output` the SDK sends back names) and its item's own `id` (`fc_…`). (Versions in
meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"tool_calls": [{"name": "transfer_to_booking_agent", "arguments": {}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 1}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42)."},
], "oa-lf-travel")
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="logfire",
                   packages=["openai-agents", "openai", "logfire", "opentelemetry-sdk"], session_id=None,
                   notes="openai-agents' own tracing through logfire.instrument_openai_agents(); two turns "
                         "(run, run_streamed) in one trace; parallel tool calls; handoff; a failing tool "
                         "call; no session id"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        import logfire
        from agents import Agent, Runner, function_tool, trace

        logfire.configure(send_to_logfire=False, service_name="travel-desk", console=False)
        logfire.instrument_openai_agents()

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
            with trace("Travel desk conversation"):
                first = await Runner.run(triage, "Weather in Paris and Oslo?")
                second = Runner.run_streamed(triage, [
                    *first.to_input_list(),
                    {"role": "user", "content": "Is Bergen warmer? If not, book me a hotel in Oslo."}])
                async for _event in second.stream_events():
                    pass
                print(second.final_output)

        asyncio.run(run())
        rec.flush(logfire)


if __name__ == "__main__":
    main()
