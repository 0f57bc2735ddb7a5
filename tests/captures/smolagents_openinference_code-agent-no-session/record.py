"""Re-record: a smolagents CodeAgent, traced by OpenInference, with no session id (as smolagents users run it).

    python3 -m venv /tmp/cap-smol && /tmp/cap-smol/bin/pip install \
        smolagents==1.26.0 openai==3.57.0 openinference-instrumentation-smolagents==0.1.43 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-smol/bin/python tests/captures/smolagents_openinference_code-agent-no-session/record.py

The model answers in code (`<code>…</code>`): the first step calls a tool from the code, the
second calls `final_answer`. No session id: the trace is the session. (The versions the capture
was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

REPLIES = [
    {"text": "Thought: I will look the weather up.\n<code>\nweather = get_weather(city=\"Paris\")\n"
             "print(weather)\n</code>"},
    {"text": "Thought: I have it.\n<code>\nfinal_answer(\"Paris is sunny, 21°C.\")\n</code>"},
]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="smolagents", instrumentation="openinference",
                   packages=["smolagents", "openai", "openinference-instrumentation-smolagents", "opentelemetry-sdk"],
                   session_id=None, notes="CodeAgent: a tool called from the model's code, then final_answer; "
                                          "no session id") as rec:
        rec.env()
        from openinference.instrumentation.smolagents import SmolagentsInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "code-weather"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        SmolagentsInstrumentor().instrument(tracer_provider=provider)

        from smolagents import CodeAgent, OpenAIServerModel, tool

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city.

            Args:
                city: the city
            """
            return {"Paris": "sunny, 21°C"}[city]

        model = OpenAIServerModel(model_id="gpt-4o", api_base=rec.base_url, api_key="sk-fake")
        agent = CodeAgent(tools=[get_weather], model=model, max_steps=3)
        print(agent.run("What is the weather in Paris?"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
