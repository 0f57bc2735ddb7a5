"""The openai-agents travel desk: the scenario of the `openai-agents_otel-genai*` and `openai-agents_openlit` captures
(and, its agents on a Claude model through LiteLLM, of `openai-agents_openinference_litellm*`).

Their `record.py` scripts hold the session id, the instrumentation and what else differs (the Chat Completions
API, one agent or a handoff); this module holds what they share: the two function tools (`get_weather` from
`WEATHER`; `book_hotel`, which raises `TimeoutError` the first time it is called, so the SDK sends the model its
failure_error_function's text), the agents, the two turns of one session, and the model's answers for the handoff
scenario (`HANDOFF_REPLIES`):

    with Recording(capture_dir, HANDOFF_REPLIES, framework="openai-agents", instrumentation=…, …) as rec:
        ... instrument openai-agents, exporting to the recorder ...
        run_turns(travel_desk(handoff=True), SESSION, turn)   # turn(): a context each turn runs in
        rec.flush(provider)

`travel_desk(handoff=True)`: a travel desk that hands hotel bookings to a booking agent holding the tools;
`handoff=False`: one travel desk holding them (`settings`: more `Agent` arguments for the agent with the tools).
`run_turns`: the history kept by an `SQLiteSession`, the thread named by the RunConfig's `group_id` (both the
session id), turn 1 `Runner.run`, turn 2 `Runner.run_streamed` iterated to the end.

`otel_genai_tracing` is the setup of the two captures traced by OpenTelemetry's own GenAI instrumentation
(`opentelemetry-instrumentation-openai-agents-v2`); their record scripts' docstrings say why it is so.

`with_api_call_ids(replies, seed)`: the replies with each tool call given the two ids the Responses API gives a
function call, its `call_id` (`call_…`, which the `function_call_output` sent back names) and the item's own `id`
(`fc_…`), as the real API does. Without it the fake LLM gives both one value, which cannot show an
instrumentation recording one where the other belongs. `openai-agents_otel-genai`, `openai-agents_openinference`,
`openai-agents_openllmetry`, `openai-agents_logfire_no-session` and `openai-agents_openlit` are recorded with it; the
captures that do not ask for it keep the replies they were recorded with. Four Node captures' record scripts take it
too (no framework of this module's): `openai-agents-js_openinference`, `openai-agents-js_openinference_reasoning`,
`mastra_native_network` and `vercel-ai_native_subagent`. So do the openai-agents captures with replies of their own:
`openai-agents_openinference_agents-as-tools`, `_mcp` and `_server-conversation`, and
`openai-agents_otel-genai_server-conversation` and `_reasoning`. So do the other Responses captures first recorded
with one id for both, re-recorded with the same pins: `openai-agents_openinference_reasoning` and `_prompt-cache`,
`langgraph_openinference_openai-reasoning`, `openai-sdk_openlit_reasoning` and `vercel-ai_otel-genai`.

Standard library only, like the rest of `recording/` (openai-agents and the instrumentation are imported inside the
functions: they are installed only in each capture's throwaway venv). Call the functions after the instrumentation
is set up: OpenLIT's makes a span of every `Agent(...)`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
from collections.abc import Callable
from typing import Any

from .session import Recording

# The handoff scenario's model answers (`travel_desk(handoff=True)`): turn 1 hands off, calls both tools in parallel,
# calls book_hotel again after its failure and answers; turn 2 hands off, asks the weather and answers.
HANDOFF_REPLIES = [
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
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Is Bergen warmer?"]
OTEL_GENAI_PACKAGES = ["openai-agents", "openai", "opentelemetry-instrumentation-openai-agents-v2",
                       "opentelemetry-util-genai", "opentelemetry-sdk"]

Turn = Callable[[], contextlib.AbstractContextManager[Any]]


def with_api_call_ids(replies: list[dict[str, Any]], seed: str) -> list[dict[str, Any]]:
    """`replies` (unchanged) copied with every tool call scripted with a `call_id` and an item id of its own, made
    up the API's way (`call_` and 24 letters and digits, `fc_` and 48 hex digits) from `seed`, the reply's position
    and the call's: distinct, and the same at every recording."""
    scripted: list[dict[str, Any]] = []
    for index, reply in enumerate(replies):
        calls = []
        for position, call in enumerate(reply.get("tool_calls", ())):
            digest = hashlib.sha256(f"{seed}/{index}/{position}".encode()).hexdigest()
            calls.append({**call, "id": f"call_{digest[:24]}", "item_id": f"fc_{digest[16:64]}"})
        scripted.append({**reply, "tool_calls": calls} if calls else dict(reply))
    return scripted


def travel_tools() -> list[Any]:
    """`book_hotel` (raising once) and `get_weather`, as openai-agents function tools."""
    from agents import function_tool

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

    return [book_hotel, get_weather]


def travel_desk(*, handoff: bool, **settings: Any) -> Any:
    """The agent each turn starts from, the tools on the booking agent it hands off to (`handoff`) or on itself."""
    from agents import Agent

    booker = {"model": "gpt-4o", "instructions": "You book hotels and check the weather.", "tools": travel_tools(),
              **settings}
    if not handoff:
        return Agent(name="Travel desk", **booker)
    booking = Agent(name="Booking agent", **booker)
    return Agent(name="Travel desk", model="gpt-4o", instructions="You answer travel questions; "
                 "hand hotel bookings to the booking agent.", handoffs=[booking])


def run_turns(desk: Any, session_id: str, turn: Turn = contextlib.nullcontext) -> None:
    """Ask `QUESTIONS` of `desk` in one session (`Runner.run`, then `Runner.run_streamed`), each inside `turn()`."""
    from agents import RunConfig, Runner, SQLiteSession

    memory = SQLiteSession(session_id)
    config = RunConfig(group_id=session_id)

    async def run() -> None:
        with turn():
            first = await Runner.run(desk, QUESTIONS[0], session=memory, run_config=config)
        with turn():
            second = Runner.run_streamed(desk, QUESTIONS[1], session=memory, run_config=config)
            async for _event in second.stream_events():
                pass
        print(first.final_output, second.final_output, sep="\n")

    asyncio.run(run())


def otel_genai_tracing(rec: Recording, session_id: str) -> tuple[Any, Turn]:
    """openai-agents instrumented by `opentelemetry-instrumentation-openai-agents-v2` exporting to `rec`: the
    tracer provider (for `rec.flush`) and the `turn` for `run_turns`, an application span carrying
    `gen_ai.conversation.id` (the instrumentation records no session)."""
    rec.env()
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    from agents import set_trace_processors
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

    def turn() -> contextlib.AbstractContextManager[Any]:
        return tracer.start_as_current_span("travel-desk turn", attributes={"gen_ai.conversation.id": session_id})

    return provider, turn
