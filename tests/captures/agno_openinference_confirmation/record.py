"""Re-record: an Agno Agent whose bookings need a person's confirmation, on a reasoning model, traced by OpenInference.

    python3 -m venv /tmp/cap-agno_openinference_confirmation && \
        /tmp/cap-agno_openinference_confirmation/bin/pip install \
        agno==3.1.10 openai==3.63.0 openinference-instrumentation-agno==1.0.15 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agno_openinference_confirmation/bin/python tests/captures/agno_openinference_confirmation/record.py

Agno's human in the loop as its docs show it: `book_hotel` is a `@tool(requires_confirmation=True)`, so a run whose
model calls it pauses (`run_response.is_paused`, one `RunRequirement` per call in `active_requirements`), the
application decides each (`requirement.confirm()` / `requirement.reject(note)`) and carries the run on with
`agent.continue_run(run_id=..., requirements=...)`. The model is `OpenAIResponses(id="gpt-5", reasoning_effort=
"medium", reasoning_summary="auto", store=False)`: every answer starts with a reasoning item whose summary is distinct
per call and reports its reasoning tokens; `store=False` makes Agno re-send the context (each earlier answer's
reasoning item replayed before its text or calls) instead of chaining `previous_response_id`. One Agent, an in-memory
db, `add_history_to_context`, Agno's own `session_id` tying the runs (each `run` / `continue_run` a trace of its own).

Turn one asks to book a hotel in Paris and one in Oslo: the model calls `book_hotel` twice in parallel and the run
pauses; the application confirms Paris and rejects Oslo with a note (Agno hands the model the note as the rejected
call's result), then continues the run: the Paris booking runs, the model answers. Turn two (`run(..., stream=True)`,
read to the end) asks the weather in Paris: the weather service times out once (Agno hands the model the exception's
text), the model retries, then answers. Five model calls. These are the newest releases on PyPI; the versions recorded
are in meta.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agno-oi-confirm-1"
QUESTIONS = ["Book a hotel in Paris and one in Oslo, two nights each.", "What weather will I have in Paris?"]
REJECTION = "Oslo is over this trip's budget: do not book it."
REPLIES = [
    {"reasoning": "Two bookings, independent of each other: ask for both at once.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Paris", "nights": 2}},
                    {"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "output_tokens": 90, "reasoning_tokens": 32},
    {"reasoning": "Paris went through; the person turned Oslo down for budget, so say so and do not retry it.",
     "text": "Hotel Lutetia in Paris is booked for two nights (PAR-2231). I did not book Oslo: it is over budget.",
     "output_tokens": 84, "reasoning_tokens": 36},
    {"reasoning": "Weather for Paris: the weather tool, nothing to guess.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
     "output_tokens": 44, "reasoning_tokens": 22},
    {"reasoning": "The weather service timed out once; one retry is reasonable.",
     "text": "The weather service timed out; trying again.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
     "output_tokens": 58, "reasoning_tokens": 26},
    {"reasoning": "Sunny at 21 degrees: short answer, nothing else needed.",
     "text": "Paris will be sunny, 21°C.",
     "output_tokens": 40, "reasoning_tokens": 24},
]
PACKAGES = ["agno", "openai", "openinference-instrumentation-agno", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION,
                   notes="requires_confirmation tool called twice in parallel: the run pauses, the app confirms "
                         "one call and rejects the other with a note, continue_run; then a streamed turn whose tool "
                         "times out once (retried). OpenAIResponses gpt-5 (effort medium, summaries, store=False): "
                         "reasoning on every call, re-sent in the history") as rec:
        rec.env()
        from openinference.instrumentation.agno import AgnoInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AgnoInstrumentor().instrument(tracer_provider=provider)

        from agno.agent import Agent
        from agno.db.in_memory import InMemoryDb
        from agno.models.openai import OpenAIResponses
        from agno.tools import tool

        timed_out: set[str] = set()

        @tool(requires_confirmation=True)
        def book_hotel(city: str, nights: int) -> str:
            """Book a hotel.

            Args:
                city: the city
                nights: how many nights
            """
            return f"Hotel Lutetia, {city}, {nights} nights: confirmation PAR-2231"

        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            if city not in timed_out:  # the weather service's first lookup of a city times out
                timed_out.add(city)
                raise TimeoutError(f"weather service timed out for {city}")
            return "sunny, 21°C"

        model = OpenAIResponses(id="gpt-5", base_url=rec.base_url, api_key="sk-fake", reasoning_effort="medium",
                                reasoning_summary="auto", store=False)
        agent = Agent(name="trip-planner", model=model, tools=[book_hotel, get_weather],
                      instructions="You are a terse trip planner.", db=InMemoryDb(), add_history_to_context=True,
                      session_id=SESSION, telemetry=False)

        run = agent.run(QUESTIONS[0])
        assert run.is_paused, "the bookings should wait for a confirmation"
        for requirement in run.active_requirements:
            if not requirement.needs_confirmation:
                continue
            city = (requirement.tool_execution.tool_args or {}).get("city") if requirement.tool_execution else None
            if city == "Paris":
                requirement.confirm()
            else:
                requirement.reject(REJECTION)
        run = agent.continue_run(run_id=run.run_id, requirements=run.requirements)
        print(run.content)
        # The streamed run's events: its answer's text comes in `RunContent` deltas.
        print("".join(str(event.content) for event in agent.run(QUESTIONS[1], stream=True)
                      if getattr(event, "event", "") == "RunContent" and event.content))
        rec.flush(provider)


if __name__ == "__main__":
    main()
