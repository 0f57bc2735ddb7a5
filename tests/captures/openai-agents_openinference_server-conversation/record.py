"""Re-record: openai-agents (Responses API) continuing the conversation the API keeps, traced by OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_server-conversation
    /tmp/cap-openai-agents_openinference_server-conversation/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_server-conversation/bin/python \
        tests/captures/openai-agents_openinference_server-conversation/record.py

One travel desk agent (`book_hotel`, which raises `TimeoutError` the first time it is called, and `get_weather`),
four turns of one session (`using_session`, as `openai-agents_openinference` sets it) in one trace: the SDK's docs
group a conversation's runs so, `with trace(workflow_name, group_id=thread_id)`; the instrumentor set up as its
README shows. The user answers "Yes, please." twice, as people do:

1. `Runner.run`, no server state: two parallel tool calls, `book_hotel` failing (the SDK sends the model its
   failure_error_function's text), an answer around it offering Bergen's weather.
2. "Yes, please.": `Runner.run_streamed(..., previous_response_id=first.last_response_id)`. The API holds turn 1,
   so the SDK sends only the new items (the reply, then the function call's output, each call chained to the one
   before); the answer offers to retry the booking.
3. "Yes, please." again, chained the same way (`previous_response_id=second.last_response_id`): `book_hotel`
   called again, succeeding, and the answer.
4. `Runner.run(..., conversation_id=…)` on a conversation made by the Conversations API (`conversations.create()`):
   a new trip's question, the SDK naming the conversation (`conversation=`) and sending only the new item.

Why: with server-side state an LLM call's input is not the history but what the model is shown anew; the
trajectory must still hold each question (the second "Yes, please." too), every step, each tool result on its
call, nothing of an earlier turn twice. Every function call is scripted with the two ids the real Responses API
gives it (`with_api_call_ids`): its `call_id` (`call_…`, which the `function_call_output` the SDK sends back names)
and its item's own `id` (`fc_…`); with server state the output is sent without its call, so only the `call_id`
ties the two. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-server-conversation-1"
REPLIES = with_api_call_ids([
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "The booking failed, so nothing is booked yet. Oslo is rainy, 9°C. "
             "Shall I check Bergen too?"},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "Bergen is windy at 7°C. Shall I try the Oslo booking again?"},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42)."},
    {"text": "Pack layers: Paris in spring runs from 8°C to 20°C."},
], SESSION)
WEATHER = {"Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Yes, please.", "Yes, please.",
             "New trip: any tips for Paris in spring?"]
PACKAGES = ["openai-agents", "openai", "openinference-instrumentation-openai-agents", "openinference-instrumentation",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION,
                   notes="four turns of one session in one trace (trace(group_id=…)) on server-side conversation "
                         "state: Runner.run (parallel tool calls, book_hotel raising once); 'Yes, please.' by "
                         "Runner.run_streamed with previous_response_id=first.last_response_id; 'Yes, please.' again "
                         "chained the same way (book_hotel called again); Runner.run with conversation_id from "
                         "conversations.create(). With server state the SDK sends only the new items"
                         "; function_call item ids (fc_) distinct from their call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, Runner, function_tool, trace
        from openai import AsyncOpenAI
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

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

        desk = Agent(name="Travel desk", model="gpt-4o", instructions="You book hotels and check the weather.",
                     tools=[book_hotel, get_weather])

        async def run() -> None:
            with using_session(SESSION), trace("Travel desk conversation", group_id=SESSION):
                first = await Runner.run(desk, QUESTIONS[0])
                second = Runner.run_streamed(desk, QUESTIONS[1], previous_response_id=first.last_response_id)
                async for _event in second.stream_events():
                    pass
                third = await Runner.run(desk, QUESTIONS[2], previous_response_id=second.last_response_id)
                conversation = await AsyncOpenAI().conversations.create()
                fourth = await Runner.run(desk, QUESTIONS[3], conversation_id=conversation.id)
            print(first.final_output, second.final_output, third.final_output, fourth.final_output, sep="\n")

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
