"""Re-record: a Haystack Agent (OpenAIChatGenerator, two tools), traced by Haystack's own OpenTelemetry tracer.

    python3 -m venv /tmp/cap-haystack && /tmp/cap-haystack/bin/pip install \
        haystack-ai==3.4.1 opentelemetry-haystack==2.0.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-haystack/bin/python tests/captures/haystack_native/record.py

Haystack 3 moved its OpenTelemetry tracer to `opentelemetry-haystack` (`OpenTelemetryTracer`), and records
content only with `HAYSTACK_CONTENT_TRACING_ENABLED=true`. Its spans follow no GenAI convention:
`haystack.agent.run` > `haystack.agent.step` > `haystack.agent.step.llm` (the generator's inputs and
outputs as JSON in `haystack.agent.step.llm.input` / `.output`: Haystack `ChatMessage`s, usage in each
reply's `meta`) and `haystack.agent.step.tool` (`haystack.tool.name`, the arguments and result,
`haystack.tool.error`). The session id is the application's: each turn runs inside its own span carrying
`session.id`, as a user of Haystack would add it. Two turns of one conversation (the second re-sends the
first's messages): two parallel tool calls, one of which fails, then the answer; then a follow-up
answered with one tool call. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "haystack-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find Atlantis."},
    {"tool_calls": [{"name": "get_forecast", "arguments": {"city": "Paris", "days": 2}}]},
    {"text": "Tomorrow and the day after in Paris: sunny, then light rain."},
]
WEATHER = {"Paris": "sunny, 21°C"}


# Module-level functions, as an application defines its tools: Haystack then serialises the tools (and so the
# generator's inputs) into its spans as JSON. `haystack_native_local-tools` has them defined inside a function.
def get_weather(city: str) -> str:
    """The weather in a city now."""
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return WEATHER[city]


def get_forecast(city: str, days: int) -> str:
    """The forecast for a city, a few days ahead."""
    return "sunny, then light rain"


def closures() -> list[Any]:
    """The same two functions defined inside this one, as a notebook cell or a factory defines them."""

    def get_weather(city: str) -> str:
        """The weather in a city now."""
        if city not in WEATHER:
            raise ValueError(f"unknown city: {city}")
        return WEATHER[city]

    def get_forecast(city: str, days: int) -> str:
        """The forecast for a city, a few days ahead."""
        return "sunny, then light rain"

    return [get_weather, get_forecast]


def run(capture_dir: Path, session: str, tool_functions: list[Any], notes: str = "") -> None:
    os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"  # read when haystack is imported
    with Recording(capture_dir, REPLIES, framework="haystack", instrumentation="haystack (native)",
                   packages=["haystack-ai", "opentelemetry-haystack", "openai", "opentelemetry-sdk"],
                   session_id=session,
                   notes=notes + "Agent, two turns in one session (the application's span carries session.id): two "
                         "parallel tool calls, one failing, then the answer; a follow-up with one tool call") as rec:
        rec.env()
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from haystack import tracing
        from haystack.components.agents import Agent
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.dataclasses import ChatMessage
        from haystack.tools import tool
        from haystack.utils import Secret
        from haystack_integrations.tracing.opentelemetry import OpenTelemetryTracer

        tracing.enable_tracing(OpenTelemetryTracer(provider.get_tracer("haystack")))

        generator = OpenAIChatGenerator(model="gpt-4o", api_key=Secret.from_token("sk-fake"),
                                        api_base_url=rec.base_url)
        agent = Agent(chat_generator=generator, tools=[tool(function) for function in tool_functions],
                      system_prompt="You are a terse weather assistant.")
        app = provider.get_tracer("weather-desk")
        history: list[ChatMessage] = []
        for question in ("Weather in Paris and Atlantis?", "And the next two days in Paris?"):
            with app.start_as_current_span("chat turn", attributes={"session.id": session}):
                result = agent.run(messages=[*history, ChatMessage.from_user(question)])
            history = [m for m in result["messages"] if not m.is_from("system")]
            print(result["last_message"].text)
        rec.flush(provider)


def main() -> None:
    run(Path(__file__).parent, SESSION, [get_weather, get_forecast])


if __name__ == "__main__":
    main()
