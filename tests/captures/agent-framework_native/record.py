"""Re-record: a Microsoft Agent Framework `Agent` (OpenAI chat completions, two function tools), traced by the
framework's own OpenTelemetry instrumentation.

    python3 -m venv /tmp/cap44-maf && /tmp/cap44-maf/bin/pip install \
        agent-framework-core==1.26.0 agent-framework-openai==1.17.0 openai==3.63.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap44-maf/bin/python tests/captures/agent-framework_native/record.py

Agent Framework (the successor of Semantic Kernel and AutoGen) set up as its observability docs say:
`configure_otel_providers(enable_sensitive_data=True)`, which builds the tracer, logger and meter providers
from the standard `OTEL_EXPORTER_OTLP_*` variables. Its default conventions are the latest GenAI ones
(`OTEL_SEMCONV_STABILITY_OPT_IN` unset means `gen_ai_latest_experimental` to it): `invoke_agent <name>` >
`chat <model>` spans carrying `gen_ai.input.messages` / `gen_ai.output.messages` /
`gen_ai.system_instructions`, and `execute_tool <function>` spans carrying `gen_ai.tool.call.arguments` /
`.result`. With sensitive data on it also emits the v1.36 message events (`gen_ai.user.message`, …,
`gen_ai.choice`) as log records linked to each chat span, and the `agent_framework` logger's records.

In 1.x `OpenAIChatClient` is the Responses API client; the chat completions one is `OpenAIChatCompletionClient`.
The agent's `AgentSession` (formerly `AgentThread`) keeps the history locally: the framework writes
`gen_ai.conversation.id` only from a service-side session id (`session.service_session_id`, which chat
completions never set), so each turn runs inside an application span carrying `session.id`.

Scenario: turn 1, the model asks for the weather and local time in Paris in parallel; the weather service
times out once (the tool raises), the model retries that call alone, then answers. Turn 2, same session: both
tools in parallel for Lyon, then the answer. Five LLM calls. (The versions are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Annotated

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "agent-framework-weather-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}],
     "input_tokens": 182, "output_tokens": 46},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
     "input_tokens": 251, "output_tokens": 17},
    {"text": "Paris is sunny at 21°C, and it is 14:05 there.", "input_tokens": 290, "output_tokens": 16},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lyon"}},
                    {"name": "get_local_time", "arguments": {"city": "Lyon"}}],
     "input_tokens": 318, "output_tokens": 46},
    {"text": "Lyon is cloudy at 17°C; it is 14:06 there.", "input_tokens": 401, "output_tokens": 15},
]
WEATHER = {"Paris": "sunny, 21°C", "Lyon": "cloudy, 17°C"}
TIMES = {"Paris": "14:05", "Lyon": "14:06"}


async def scenario(base_url: str) -> None:
    from agent_framework import Agent, tool
    from agent_framework.openai import OpenAIChatCompletionClient
    from opentelemetry import trace

    failures = {"left": 1}

    @tool
    def get_weather(city: Annotated[str, "The city to look up."]) -> str:
        """The current weather in a city."""
        if failures["left"]:
            failures["left"] -= 1
            raise TimeoutError("weather service timed out")
        return WEATHER[city]

    @tool
    def get_local_time(city: Annotated[str, "The city to look up."]) -> str:
        """The local time in a city."""
        return TIMES[city]

    client = OpenAIChatCompletionClient(model=MODEL, api_key="sk-fake", base_url=base_url)
    agent = Agent(client=client, name="weather_agent", instructions="You are a terse weather assistant.",
                  tools=[get_weather, get_local_time])
    session = agent.create_session()
    tracer = trace.get_tracer("weather-desk")
    for question in ("What's the weather and the local time in Paris?", "And in Lyon?"):
        with tracer.start_as_current_span("chat turn", attributes={"session.id": SESSION}):
            response = await agent.run(question, session=session)
        print(response.text)


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("turn 1: two parallel tool calls, get_weather raising once (a timeout), the model retrying it, then "
             "the answer; turn 2 (same AgentSession): two parallel tool calls, then the answer. Agent Framework's "
             "own telemetry via configure_otel_providers(enable_sensitive_data=True), default (latest) GenAI "
             "conventions, plus the v1.36 message events as log records; each turn wrapped in an application "
             "span carrying session.id (a local AgentSession puts no gen_ai.conversation.id on spans)")
    with Recording(capture_dir, REPLIES, framework="agent-framework", instrumentation="agent-framework (native)",
                   packages=["agent-framework-core", "agent-framework-openai", "openai", "opentelemetry-sdk"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        os.environ["OTEL_SERVICE_NAME"] = "weather-desk"
        from agent_framework.observability import configure_otel_providers
        from opentelemetry import metrics, trace
        from opentelemetry._logs import get_logger_provider

        configure_otel_providers(enable_sensitive_data=True)
        asyncio.run(scenario(rec.base_url))
        rec.flush(trace.get_tracer_provider(), get_logger_provider(), metrics.get_meter_provider())


if __name__ == "__main__":
    main()
