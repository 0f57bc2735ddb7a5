"""Re-record: AutoGen AgentChat's AssistantAgent, traced by AutoGen's own OpenTelemetry.

    python3 -m venv /tmp/cap-autogen && /tmp/cap-autogen/bin/pip install \
        'autogen-agentchat==0.7.5' 'autogen-ext[openai]==0.7.5' opentelemetry-sdk \
        opentelemetry-exporter-otlp-proto-http 'opentelemetry-instrumentation-openai-v2==2.4b0' \
        'opentelemetry-util-genai==1.1b0' httpx
    /tmp/cap-autogen/bin/python tests/captures/autogen_native/record.py

AutoGen (autogen-core's `_telemetry`, as its tracing docs say: a global tracer provider set before
the agents are created) writes `create_agent <name>`, `invoke_agent <name>` and `execute_tool <name>`
spans in the GenAI conventions, `gen_ai.system` "autogen"; its tool spans name the tool and the call
id, not the arguments or the result. It records no LLM call: its OpenAI model client is traced by
`opentelemetry-instrumentation-openai-v2` (the `chat` spans), here with the latest experimental
conventions and content on the spans (`OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental`,
`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=span_only`). (openai-v2 2.4b0 imports
`opentelemetry.util.genai.instruments`, which util-genai 1.2b0 renamed: hence the 1.1b0 pin; and
`httpx`, which openai 3.x no longer brings.)

AutoGen has no notion of a session: each `run` is a trace of its own, wrapped here in a parent span
carrying `session.id` (semconv_atif.md §3.8, the first key evalkit's session index reads), the same
id for both runs so that they are one session.

Scenario: one AssistantAgent with two tools. Run 1: the model asks for two parallel tool calls, one
of which raises (an unknown city), then answers. Run 2, same agent (it keeps its model context):
one tool call, then the answer. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "autogen-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find the time in Atlantis."},
    {"tool_calls": [{"name": "get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "It is 14:05 in Paris."},
]
WEATHER = {"Paris": "sunny, 21°C"}
TIMES = {"Paris": "14:05"}


async def scenario(base_url: str) -> None:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient
    from opentelemetry import trace

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    def get_local_time(city: str) -> str:
        """The local time in a city."""
        if city not in TIMES:
            raise ValueError(f"unknown city: {city}")
        return TIMES[city]

    client = OpenAIChatCompletionClient(model="gpt-4o", base_url=base_url, api_key="sk-fake")
    agent = AssistantAgent("weather_agent", model_client=client, tools=[get_weather, get_local_time],
                           system_message="You are a terse weather assistant.", max_tool_iterations=3)
    tracer = trace.get_tracer("capture.session")
    for task in ("Weather in Paris, and the time in Atlantis?", "And the time in Paris?"):
        with tracer.start_as_current_span("conversation turn", attributes={"session.id": SESSION}):
            await agent.run(task=task)
    await client.close()


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("run 1: two parallel tool calls, one raising, then the answer; run 2 (same agent): one tool call, "
             "then the answer. AutoGen records no LLM call: its OpenAI client is traced by "
             "opentelemetry-instrumentation-openai-v2 (gen_ai_latest_experimental, content span_only); each run "
             "is wrapped in a parent span carrying session.id (AutoGen has no session of its own)")
    os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "span_only"
    with Recording(capture_dir, REPLIES, framework="autogen-agentchat", instrumentation="autogen (native)",
                   packages=["autogen-agentchat", "autogen-core", "autogen-ext", "openai",
                             "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai",
                             "opentelemetry-sdk"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "autogen-weather"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=rec.otlp_endpoint + "/v1/traces")))
        trace.set_tracer_provider(provider)  # before the agents: AutoGen reads the global provider
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        asyncio.run(scenario(rec.base_url))
        rec.flush(provider)


if __name__ == "__main__":
    main()
