"""Re-record: openai-agents (Responses API) human-in-the-loop tool approval on a reasoning model, traced by
OpenInference.

    python3 -m venv /tmp/cap-openai-agents_openinference_approval
    /tmp/cap-openai-agents_openinference_approval/bin/pip install \
        openai-agents==0.24.0 openai==3.63.0 openinference-instrumentation-openai-agents==2.6.0 \
        openinference-instrumentation==0.1.72 opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-agents_openinference_approval/bin/python \
        tests/captures/openai-agents_openinference_approval/record.py

The newest releases of each (openai is the version pip resolved). One travel desk agent on `o4-mini` with
`ModelSettings(reasoning=Reasoning(effort="medium", summary="auto"))` holding two function tools: `book_hotel`,
declared `@function_tool(needs_approval=True)` as the SDK's human-in-the-loop guide shows (a booking spends the
traveller's money), and `get_weather`, needing no approval, which raises `TimeoutError` the first time it is called
(the SDK sends the model its failure_error_function's text). The instrumentor set up as its README shows, the session
named by `using_session` around each run (as the other `openai-agents_openinference*` captures: the instrumentation
reads no `group_id`), the history kept by the SDK's `SQLiteSession`, the RunConfig's `group_id` the same id:

1. `Runner.run`: "Book me a hotel in Oslo for 2 nights and one in Bergen for 1 night, and what's the weather in
   Oslo?" The model reasons, then calls `book_hotel` twice and `get_weather` in parallel. `get_weather` runs (and
   fails); both bookings need approval, so the run stops with two `result.interruptions`. The app keeps the paused
   run as the guide does (`result.to_state().to_string()`, as if stored until the traveller answers).
2. The traveller's decisions, later: the state restored (`RunState.from_string`), the Oslo booking approved
   (`state.approve`), the Bergen one rejected with a message for the model (`state.reject(..., rejection_message=)`),
   and the run resumed with `Runner.run(desk, state)` (the same session). The SDK books Oslo, sends the model the
   rejection message as the Bergen call's output; the model reasons, retries `get_weather`, reasons and answers.
3. `Runner.run_streamed`: "Is Bergen warmer?" The SDK re-sends the earlier items from the session, reasoning items
   among them; the model reasons, asks Bergen's weather (no approval needed), reasons and answers, streamed.

Every call answers with a `reasoning` item (its own `summary_text`) before its text or function calls and reports
its reasoning tokens; every function call is scripted with the Responses API's two ids (`with_api_call_ids`). Why: a
run that stops to ask a person is a conversation with a person in it: what the agent asked approval for, what the
person decided, the approved call's result on it and the rejected call answered with what the model was told, with
nothing shown twice where the resumed run carries the first run's items again. (The versions the capture was recorded
with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.openai_agents_travel import WEATHER, with_api_call_ids
from tests.captures.recording.session import Recording

SESSION = "oa-oi-approval-1"
MODEL = "o4-mini"
QUESTIONS = ["Book me a hotel in Oslo for 2 nights and one in Bergen for 1 night, and what's the weather in Oslo?",
             "Is Bergen warmer?"]
# What the traveller tells the model when declining the Bergen booking (`state.reject(..., rejection_message=)`).
BERGEN_DECLINED = "The traveller declined this booking: they will stay with friends in Bergen."
REPLIES = with_api_call_ids([
    # Turn 1: the three calls together; the two bookings stop the run for approval.
    {"reasoning": "Two bookings and a weather lookup, none depending on another: call book_hotel for Oslo and for "
                  "Bergen and get_weather for Oslo together.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "book_hotel", "arguments": {"city": "Bergen", "nights": 1}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 240, "reasoning_tokens": 176},
    # The resumed run: Oslo booked, Bergen declined, the weather timed out.
    {"reasoning": "Oslo is booked (ref OSL-42) and the traveller declined Bergen, so no second booking. The weather "
                  "service timed out: ask it once more.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 142, "reasoning_tokens": 120},
    {"reasoning": "The weather came back rainy at 9°C. Confirm the Oslo booking, say there is no Bergen hotel as "
                  "the traveller asked, and suggest an umbrella.",
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42); no hotel in Bergen, as you declined it. "
             "Oslo: rain, 9°C, so pack an umbrella.",
     "output_tokens": 128, "reasoning_tokens": 88},
    # Turn 2, streamed.
    {"reasoning": "Oslo's 9°C is already in the conversation; to compare I need Bergen's weather.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "output_tokens": 80, "reasoning_tokens": 56},
    {"reasoning": "Bergen is 7°C and windy against Oslo's 9°C: colder, so the answer is no.",
     "text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C.",
     "output_tokens": 90, "reasoning_tokens": 72},
], SESSION)
PACKAGES = ["openai-agents", "openai", "openinference-instrumentation-openai-agents", "openinference-instrumentation",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-agents", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION,
                   notes="o4-mini (Reasoning(effort='medium', summary='auto')) travel desk; book_hotel "
                         "@function_tool(needs_approval=True), get_weather (no approval) raising TimeoutError once; "
                         "one SQLiteSession, each run under using_session: Runner.run (three parallel calls: "
                         "get_weather runs and fails, both bookings interrupt), the state kept as a string, restored, "
                         "Oslo approved and Bergen rejected with a rejection_message, resumed with Runner.run(desk, "
                         "state) (Oslo booked, the message sent as Bergen's output, get_weather retried, answer); "
                         "then Runner.run_streamed (get_weather Bergen, answer). Every call answers with a reasoning "
                         "item first and reports reasoning tokens; function_call item ids (fc_) distinct from their "
                         "call_ids (call_)") as rec:
        rec.env()
        from agents import Agent, ModelSettings, RunConfig, Runner, RunState, SQLiteSession, function_tool
        from openai.types.shared import Reasoning
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)  # replaces the SDK's own exporter

        failures = {"get_weather": 1}

        @function_tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            if failures["get_weather"]:
                failures["get_weather"] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return WEATHER[city]

        @function_tool(needs_approval=True)
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel room (charged to the traveller's card)."""
            return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

        desk = Agent(name="Travel desk", model=MODEL, instructions="You book hotels and check the weather.",
                     tools=[book_hotel, get_weather],
                     model_settings=ModelSettings(reasoning=Reasoning(effort="medium", summary="auto")))
        memory = SQLiteSession(SESSION)
        config = RunConfig(group_id=SESSION)

        async def run() -> None:
            with using_session(SESSION):
                paused = await Runner.run(desk, QUESTIONS[0], session=memory, run_config=config)
            asked = paused.interruptions
            if [item.tool_name for item in asked] != ["book_hotel", "book_hotel"]:
                raise RuntimeError(f"expected the two bookings to wait for approval, got {asked}")
            stored = paused.to_state().to_string()  # kept until the traveller answers

            state = await RunState.from_string(desk, stored)
            for item in state.get_interruptions():
                if json.loads(item.arguments or "{}")["city"] == "Oslo":
                    state.approve(item)
                else:
                    state.reject(item, rejection_message=BERGEN_DECLINED)
            with using_session(SESSION):
                first = await Runner.run(desk, state, session=memory, run_config=config)
            if first.interruptions:
                raise RuntimeError(f"the resumed run stopped again: {first.interruptions}")
            print(first.final_output)
            with using_session(SESSION):
                second = Runner.run_streamed(desk, QUESTIONS[1], session=memory, run_config=config)
                async for _event in second.stream_events():
                    pass
            print(second.final_output)

        asyncio.run(run())
        rec.flush(provider)


if __name__ == "__main__":
    main()
