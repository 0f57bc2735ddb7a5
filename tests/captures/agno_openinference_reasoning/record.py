"""Re-record: an Agno Agent on Claude with extended thinking, two turns of one session, traced by OpenInference.

    python3 -m venv /tmp/cap-agno_openinference_reasoning && \
        /tmp/cap-agno_openinference_reasoning/bin/pip install \
        agno==3.1.10 anthropic==2.17.0 openinference-instrumentation-agno==1.0.15 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agno_openinference_reasoning/bin/python tests/captures/agno_openinference_reasoning/record.py

One Agent on `agno.models.anthropic.Claude(id="claude-sonnet-4-6", thinking={"type": "enabled", "budget_tokens":
2048})`, as Agno's docs show extended thinking, with the interleaved-thinking beta (`betas=`) so that the model
thinks after tool results too, and an effort (`output_config={"effort": "medium"}`, which Sonnet 4.6 takes beside
the thinking budget and Agno's Claude sends as given); an in-memory db and `add_history_to_context` keep the
session's history, and Agno's own `session_id` ties the two turns (each `agent.run` a trace of its own). Every
answer starts with a `thinking` block (distinct text per call, a signature) and reports how many of its output
tokens were thinking (`usage.output_tokens_details.thinking_tokens`, which Agno's Claude does not read); Agno keeps
the thinking as the message's `reasoning_content` and re-sends it as a `thinking` block in the next request's
history.

Turn one (`agent.run`): the model asks the weather in Paris and Oslo in parallel (one answer, two `tool_use`
blocks); the Oslo lookup raises once (the weather service times out; Agno hands the model the exception's text as
the tool result, with no `is_error`), so the model says it retries and asks again, which answers; then it answers.
Turn two (`agent.run(..., stream=True)`, read to the end: `thinking_delta` and `signature_delta` events before the
text and the tool input) asks for a flight to Oslo: one tool call, then the answer. Five model calls. These are the
newest releases on PyPI (agno 3.1.10, anthropic 2.17.0, openinference-instrumentation-agno 1.0.15); the versions
recorded are in meta.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agno-oi-thinking-1"
QUESTIONS = ["Weather in Paris and Oslo?", "And a flight to Oslo?"]
REPLIES = [
    {"reasoning": "Two cities, two independent lookups: ask both at once.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 80, "reasoning_tokens": 30},
    {"reasoning": "Paris answered; the Oslo lookup timed out, which is worth one retry.",
     "text": "The Oslo lookup timed out; trying again.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 72, "reasoning_tokens": 34},
    {"reasoning": "Both cities known now: Paris sunny at 21, Oslo rainy at 9.",
     "text": "Paris: sunny, 21°C. Oslo: rainy, 9°C.",
     "output_tokens": 60, "reasoning_tokens": 27},
    {"reasoning": "A flight to Oslo: the flight tool, no guessing a number.",
     "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Oslo"}}],
     "output_tokens": 48, "reasoning_tokens": 25},
    {"reasoning": "SK4035 leaves at 09:10: give the number and the time.",
     "text": "Flight SK4035 to Oslo leaves at 09:10.",
     "output_tokens": 56, "reasoning_tokens": 28},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
PACKAGES = ["agno", "anthropic", "openinference-instrumentation-agno", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION,
                   notes="Claude extended thinking (budget_tokens 2048, interleaved-thinking beta, effort medium), "
                         "thinking on every call and re-sent in the history: two turns of one Agno session, the first "
                         "parallel tool calls with one raising (a timeout, retried), the second streamed "
                         "(run stream=True)") as rec:
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
        from agno.models.anthropic import Claude

        timed_out: set[str] = set()

        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            if city == "Oslo" and city not in timed_out:  # the weather service's first Oslo lookup times out
                timed_out.add(city)
                raise TimeoutError(f"weather service timed out for {city}")
            return WEATHER[city]

        def lookup_flight(city: str) -> str:
            """Flights to a city.

            Args:
                city: the destination
            """
            return f"SK4035 to {city}, departs 09:10"

        model = Claude(id="claude-sonnet-4-6", thinking={"type": "enabled", "budget_tokens": 2048},
                       output_config={"effort": "medium"}, betas=["interleaved-thinking-2025-05-14"])
        agent = Agent(name="trip-planner", model=model, tools=[get_weather, lookup_flight],
                      instructions="You are a terse trip planner.", db=InMemoryDb(), add_history_to_context=True,
                      session_id=SESSION, telemetry=False)
        print(agent.run(QUESTIONS[0]).content)
        # The streamed run's events: its answer's text comes in `RunContent` deltas.
        print("".join(str(event.content) for event in agent.run(QUESTIONS[1], stream=True)
                      if getattr(event, "event", "") == "RunContent" and event.content))
        rec.flush(provider)


if __name__ == "__main__":
    main()
