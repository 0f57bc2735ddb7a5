"""Re-record: an Agno Team (a leader delegating to two member agents) on OpenAIChat, traced by OpenInference.

    python3 -m venv /tmp/cap-agno && /tmp/cap-agno/bin/pip install \
        agno==3.1.10 openai==3.63.0 openinference-instrumentation-agno==1.0.15 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agno/bin/python tests/captures/agno_openinference_team/record.py

One `Team` (coordinate mode, an in-memory db, Agno's own `session_id`) with two member Agents,
each with a tool of its own. The leader's first answer calls `delegate_task_to_member` twice in
one answer (weather-agent, then flight-agent; `team.run` runs them one after the other). The
weather member calls its tool and answers; the flight member's tool raises the first time (Agno
hands the model the exception's text), the member calls it again and answers; the leader, shown
both members' answers as its delegation calls' results, answers. (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agno-oi-team-1"
REPLIES = [
    # the leader
    {"tool_calls": [{"name": "delegate_task_to_member",
                     "arguments": {"member_id": "weather-agent", "task": "The weather in Oslo."}},
                    {"name": "delegate_task_to_member",
                     "arguments": {"member_id": "flight-agent", "task": "A flight from Paris to Oslo."}}]},
    # weather-agent
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Oslo: rainy, 9°C."},
    # flight-agent: its tool raises once, it tries again
    {"tool_calls": [{"name": "find_flight", "arguments": {"origin": "Paris", "destination": "Oslo"}}]},
    {"text": "The booking system was busy; trying again.",
     "tool_calls": [{"name": "find_flight", "arguments": {"origin": "Paris", "destination": "Oslo"}}]},
    {"text": "SK832, Paris 08:15 -> Oslo 10:35."},
    # the leader
    {"text": "Oslo is rainy at 9°C. Take SK832 from Paris at 08:15, landing 10:35."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openinference",
                   packages=["agno", "openai", "openinference-instrumentation-agno", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="a Team leader delegating to two member agents in one answer (two "
                         "delegate_task_to_member calls); one member's tool raises once and is called again") as rec:
        rec.env()
        from openinference.instrumentation.agno import AgnoInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-team"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AgnoInstrumentor().instrument(tracer_provider=provider)

        from agno.agent import Agent
        from agno.db.in_memory import InMemoryDb
        from agno.models.openai import OpenAIChat
        from agno.team import Team

        def model() -> OpenAIChat:
            return OpenAIChat(id="gpt-4o", base_url=rec.base_url, api_key="sk-fake")

        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            return WEATHER[city]

        attempts: list[str] = []

        def find_flight(origin: str, destination: str) -> str:
            """A flight between two cities.

            Args:
                origin: the city to leave from
                destination: the city to fly to
            """
            attempts.append(destination)
            if len(attempts) == 1:
                raise TimeoutError("booking system busy, try again")
            return f"SK832, {origin} 08:15 -> {destination} 10:35"

        weather = Agent(name="weather-agent", role="Finds the weather in cities.", model=model(),
                        tools=[get_weather], instructions="You are terse.", telemetry=False)
        flights = Agent(name="flight-agent", role="Finds flights.", model=model(),
                        tools=[find_flight], instructions="You are terse.", telemetry=False)
        team = Team(name="trip-team", members=[weather, flights], model=model(),
                    instructions="You plan trips: ask your members, then answer tersely.",
                    db=InMemoryDb(), session_id=SESSION, telemetry=False)
        print(team.run("Weather in Oslo, and a flight there from Paris?").content)
        rec.flush(provider)


if __name__ == "__main__":
    main()
