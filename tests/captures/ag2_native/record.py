"""Re-record: AG2 1.x's `Agent` on its OpenAI chat client, traced by AG2's own `TelemetryMiddleware`.

    python3 -m venv /tmp/cap-ag2_native && /tmp/cap-ag2_native/bin/pip install \
        'ag2[openai,tracing]==1.2.1' 'openai==3.63.0' 'opentelemetry-sdk==1.45.2' \
        'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-ag2_native/bin/python tests/captures/ag2_native/record.py

AG2 1.x (PyPI `ag2`, module `ag2`; the docs still write `autogen.beta`) traces an agent with one
middleware, as its "Agent Telemetry" docs show: `TelemetryMiddleware(tracer_provider=…, agent_name=…)`
on the `Agent`, scope `opentelemetry.instrumentation.ag2`. It writes `invoke_agent <agent>` per turn
(`ask`), `chat <model>` per LLM call (OpenAI-style messages in `gen_ai.input.messages` /
`gen_ai.output.messages`), `execute_tool <tool>` per tool, and, for every `UsageEvent` the turn sends
(the agent sends one per LLM call, kind `model_call`), a `record_usage <kind>` span under the turn
carrying that call's tokens again. (The classic `ConversableAgent` and its `autogen.opentelemetry` are
not in `ag2` 1.x: they are AG2 Classic, the `autogen` 0.x package.)

AG2's conversation is its stream: "agents create a `MemoryStream` for each conversation", and a
reply's `ask` continues it. The middleware puts no conversation id on its spans (each `ask` is a
trace of its own); its documented `span_attributes` ("stamped onto every span") carries the stream's
own id here as `gen_ai.conversation.id`, so that evalkit finds the two turns as one session.

Scenario: one agent with two tools. Turn 1: the model asks for two parallel tool calls, one of which
raises (an unknown city: AG2 sends the model the traceback), then answers. Turn 2 (`reply.ask`, same
stream, `streaming=True`): one tool call, then the answer, both streamed. (The versions the capture
was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any
from uuid import UUID

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

# The stream's id, fixed so that re-recording gives the same session.
CONVERSATION = UUID("a6d2c0de-0000-4000-8000-000000000047")
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find the time in Atlantis."},
    {"tool_calls": [{"name": "get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "It is 14:05 in Paris."},
]
WEATHER = {"Paris": "sunny, 21°C"}
TIMES = {"Paris": "14:05"}


def get_weather(city: str) -> str:
    """The weather in a city."""
    return WEATHER[city]


def get_local_time(city: str) -> str:
    """The local time in a city."""
    if city not in TIMES:
        raise ValueError(f"unknown city: {city}")
    return TIMES[city]


async def scenario(base_url: str, provider: Any) -> None:
    from ag2 import Agent, MemoryStream
    from ag2.config import OpenAIConfig
    from ag2.middleware.builtin import TelemetryMiddleware

    config = OpenAIConfig(model="gpt-4o", base_url=base_url, api_key="sk-fake")
    stream = MemoryStream(id=CONVERSATION)
    agent = Agent(
        "weather_agent",
        prompt="You are a terse weather assistant.",
        config=config,
        tools=[get_weather, get_local_time],
        middleware=[TelemetryMiddleware(tracer_provider=provider, agent_name="weather_agent",
                                        span_attributes={"gen_ai.conversation.id": str(stream.id)})],
    )
    reply = await agent.ask("Weather in Paris, and the time in Atlantis?", stream=stream)
    await reply.ask("And the time in Paris?", config=config.copy(streaming=True))


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("turn 1: two parallel tool calls, one raising (AG2 sends the model the traceback), then the answer; "
             "turn 2 (reply.ask on the same stream, streamed): one tool call, then the answer. The stream's id "
             "is every span's gen_ai.conversation.id through TelemetryMiddleware(span_attributes=…); each turn "
             "is a trace of its own")
    with Recording(capture_dir, REPLIES, framework="ag2", instrumentation="ag2 (native TelemetryMiddleware)",
                   packages=["ag2", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=str(CONVERSATION), notes=notes) as rec:
        rec.env()
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "ag2-weather"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=rec.otlp_endpoint + "/v1/traces")))
        trace.set_tracer_provider(provider)
        asyncio.run(scenario(rec.base_url, provider))
        rec.flush(provider)


if __name__ == "__main__":
    main()
