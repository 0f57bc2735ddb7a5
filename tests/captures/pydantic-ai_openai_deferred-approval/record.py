"""Re-record: a pydantic-ai agent on an OpenAI reasoning model asking a person to approve its tool calls, instrumented
by pydantic-ai itself.

    python3 -m venv /tmp/cap-pydantic-ai_openai_deferred-approval && \
        /tmp/cap-pydantic-ai_openai_deferred-approval/bin/pip install \
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 genai-prices==0.2.5 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pydantic-ai_openai_deferred-approval/bin/python \
        tests/captures/pydantic-ai_openai_deferred-approval/record.py

Pydantic AI's human in the loop ("deferred tools"): two tools registered with `requires_approval=True`, the agent's
`output_type` `[str, DeferredToolRequests]`. Three runs of one conversation (`conversation_id`), each its own trace,
on the Responses API (`OpenAIResponsesModel("gpt-6.1-terra")`, the model pydantic-ai's deprecation table recommends
over gpt-5-mini) with pydantic-ai's unified thinking settings (`thinking="low"`, `thinking_summary=True`: sent as
`reasoning: {effort: "low", summary: "auto"}`, recorded as each request's `model_request_parameters.thinking`, and as
a "Model settings changed" system message in the history no model is sent): every answer opens with a reasoning item
(its own summary per call) and reports its reasoning tokens; pydantic-ai keeps each as a `ThinkingPart` and re-sends
it in the history of every later call.

Run one (`agent.run`): the model calls `cancel_booking` and `book_room` in parallel; both need approval, so neither
runs and the run ends with `DeferredToolRequests` (two `approvals`). The application asks the person, who approves
the cancellation and denies the booking with a message (`ToolDenied`). Run two (`agent.run` with no new prompt,
`message_history=` run one's `all_messages()`, `deferred_tool_results=DeferredToolResults(approvals={...})`): the
approved `cancel_booking` runs, the model is shown its return and the denial's message as the two calls' results,
and answers. Run three (`agent.run_stream`, every request streamed): a second question; `get_forecast` raises
`ModelRetry` on a day name, the model asks again with a date, then answers, streamed as text. Five LLM calls.
Instrumented per agent with the `Instrumentation` capability, as pydantic-ai's docs show. (The versions the capture
was recorded with are in meta.json: pip freeze gave pydantic-ai-slim and pydantic-graph 2.78.0, pydantic 2.14.4,
openai 3.63.0, genai-prices 0.2.5, opentelemetry-api/-sdk/-exporter-otlp-proto-http 1.45.2.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-deferred-approval-1"
CANCEL = {"id": "call_cancel_cp1042", "item_id": "fc_cancel_cp1042"}
BOOK = {"id": "call_book_sol", "item_id": "fc_book_sol"}
DENIAL = "Ana wants to compare prices first: do not book Hotel Sol now."
REPLIES = [
    {"reasoning": "Two changes, both needing Ana's approval: cancel CP-1042 and book Hotel Sol for 11 December. "
                  "I ask for both at once.",
     "tool_calls": [{"name": "cancel_booking", "arguments": {"reference": "CP-1042"}, **CANCEL},
                    {"name": "book_room", "arguments": {"hotel": "Hotel Sol", "date": "2026-12-11"}, **BOOK}],
     "input_tokens": 310, "output_tokens": 92, "reasoning_tokens": 41},
    {"reasoning": "The cancellation went through with a refund; the booking was denied because Ana wants to compare "
                  "prices, so I book nothing and say so.",
     "text": "Your Casa Prado booking CP-1042 is cancelled and the 240 EUR refund is on its way. I did not book "
             "Hotel Sol: you want to compare prices first.",
     "input_tokens": 455, "output_tokens": 88, "reasoning_tokens": 36},
    {"reasoning": "Ana asks about Friday's weather in Madrid: I ask the forecast tool for Friday.",
     "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Madrid", "date": "Friday"},
                     "id": "call_forecast_friday", "item_id": "fc_forecast_friday"}],
     "input_tokens": 540, "output_tokens": 47, "reasoning_tokens": 22},
    {"reasoning": "The forecast tool wants an ISO date; this Friday is 2026-12-11.",
     "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Madrid", "date": "2026-12-11"},
                     "id": "call_forecast_1211", "item_id": "fc_forecast_1211"}],
     "input_tokens": 610, "output_tokens": 44, "reasoning_tokens": 19},
    {"reasoning": "Sunny and 17 degrees on Friday; Hotel Sol is still unbooked, which she should know.",
     "text": "Friday in Madrid looks sunny, 17°C. Hotel Sol is not booked yet: tell me when you want me to book it.",
     "input_tokens": 680, "output_tokens": 61, "reasoning_tokens": 25},
]
FORECAST = {("Madrid", "2026-12-11"): "sunny, 17°C"}


async def conversation(rec: Recording) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent, DeferredToolRequests, DeferredToolResults, ModelRetry, ToolDenied
    from pydantic_ai.capabilities.instrumentation import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIResponsesModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_ai.settings import ModelSettings

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-booking-desk"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    settings = InstrumentationSettings(tracer_provider=provider)
    model = OpenAIResponsesModel("gpt-6.1-terra", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
    agent = Agent(model, name="booking_desk", output_type=[str, DeferredToolRequests],
                  instructions="You manage hotel bookings for the guest. Changing a booking needs their approval.",
                  model_settings=ModelSettings(thinking="low", thinking_summary=True),
                  capabilities=[Instrumentation(settings=settings)])

    @agent.tool_plain(requires_approval=True)
    def cancel_booking(reference: str) -> str:
        """Cancel a booking by its reference."""
        return f"Booking {reference} at Casa Prado cancelled; a refund of 240 EUR is on its way."

    @agent.tool_plain(requires_approval=True)
    def book_room(hotel: str, date: str) -> str:
        """Book a room at a hotel for one night."""
        raise AssertionError("denied in this scenario: never run")

    @agent.tool_plain
    def get_forecast(city: str, date: str) -> str:
        """The weather forecast for a city on a date (YYYY-MM-DD)."""
        if (city, date) not in FORECAST:
            raise ModelRetry(f"No forecast for {date!r}: give the date as YYYY-MM-DD.")
        return FORECAST[(city, date)]

    # Run one: the model asks for two changes; both need approval, so the run ends asking for it.
    first = await agent.run("I'm Ana Silva. Cancel my Casa Prado booking CP-1042 and book Hotel Sol in Madrid for "
                            "Friday 11 December instead.", conversation_id=SESSION)
    requests = first.output
    assert isinstance(requests, DeferredToolRequests), requests
    print("approval asked for:", [(call.tool_name, call.args) for call in requests.approvals])

    # The person's decisions: the cancellation approved, the booking denied with what the model is to be told.
    decisions = DeferredToolResults()
    for call in requests.approvals:
        decisions.approvals[call.tool_call_id] = True if call.tool_name == "cancel_booking" else ToolDenied(DENIAL)

    # Run two: carried on with the decisions, no new prompt.
    second = await agent.run(message_history=first.all_messages(), deferred_tool_results=decisions,
                             conversation_id=SESSION)
    print(second.output)

    # Run three: a second question, streamed; the forecast tool raises once.
    async with agent.run_stream("And what's the weather in Madrid on Friday?", output_type=str,
                                message_history=second.all_messages(), conversation_id=SESSION) as result:
        async for delta in result.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "pydantic-graph", "pydantic", "openai", "genai-prices",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="OpenAI Responses (gpt-6.1-terra, ModelSettings(thinking='low', thinking_summary=True)) with "
                         "a reasoning item and reasoning tokens on every call, re-sent in history; two tools "
                         "requires_approval=True, "
                         "output_type [str, DeferredToolRequests]; run one: parallel cancel_booking and book_room, "
                         "the run ends with DeferredToolRequests; run two (no prompt, message_history, "
                         "deferred_tool_results): cancel approved and run, book denied with ToolDenied(message), "
                         "then the answer; run three run_stream: get_forecast raising ModelRetry once, asked again, "
                         "the answer streamed") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
