"""Re-record: a smolagents ToolCallingAgent that plans (`planning_interval=2`), traced by OpenInference.

    python3 -m venv /tmp/cap-smolagents_openinference_planning && \
        /tmp/cap-smolagents_openinference_planning/bin/pip install \
        smolagents==1.26.0 openai==3.63.0 openinference-instrumentation-smolagents==0.1.43 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-smolagents_openinference_planning/bin/python tests/captures/smolagents_openinference_planning/record.py

With a planning interval, smolagents asks the model for a plan before step 1 and for an updated plan before every
second step after it (`_generate_planning_step`): each an LLM call of its own with a prompt of its own (the
initial plan: one user message, the planning template around the task; an update: a system template, the memory
in summary mode, a user template), its answer kept in memory and re-sent to the action steps as the assistant's
"Here are the facts I know and the plan…" followed by the user's "Now proceed and carry out this plan.".

Run one plans, calls get_weather twice in parallel, then lookup_flight, which raises (a timeout) the first time;
before step 3 it updates its plan, retries the flight and answers with `final_answer`. Run two continues the same
memory (`reset=False`), streamed (`stream_outputs`, read at every step, turned on for it): its first plan is an
update (the memory holds run one), then it answers from memory. The session is OpenInference's `using_session`
around both runs. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "smol-oi-planning-1"
REPLIES = [
    # Run one, before step 1: the initial plan.
    {"text": "## 1. Facts survey\nThe user wants the weather in Paris and Oslo and a flight from Oslo to Paris.\n\n"
             "## 2. Plan\n1. Get the weather in Paris and Oslo.\n2. Look up a flight from Oslo to Paris.\n"
             "3. Give the final answer.\n"},
    # Step 1: both cities at once.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # Step 2: the flight search times out.
    {"tool_calls": [{"name": "lookup_flight", "arguments": {"origin": "Oslo", "destination": "Paris"}}]},
    # Before step 3: the updated plan.
    {"text": "## 1. Updated facts survey\nParis is sunny (21°C), Oslo rainy (9°C); the flight search timed out "
             "once.\n\n## 2. Plan\n1. Retry the flight search from Oslo to Paris.\n2. Give the final answer.\n"},
    # Step 3: the retry.
    {"tool_calls": [{"name": "lookup_flight", "arguments": {"origin": "Oslo", "destination": "Paris"}}]},
    # Step 4: the answer.
    {"tool_calls": [{"name": "final_answer", "arguments": {
        "answer": "Paris is sunny (21°C), Oslo rainy (9°C); flight SK 4711 leaves Oslo at 09:10 for Paris."}}]},
    # Run two (streamed), before its step 1: an update, the memory holding run one.
    {"text": "## 1. Updated facts survey\nParis is 21°C, Oslo 9°C.\n\n## 2. Plan\n1. Compare the two "
             "temperatures and answer.\n"},
    {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "Paris is warmer: 21°C against Oslo's 9°C."}}]},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="smolagents", instrumentation="openinference",
                   packages=["smolagents", "openai", "openinference-instrumentation-smolagents",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="ToolCallingAgent with planning_interval=2: an initial plan, parallel tool calls, a tool "
                         "raising once then retried after an updated plan; run two (reset=False, streamed) plans "
                         "again and answers") as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        SmolagentsInstrumentor().instrument(tracer_provider=provider)

        from smolagents import OpenAIServerModel, ToolCallingAgent, tool

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            return WEATHER[city]

        searches: list[tuple[str, str]] = []

        @tool
        def lookup_flight(origin: str, destination: str) -> str:
            """The next flight between two cities.

            Args:
                origin: the city to fly from
                destination: the city to fly to
            """
            searches.append((origin, destination))
            if len(searches) == 1:
                raise TimeoutError("flight search timed out")
            return f"SK 4711 {origin} 09:10 -> {destination} 11:45"

        model = OpenAIServerModel(model_id="gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        agent = ToolCallingAgent(tools=[get_weather, lookup_flight], model=model, name="trip_planner",
                                 description="Plans trips.", planning_interval=2, max_steps=6)
        with using_session(SESSION):
            print(agent.run("Weather in Paris and Oslo, and a flight from Oslo to Paris?"))
            agent.stream_outputs = True  # read at every step and plan: run two's calls are streamed
            print(agent.run("Which of the two cities is warmer?", reset=False))
        rec.flush(provider)


if __name__ == "__main__":
    main()
