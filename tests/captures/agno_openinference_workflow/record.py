"""Re-record: an Agno Workflow (a research Agent step, then a writer Agent step) on OpenAIChat, traced by OpenInference.

    python3 -m venv /tmp/cap-agno_openinference_workflow && /tmp/cap-agno_openinference_workflow/bin/pip install \
        agno==3.1.10 openai==3.63.0 openinference-instrumentation-agno==1.0.15 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agno_openinference_workflow/bin/python tests/captures/agno_openinference_workflow/record.py

One `Workflow` (an in-memory db) of two `Step`s, as Agno's workflow docs build one: `research`, an Agent with
two tools, and `write`, an Agent with none, which writes from the research step's output (Agno hands a step
the previous step's content as its input). Run twice in one session (`workflow.run(…, session_id=…)`, as
Agno's docs pass it; the instrumentor records it on the workflow span only). The first run's researcher
calls both tools in one answer (parallel): the flight tool raises the first time (Agno hands the model the
exception's text), the researcher says a word and calls it again, then answers; the writer writes the brief.
The second run is streamed (`stream=True`: the workflow, its steps and the agents' model calls all stream):
the researcher calls one tool and answers, the writer writes. Seven LLM calls, each run a trace of its own.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agno-oi-workflow-1"
REPLIES = [
    # run 1, step `research`: both tools in one answer; find_flight raises, then is called again
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "find_flight", "arguments": {"origin": "Paris", "destination": "Oslo"}}]},
    {"text": "The booking system was busy; trying again.",
     "tool_calls": [{"name": "find_flight", "arguments": {"origin": "Paris", "destination": "Oslo"}}]},
    {"text": "Oslo: rainy, 9°C. Flight SK832, Paris 08:15 -> Oslo 10:35."},
    # run 1, step `write`
    {"text": "Trip brief: fly SK832 from Paris at 08:15, land in Oslo at 10:35; pack a raincoat (9°C, rain)."},
    # run 2 (streamed), step `research`
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"text": "Bergen: windy, 7°C."},
    # run 2, step `write`
    {"text": "Trip brief: Bergen is windy at 7°C; bring a warm jacket."},
]
WEATHER = {"Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openinference",
                   packages=["agno", "openai", "openinference-instrumentation-agno", "openinference-instrumentation",
                             "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="a Workflow of two agent Steps (research with two tools, write from its output), run twice "
                         "in one session (session_id= on run), the second streamed; the researcher's parallel "
                         "tool calls, one raising once and called again") as rec:
        rec.env()
        from openinference.instrumentation.agno import AgnoInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-brief"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AgnoInstrumentor().instrument(tracer_provider=provider)

        from agno.agent import Agent
        from agno.db.in_memory import InMemoryDb
        from agno.models.openai import OpenAIChat
        from agno.workflow import Step, Workflow

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

        researcher = Agent(name="researcher", model=model(), tools=[get_weather, find_flight],
                           instructions="Find the weather and a flight. Be terse.", telemetry=False)
        writer = Agent(name="writer", model=model(),
                       instructions="Write a one-line trip brief from the research.", telemetry=False)
        workflow = Workflow(name="trip-brief", db=InMemoryDb(), telemetry=False,
                            steps=[Step(name="research", agent=researcher), Step(name="write", agent=writer)])
        print(workflow.run("Plan a day in Oslo, flying from Paris.", session_id=SESSION).content)
        streamed = ""
        for event in workflow.run("And Bergen: what is the weather?", session_id=SESSION, stream=True):
            content = getattr(event, "content", None)
            if type(event).__name__ == "WorkflowCompletedEvent" and isinstance(content, str):
                streamed = content
        print(streamed)
        rec.flush(provider)


if __name__ == "__main__":
    main()
