"""Re-record: openai-agents (Responses API) with a handoff, traced by OpenLLMetry's openai-agents instrumentation.

    python3 -m venv /tmp/cap-oa-ollm && /tmp/cap-oa-ollm/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 opentelemetry-instrumentation-openai-agents==0.62.4 \
        opentelemetry-semantic-conventions-ai==0.5.1 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-oa-ollm/bin/python tests/captures/openai-agents_openllmetry/record.py

The instrumentation is a tracing processor of openai-agents' own tracing (`OpenAIAgentsInstrumentor`
adds it to the SDK's processors): `set_tracing_disabled` / `OPENAI_AGENTS_DISABLE_TRACING` would
leave it nothing to see, so the SDK's export to OpenAI is turned off the instrumentor's way,
`replace_existing_processors=True` (it becomes the only processor). Only the openai-agents
instrumentation, as its README shows: it records every model call itself (`openai.response`);
opentelemetry-instrumentation-openai would report each call a second time.

OpenLLMetry without traceloop-sdk has no session of its own (nothing turns association
properties into attributes), so each turn runs under an application span carrying `session.id`.
Two turns of one session, one trace each: `Runner.run` with two parallel tool calls, then
`Runner.run_streamed` re-sending turn one's items, a third call of the same tool with other
arguments, a handoff (`transfer_to_booking_agent`) and, in the receiving agent, a failing tool
call, a retry and the answer. Every function call is scripted with the two ids the real Responses
API gives it (`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` the
SDK sends back names) and its item's own `id` (`fc_…`). (The versions the capture was recorded
with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-ollm-travel-1"
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
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openllmetry",
                   packages=["openai-agents", "openai", "opentelemetry-instrumentation-openai-agents",
                             "opentelemetry-semantic-conventions-ai", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="two turns (run, run_streamed), each under an application span carrying session.id; "
                         "parallel tool calls; same tool again with other arguments; handoff to a second "
                         "agent; a failing tool call and its retry"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, Runner, function_tool
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        # The only processor: openai-agents' own exporter to OpenAI's backend is dropped.
        OpenAIAgentsInstrumentor(replace_existing_processors=True).instrument(tracer_provider=provider)
        tracer = provider.get_tracer("travel-desk")

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
            with tracer.start_as_current_span("travel-desk turn", attributes={"session.id": SESSION}):
                first = await Runner.run(triage, "Weather in Paris and Oslo?")
            with tracer.start_as_current_span("travel-desk turn", attributes={"session.id": SESSION}):
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
