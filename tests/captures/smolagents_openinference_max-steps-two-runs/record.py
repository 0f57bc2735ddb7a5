"""Re-record: a smolagents ToolCallingAgent hitting max_steps, then asked again with reset=False.

    python3 -m venv /tmp/cap-smol && /tmp/cap-smol/bin/pip install \
        smolagents==1.26.0 openai==3.57.0 openinference-instrumentation-smolagents==0.1.43 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-smol/bin/python tests/captures/smolagents_openinference_max-steps-two-runs/record.py

Run one (max_steps=2) calls a tool on each step without answering; smolagents then asks the model
once more, with a prompt of its own, for a final answer from its memory. Run two continues the same
memory (`reset=False`: the first run's steps are re-sent) with a tool call and `final_answer`.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "smol-oi-max-steps-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris is sunny at 21°C and Oslo rainy at 9°C; I ran out of steps before Bergen."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}]},
    {"tool_calls": [{"name": "final_answer", "arguments": {"answer": "Bergen is windy at 7°C."}}]},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="smolagents", instrumentation="openinference",
                   packages=["smolagents", "openai", "openinference-instrumentation-smolagents", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="ToolCallingAgent: run one hits max_steps (smolagents' own final-answer call), run two "
                         "continues its memory (reset=False)") as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
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

        model = OpenAIServerModel(model_id="gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        agent = ToolCallingAgent(tools=[get_weather], model=model, max_steps=2)
        with using_session(SESSION):
            print(agent.run("Weather in Paris, Oslo and Bergen?"))
            print(agent.run("And Bergen?", reset=False))
        rec.flush(provider)


if __name__ == "__main__":
    main()
