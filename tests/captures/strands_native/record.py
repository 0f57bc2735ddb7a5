"""Re-record: Strands Agents with its OpenAIModel provider, traced by Strands' own OpenTelemetry.

    python3 -m venv /tmp/cap-strands && /tmp/cap-strands/bin/pip install \
        'strands-agents[openai]==1.62.0' opentelemetry-exporter-otlp-proto-http
    /tmp/cap-strands/bin/python tests/captures/strands_native/record.py

Strands' default conventions: the messages are GenAI span *events* (`gen_ai.user.message`,
`gen_ai.choice`, `gen_ai.tool.message`, …) holding Bedrock-style content blocks (`text`,
`toolUse`, `toolResult`). One turn: two parallel tool calls, one of which fails, then the answer.
`strands_native_latest-semconv` is the same run with
`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`. (The versions the capture was recorded
with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "strands-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find Atlantis."},
]
WEATHER = {"Paris": "sunny, 21°C"}


def run(capture_dir: Path, latest_semconv: bool) -> None:
    if latest_semconv:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    notes = ("two parallel tool calls, one failing (an unknown city), then the answer; conventions: "
             + ("gen_ai_latest_experimental" if latest_semconv else "Strands' default (span events)"))
    with Recording(capture_dir, REPLIES, framework="strands-agents", instrumentation="strands (native)",
                   packages=["strands-agents", "openai", "opentelemetry-sdk"], session_id=SESSION,
                   notes=notes) as rec:
        rec.env()
        from strands import Agent, tool
        from strands.models.openai import OpenAIModel
        from strands.telemetry import StrandsTelemetry

        telemetry = StrandsTelemetry()
        telemetry.setup_otlp_exporter()

        @tool
        def get_weather(city: str) -> str:
            """The weather in a city."""
            if city not in WEATHER:
                raise ValueError(f"unknown city: {city}")
            return WEATHER[city]

        model = OpenAIModel(client_args={"base_url": rec.base_url, "api_key": "sk-fake"}, model_id="gpt-4o")
        agent = Agent(model=model, tools=[get_weather], name="weather-agent",
                      system_prompt="You are a terse weather assistant.",
                      trace_attributes={"session.id": SESSION}, callback_handler=None)
        agent("Weather in Paris and Atlantis?")
        rec.flush(telemetry.tracer_provider)


def main() -> None:
    run(Path(__file__).parent, latest_semconv=False)


if __name__ == "__main__":
    main()
