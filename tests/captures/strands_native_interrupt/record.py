"""Re-record: Strands Agents' human in the loop (interrupts), traced by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands_native_interrupt && /tmp/cap-strands_native_interrupt/bin/pip install \
        'strands-agents[openai]==1.65.0' openai==3.63.0 opentelemetry-sdk==1.45.1 \
        opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-strands_native_interrupt/bin/python tests/captures/strands_native_interrupt/record.py

strands-agents 1.65.0 is the newest release, and has interrupts (`strands.interrupt`, `BeforeToolCallEvent.interrupt`,
`ToolContext.interrupt`); its `openai` extra takes openai<4, so openai 3.63.0 (the newest). opentelemetry-sdk and the
exporter 1.45.1 are what pip resolved beside opentelemetry-instrumentation-threading 0.66b1 (which strands-agents
requires), as for the other Strands captures.

Strands' interrupts, as its docs show them (`strands/types/interrupt.py`): a hook on `BeforeToolCallEvent` calls
`event.interrupt(name, reason=…)`, or a tool given its `ToolContext` calls `tool_context.interrupt(name, reason=…)`.
With no answer yet, the agent loop stops: `agent(...)` returns with `stop_reason == "interrupt"` and
`result.interrupts` (each an id, a name, a reason). The app resumes by calling the agent again with a list of
`{"interruptResponse": {"interruptId": …, "response": …}}` blocks; the same `interrupt()` then returns the response.
Strands does not call the model again on resuming: it replays the stopped cycle's tool calls, keeping the results of
those that had finished. A hook that gets a refusal sets `event.cancel_tool` to the message the model is sent.

The session is `trace_attributes={"session.id": …}` on the agent (as `strands_native` sets it); every OpenAIModel
call is streamed; a turn's tools run concurrently (Strands' default ConcurrentToolExecutor).

Turn one (three calls, three `agent(...)` invocations): the model calls `get_weather` and `book_hotel` in parallel;
the weather service times out (the tool raises: Strands sends the model the error's text) and the approval hook stops
the run to ask about the booking. The app approves (`{"decision": "approve"}`): the hotel is booked, and the model,
given both results, calls `get_weather` again and `rent_car` in parallel; the hook stops the run again, and the app
denies the car (`{"decision": "deny", "reason": …}`): the hook cancels the call with a message the model is sent.
The model answers. Turn two (two calls, `stream_async`, its events streamed as they come): the model calls
`book_table`, which asks the person itself (`tool_context.interrupt`) whether to pay a deposit; the app answers
"yes" (resumed with `stream_async` too), the tool books, and the model answers.
(The versions the capture was recorded with are in meta.json.)
"""

# No `from __future__ import annotations`: Strands reads a tool's type hints (`get_type_hints`) against the module's
# globals, and `book_table`'s `ToolContext` is imported inside the Recording, so its annotation must be the class.
import asyncio
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-interrupt-trip-1"
QUESTIONS = ["Two nights in Oslo from Friday: book me a hotel and a car, and what's the weather like?",
             "Also book dinner for two on Friday at 20:00, somewhere near the hotel."]
HOTEL = {"city": "Oslo", "nights": 2}
CAR = {"city": "Oslo", "days": 2}
TABLE = {"city": "Oslo", "people": 2, "time": "Friday 20:00"}
REPLIES: list[dict[str, Any]] = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "book_hotel", "arguments": HOTEL}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "rent_car", "arguments": CAR}]},
    {"text": "Your hotel is booked: Hotel Nord, 2 nights, ref OSL-42. Oslo will be rainy, 8°C. "
             "I did not rent a car, as you asked."},
    {"tool_calls": [{"name": "book_table", "arguments": TABLE}]},
    {"text": "Dinner is booked: Fiskeriet, Friday 20:00 for two, ref T-88 (deposit paid)."},
]
# What the app's person answers each interrupt, by its name.
APPROVE = {"decision": "approve"}
DENY = {"decision": "deny", "reason": "I'll take the tram."}
# What was installed that the spans depend on: the framework and its tracer, the client it calls, the exporter, and
# the threading instrumentation Strands uses to carry the span context into the threads its tools run in.
PACKAGES = ["strands-agents", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http",
            "opentelemetry-api", "opentelemetry-instrumentation-threading", "opentelemetry-semantic-conventions"]


NOTES = ("human in the loop with Strands' interrupts, trace_attributes session.id, every call streamed: turn one "
         "the model calls get_weather (raises once: timed out) and book_hotel in parallel, a BeforeToolCallEvent hook "
         "interrupts for the booking, the app approves; the model calls get_weather again and rent_car, the hook "
         "interrupts, the app denies (cancel_tool's message sent to the model); the model answers. Turn two "
         "(stream_async): book_table asks the person itself (tool_context.interrupt) about a deposit, answered yes, "
         "then the answer")


def run(capture_dir: Path, latest_semconv: bool) -> None:
    """The run, into `capture_dir`; with `latest_semconv`, under the current GenAI conventions
    (`strands_native_interrupt_latest-semconv`)."""
    if latest_semconv:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    notes = NOTES + ("; conventions: gen_ai_latest_experimental" if latest_semconv else "")
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=PACKAGES, session_id=SESSION, notes=notes) as rec:
        rec.env()
        from strands import Agent, ToolContext, tool
        from strands.hooks import BeforeToolCallEvent, HookProvider, HookRegistry
        from strands.models.openai import OpenAIModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()
        timeouts = {"left": 1}  # the weather service times out once

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            if timeouts["left"]:
                timeouts["left"] -= 1
                raise TimeoutError("weather service timed out")
            return {"Oslo": "rainy, 8°C"}[city]

        @tool
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel in a city for a number of nights."""
            return f"Hotel Nord in {city}, {nights} nights, ref OSL-42"

        @tool
        def rent_car(city: str, days: int) -> str:
            """Rent a car in a city for a number of days."""
            return f"Compact car in {city}, {days} days, ref CAR-7"

        @tool(context=True)
        def book_table(city: str, people: int, time: str, tool_context: ToolContext) -> str:
            """Book a restaurant table in a city."""
            answer = tool_context.interrupt("deposit", reason={"message": "Fiskeriet needs a 200 NOK deposit: pay it?",
                                                               "amount": "200 NOK"})
            if answer != "yes":
                return "Not booked: no deposit paid."
            return f"Fiskeriet in {city}, {time} for {people}, ref T-88"

        class BookingApproval(HookProvider):
            """Every booking a person approves first (Strands' docs' `ToolInterruptHook`)."""

            def register_hooks(self, registry: HookRegistry, **kwargs: Any) -> None:
                registry.add_callback(BeforeToolCallEvent, self.approve)

            def approve(self, event: BeforeToolCallEvent) -> None:
                name = event.tool_use["name"]
                if name not in ("book_hotel", "rent_car"):
                    return
                answer = event.interrupt(f"approve_{name}", reason={"tool": name, "input": event.tool_use["input"],
                                                                    "message": f"Approve {name}?"})
                if answer.get("decision") != "approve":
                    event.cancel_tool = f"The traveller declined {name}: {answer.get('reason', 'no reason given')}"

        model = OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id="gpt-4o")
        agent = Agent(model=model, tools=[get_weather, book_hotel, rent_car, book_table], name="travel_desk",
                      hooks=[BookingApproval()], callback_handler=None, trace_attributes={"session.id": SESSION},
                      system_prompt="You are a travel desk. Make one booking per reply.")

        def answers(interrupts: Any) -> list[dict[str, Any]]:
            """The person's answer to each interrupt: the hotel approved, the car denied, the deposit paid."""
            decided = {"approve_book_hotel": APPROVE, "approve_rent_car": DENY, "deposit": "yes"}
            return [{"interruptResponse": {"interruptId": interrupt.id, "response": decided[interrupt.name]}}
                    for interrupt in interrupts]

        result = agent(QUESTIONS[0])
        while result.stop_reason == "interrupt":
            print("interrupted:", [(i.name, i.reason) for i in result.interrupts])
            result = agent(answers(result.interrupts))
        print(result)

        async def streamed(prompt: Any) -> Any:
            final = None
            async for event in agent.stream_async(prompt):
                if "result" in event:
                    final = event["result"]
            return final

        result = asyncio.run(streamed(QUESTIONS[1]))
        while result.stop_reason == "interrupt":
            print("interrupted:", [(i.name, i.reason) for i in result.interrupts])
            result = asyncio.run(streamed(answers(result.interrupts)))
        print(result)
        rec.flush(telemetry.tracer_provider)


def main() -> None:
    run(Path(__file__).parent, latest_semconv=False)


if __name__ == "__main__":
    main()
