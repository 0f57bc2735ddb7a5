"""Re-record: a smolagents ToolCallingAgent managing another agent, traced by OpenInference.

    python3 -m venv /tmp/cap-smol && /tmp/cap-smol/bin/pip install \
        smolagents==1.26.0 openai==3.57.0 openinference-instrumentation-smolagents==0.1.43 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-smol/bin/python tests/captures/smolagents_openinference/record.py

The manager (OpenAIServerModel against the fake LLM) hands a task to its managed agent, which
calls a tool twice in parallel and gives its final answer; the manager then calls a tool that
fails, and answers. smolagents sends tool calls and results as messages of roles `tool-call` /
`tool-response`. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "smol-oi-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "weather_agent", "arguments": {"task": "Find the weather in Paris and Oslo."}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "Paris: sunny, 21°C. Oslo: rainy, 9°C."}}]},
    {"tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Atlantis"}}]},
    {"tool_calls": [{"name": "final_answer",
                     "arguments": {"answer": "Paris is sunny (21°C), Oslo rainy (9°C); no flights to Atlantis."}}]},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="smolagents", instrumentation="openinference",
                   packages=["smolagents", "openai", "openinference-instrumentation-smolagents", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="ToolCallingAgent with a managed agent (parallel tool calls inside it), then a "
                         "failing tool call") as rec:
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

        @tool
        def lookup_flight(city: str) -> str:
            """Flights to a city.

            Args:
                city: the destination
            """
            raise ValueError(f"no airport in {city}")

        model = OpenAIServerModel(model_id="gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        weather = ToolCallingAgent(tools=[get_weather], model=model, name="weather_agent",
                                   description="Finds the weather in cities.", max_steps=4)
        manager = ToolCallingAgent(tools=[lookup_flight], model=model, managed_agents=[weather], max_steps=4)
        with using_session(SESSION):
            print(manager.run("Weather in Paris and Oslo, and a flight to Atlantis?"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
