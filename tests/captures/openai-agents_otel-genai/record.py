"""Re-record: openai-agents (Responses API) with a handoff, traced by OpenTelemetry's own GenAI instrumentation.

    python3 -m venv /tmp/cap-openai-agents_otel-genai && /tmp/cap-openai-agents_otel-genai/bin/pip install \
        openai-agents==0.24.0 opentelemetry-instrumentation-openai-agents-v2==0.1.0 \
        opentelemetry-util-genai==1.3b0 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_otel-genai/bin/python tests/captures/openai-agents_otel-genai/record.py

`opentelemetry-instrumentation-openai-agents-v2` (the contrib repository's, scope
`opentelemetry.instrumentation.openai_agents`) is a tracing processor of openai-agents' own tracing: it
records every model call itself (the SDK's response spans, as `chat <model>` spans carrying
`gen_ai.input.messages` / `gen_ai.output.messages`), so `opentelemetry-instrumentation-openai-v2` is not
installed (it would report each call a second time). Content goes on the spans
(`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`, a value its README lists; its event
capture is switched off in 0.1.0). It documents no `OTEL_SEMCONV_STABILITY_OPT_IN`: it always writes the
latest conventions. The instrumentor adds its processor beside the SDK's own exporter to OpenAI's
backend, which the fake key could not send to: that exporter is dropped first (`set_trace_processors([])`).

Two turns of one session, kept by an `SQLiteSession` and named by the RunConfig's `group_id`, as the SDK's
docs show. The instrumentation records neither (nor any session or conversation id: it writes
`gen_ai.conversation.id` only from an agent span's `conversation_id`, which openai-agents 0.24 has not), so
each turn also runs under an application span carrying `gen_ai.conversation.id`, the GenAI conventions'
session key. Turn 1 (`Runner.run`): the travel desk hands off to the booking agent
(`transfer_to_booking_agent`), which calls `book_hotel` and `get_weather` in parallel; `book_hotel` raises
once (the SDK sends the model its failure_error_function's text), is called again and the agent answers.
Turn 2 (`Runner.run_streamed`, the same session, from the travel desk again): another handoff, one
weather call and the answer. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oa-otel-genai-travel-1"
REPLIES = [
    {"tool_calls": [{"name": "transfer_to_booking_agent", "arguments": {}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella."},
    {"tool_calls": [{"name": "transfer_to_booking_agent", "arguments": {}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C."},
]
WEATHER = {"Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents",
                   instrumentation="opentelemetry-instrumentation-openai-agents-v2",
                   packages=["openai-agents", "openai", "opentelemetry-instrumentation-openai-agents-v2",
                             "opentelemetry-util-genai", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="two turns (run, run_streamed) of one SQLiteSession with the RunConfig's group_id, neither "
                         "recorded by the instrumentation, so each turn under an application span carrying "
                         "gen_ai.conversation.id; a handoff to a booking agent; two parallel tool calls, one "
                         "raising once (the failure_error_function's text sent to the model) and called again") as rec:
        rec.env()
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
        from agents import Agent, RunConfig, Runner, SQLiteSession, function_tool, set_trace_processors
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        set_trace_processors([])  # the SDK's exporter to OpenAI's backend: the instrumentor keeps it otherwise
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("travel-desk")
        failures = {"book_hotel": 1}

        @function_tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            return WEATHER[city]

        @function_tool
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel room."""
            if failures["book_hotel"]:
                failures["book_hotel"] -= 1
                raise TimeoutError("the booking service did not answer in time")
            return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

        booking = Agent(name="Booking agent", model="gpt-4o", instructions="You book hotels and check the weather.",
                        tools=[book_hotel, get_weather])
        triage = Agent(name="Travel desk", model="gpt-4o", instructions="You answer travel questions; "
                       "hand hotel bookings to the booking agent.", handoffs=[booking])
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with tracer.start_as_current_span("travel-desk turn", attributes={"gen_ai.conversation.id": SESSION}):
                first = await Runner.run(triage, "Book me a hotel in Oslo for 2 nights, and what's the weather there?",
                                         session=memory, run_config=config)
            with tracer.start_as_current_span("travel-desk turn", attributes={"gen_ai.conversation.id": SESSION}):
                second = Runner.run_streamed(triage, "Is Bergen warmer?", session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
