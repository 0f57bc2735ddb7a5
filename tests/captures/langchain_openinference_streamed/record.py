"""Re-record: a LangChain 1.x create_agent streamed (`agent.stream`, ChatOpenAI(streaming=True)),
traced by OpenInference.

    python3 -m venv /tmp/cap-langchain && /tmp/cap-langchain/bin/pip install \
        langchain==1.5.2 langgraph==1.2.24 langchain-openai==1.7.4 \
        openinference-instrumentation-langchain==0.1.80 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langchain/bin/python tests/captures/langchain_openinference_streamed/record.py

The run: one tool call, then the answer, both streamed token by token with usage asked for
(`stream_usage=True`). (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lc-oi-streamed-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Oslo is rainy today, 9°C: take an umbrella."},
]


def run(rec: Recording) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4o", base_url=rec.base_url, api_key="sk-fake", streaming=True, stream_usage=True)

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return "rainy, 9°C"

    agent = create_agent(model, tools=[get_weather], system_prompt="You are a terse weather assistant.",
                         name="weather_agent")
    for _ in agent.stream({"messages": [{"role": "user", "content": "Weather in Oslo?"}]}, stream_mode="messages"):
        pass


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langchain", instrumentation="openinference",
                   packages=["langchain", "langchain-core", "langgraph", "langchain-openai",
                             "openinference-instrumentation-langchain", "opentelemetry-sdk"],
                   session_id=SESSION, notes="streamed: agent.stream(stream_mode='messages'), a tool call") as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        with using_session(SESSION):
            run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
