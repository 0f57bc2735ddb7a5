"""Re-record: openai-agents (Responses API), an orchestrator asking two specialist agents as tools, under OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_agents-as-tools && \
        /tmp/cap-openai-agents_openinference_agents-as-tools/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_agents-as-tools/bin/python \
        tests/captures/openai-agents_openinference_agents-as-tools/record.py

The SDK's "agents as tools" pattern (`Agent.as_tool(tool_name=…, tool_description=…)`): the travel desk
orchestrates a booking agent (holding `book_hotel`, which raises `TimeoutError` once, so the SDK sends the
model its default failure_error_function's text, which names no exception) and a weather agent (holding
`get_weather`), each a function tool of the desk's, run as a nested `Runner.run` whose final output is the
tool's result. The tools are `recording/openai_agents_travel.py`'s.

Two turns of one session, kept by an `SQLiteSession` and named by the RunConfig's `group_id`, as the SDK's
docs show; OpenInference records neither, so both run inside `using_session` (its documented session context,
as in `openai-agents_openinference`). Turn 1 (`Runner.run`): the desk asks both specialists in parallel in one
answer; the booking agent's `book_hotel` fails, it calls it again and answers; the weather agent calls
`get_weather` and answers; the desk answers with both. Turn 2 (`Runner.run_streamed`): a follow-up the desk
answers from the session's history. The two specialists run concurrently, so their model answers are scripted
by what each request's last input item says (`when`). Every function call is scripted with the two ids the real
Responses API gives it (`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` the SDK
sends back names) and its item's own `id` (`fc_…`). (The versions the capture was recorded with are in
meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import QUESTIONS, travel_tools, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-agents-as-tools-1"
FOLLOW_UP = "Which hotel was it, and do I need an umbrella?"
REPLIES = with_api_call_ids([
    # Turn 1: the desk asks both specialists at once.
    {"when": "Book me a hotel in Oslo",
     "tool_calls": [{"name": "ask_booking_agent", "arguments": {"input": "Book a hotel in Oslo for 2 nights."}},
                    {"name": "ask_weather_agent", "arguments": {"input": "What is the weather in Oslo?"}}]},
    # The booking agent: its first book_hotel raises (the SDK's default failure text names no exception), the
    # second books.
    {"when": "Book a hotel in Oslo for 2 nights.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"when": "An error occurred while running the tool",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"when": "ref OSL-42", "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42)."},
    # The weather agent.
    {"when": "What is the weather in Oslo?", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"when": "rainy, 9", "text": "Oslo: rainy, 9°C."},
    # The desk's answer, once both specialists' results are in.
    {"when": "Oslo: rainy",
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy at 9°C: pack an umbrella."},
    # Turn 2, streamed: answered from the session's history.
    {"when": FOLLOW_UP, "text": "Hotel Nord (ref OSL-42), and yes: Oslo is rainy, so bring an umbrella."},
], SESSION)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=["openai-agents", "openai", "openinference-instrumentation-openai-agents",
                             "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="agents as tools: an orchestrator calling two specialists (Agent.as_tool) in parallel in "
                         "one answer, one specialist's tool raising once (the failure_error_function's text sent "
                         "to its model) and called again; two turns (run, run_streamed) of one SQLiteSession with "
                         "the RunConfig's group_id, under using_session"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, RunConfig, Runner, SQLiteSession
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        book_hotel, get_weather = travel_tools()
        booking = Agent(name="Booking agent", model="gpt-4o", instructions="You book hotels.", tools=[book_hotel])
        weather = Agent(name="Weather agent", model="gpt-4o", instructions="You check the weather.",
                        tools=[get_weather])
        desk = Agent(name="Travel desk", model="gpt-4o",
                     instructions="You answer travel questions, asking the specialists; ask them in parallel "
                                  "when a question needs both.",
                     tools=[booking.as_tool(tool_name="ask_booking_agent",
                                            tool_description="Ask the booking agent to book a hotel."),
                            weather.as_tool(tool_name="ask_weather_agent",
                                            tool_description="Ask the weather agent about the weather.")])
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with using_session(SESSION):
                first = await Runner.run(desk, QUESTIONS[0], session=memory, run_config=config)
                second = Runner.run_streamed(desk, FOLLOW_UP, session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(first.final_output, second.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
