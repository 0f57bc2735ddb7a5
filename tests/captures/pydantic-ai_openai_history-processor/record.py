"""Re-record: a pydantic-ai conversation whose history processors trim and summarize it, instrumented by pydantic-ai.

    python3 -m venv /tmp/cap-pai-history && /tmp/cap-pai-history/bin/pip install \
        'pydantic-ai-slim[openai]==2.78.0' openai==3.63.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pai-history/bin/python tests/captures/pydantic-ai_openai_history-processor/record.py

Four runs of one conversation (`conversation_id`), each its own trace, each given the previous run's
`all_messages()`, every agent instrumented with `Agent.instrument_all(InstrumentationSettings(...))`.
pydantic-ai 2.x takes a history processor as a `ProcessHistory` capability (its docs' "Processing Message
History"); a run's capabilities add to the agent's, so each run is given the processor it uses:

- turns 1 to 3 the docs' `keep_recent_messages` (the last four messages; the docs keep five, which would cut
  turn 3's window between a tool call and its return, the pairing the docs warn to keep). It runs before every
  model request and replaces the run's history with what it keeps, so `all_messages()` is the trimmed window and
  the next turn starts from it. Turn 1: two parallel `get_weather` calls, Atlantis's raising `ModelRetry`, the
  answer given around it. Turn 2, streamed (`run_stream`): its request is sent only the last four messages, the
  first question dropped. Turn 3: a `book_hotel` call; each of its requests is sent a window sliding on.
- turn 4 the docs' `summarize_old_messages`: past four messages, a second agent (`summarizer`, its own
  instructions) summarizes all but the last (the docs summarize the oldest ten and send the last message: with
  nothing in between here, nothing is dropped unsummarized), run with that history and no prompt; its
  `new_messages()` (an empty request carrying its instructions, then its answer) and the last message are what
  the model is sent: the summary as an assistant message, then the question. The summarizer's run is traced
  inside turn 4's run, before its model request.

(The versions the capture was recorded with are in meta.json.) No `from __future__ import annotations`:
pydantic-ai resolves a history processor's annotations when it is called, and `ModelMessage` is imported inside
`conversation`, where the virtualenv has it.
"""

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "pai-history-processor-1"
SUMMARY = ("Paris (21°C) was the warmer choice; the user booked two nights at Hotel Lumière in Paris "
           "(confirmation PL-2231).")
REPLIES = [
    # Turn 1.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C. Atlantis has no weather station, so I can't tell you its weather."},
    # Turn 2 (streamed).
    {"text": "Paris: it is the only one of the two with a forecast, and 21°C is warm."},
    # Turn 3.
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Paris", "nights": 2}}]},
    {"text": "Booked: Hotel Lumière in Paris for two nights (confirmation PL-2231)."},
    # Turn 4: the summarizer, then the agent sent its summary.
    {"text": SUMMARY},
    {"text": "You're staying two nights at Hotel Lumière in Paris (confirmation PL-2231), where it is 21°C."},
]
WEATHER = {"Paris": "sunny, 21°C"}
WINDOW = 4


async def conversation(rec: Recording) -> None:
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from pydantic_ai import Agent, ModelMessage, ModelRetry
    from pydantic_ai.capabilities import ProcessHistory
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    provider = TracerProvider(resource=Resource.create({"service.name": "pai-travel-desk"}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    Agent.instrument_all(InstrumentationSettings(tracer_provider=provider))
    model = OpenAIChatModel("gpt-4o", provider=OpenAIProvider(base_url=rec.base_url, api_key="sk-fake"))
    agent = Agent(model, name="travel_desk", instructions="You are a travel desk. Answer tersely.")
    summarizer = Agent(model, name="summarizer", instructions=(
        "Summarize this conversation, omitting small talk and unrelated topics. "
        "Focus on the facts found and the bookings made."))

    @agent.tool_plain
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        if city not in WEATHER:
            raise ModelRetry(f"No weather station in {city}.")
        return WEATHER[city]

    @agent.tool_plain
    def book_hotel(city: str, nights: int) -> str:
        """Book a hotel room."""
        return f"Hotel Lumière, {city}, {nights} nights, confirmation PL-2231"

    async def keep_recent_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        """Keep only the last few messages to manage token usage."""
        return messages[-WINDOW:] if len(messages) > WINDOW else messages

    async def summarize_old_messages(messages: list[ModelMessage]) -> list[ModelMessage]:
        if len(messages) > WINDOW:
            summary = await summarizer.run(message_history=messages[:-1])
            # The summary and the last message (the question being answered).
            return summary.new_messages() + messages[-1:]
        return messages

    trim = [ProcessHistory(keep_recent_messages)]
    first = await agent.run("Weather in Paris and in Atlantis?", conversation_id=SESSION, capabilities=trim)
    print(first.output)
    async with agent.run_stream("Which of the two is warmer?", message_history=first.all_messages(),
                                conversation_id=SESSION, capabilities=trim) as streamed:
        async for delta in streamed.stream_text(delta=True):
            print(delta, end="", flush=True)
        print()
    third = await agent.run("Book me two nights in the warmer one.", message_history=streamed.all_messages(),
                            conversation_id=SESSION, capabilities=trim)
    print(third.output)
    fourth = await agent.run("Remind me what we settled.", message_history=third.all_messages(),
                             conversation_id=SESSION, capabilities=[ProcessHistory(summarize_old_messages)])
    print(fourth.output)
    rec.flush(provider)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="pydantic-ai", instrumentation="pydantic-ai",
                   packages=["pydantic-ai-slim", "openai", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"], session_id=SESSION,
                   notes="four runs continued with message_history under ProcessHistory history processors: turns "
                         "1-3 keep_recent_messages (the last four messages; the model is sent a trimmed window "
                         "from turn 2 on, all_messages() the trimmed window), parallel get_weather calls, one "
                         "raising ModelRetry, turn 2 streamed; turn 4 summarize_old_messages (a summarizer agent's "
                         "run, traced inside the turn, summarizes all but the question; the model is sent the "
                         "summary as an assistant message, then the question)") as rec:
        rec.env()
        asyncio.run(conversation(rec))


if __name__ == "__main__":
    main()
