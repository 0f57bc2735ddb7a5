"""Re-record: Semantic Kernel's ChatCompletionAgent with a plugin, traced by Semantic Kernel's own diagnostics.

    python3 -m venv /tmp/cap-sk && /tmp/cap-sk/bin/pip install \
        'semantic-kernel==1.45.0' opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
    /tmp/cap-sk/bin/python tests/captures/semantic-kernel_native/record.py

Semantic Kernel's GenAI diagnostics, as its telemetry docs set them up: a tracer provider and a logger
provider whose `LoggingHandler` (filtered to `semantic_kernel`) exports SK's log records, and
`SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true`. SK writes `invoke_agent
<name>`, `chat.completions <model>` and `execute_tool <plugin>-<function>` spans; a call's messages
are log records (`event.name` `gen_ai.system.message` / `gen_ai.user.message` / … / `gen_ai.choice`,
the body SK's message as JSON) linked to its span; a tool span carries the call's arguments and result.

Semantic Kernel's agent thread (`ChatHistoryAgentThread`) is no telemetry: each `get_response` is a
trace of its own, wrapped here in a parent span carrying `session.id` (semconv_atif.md §3.8, the first
key evalkit's session index reads), the same id for both turns so that they are one session.

Scenario: one ChatCompletionAgent, a plugin of two functions, automatic function calling. Turn 1: the
model asks for two parallel function calls, one of which raises (an unknown city), then answers.
Turn 2, same thread: one function call, then the answer. (The versions are in meta.json.)
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "semantic-kernel-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "weather-get_weather", "arguments": {"city": "Paris"}},
                    {"name": "weather-get_local_time", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find the time in Atlantis."},
    {"tool_calls": [{"name": "weather-get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "It is 14:05 in Paris."},
]
WEATHER = {"Paris": "sunny, 21°C"}
TIMES = {"Paris": "14:05"}


async def scenario(base_url: str) -> None:
    from openai import AsyncOpenAI
    from opentelemetry import trace
    from semantic_kernel import Kernel
    from semantic_kernel.agents import ChatCompletionAgent, ChatHistoryAgentThread
    from semantic_kernel.connectors.ai import FunctionChoiceBehavior
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion, OpenAIChatPromptExecutionSettings
    from semantic_kernel.functions import KernelArguments, kernel_function

    class WeatherPlugin:
        @kernel_function(description="The weather in a city.")
        def get_weather(self, city: str) -> str:
            return WEATHER[city]

        @kernel_function(description="The local time in a city.")
        def get_local_time(self, city: str) -> str:
            if city not in TIMES:
                raise ValueError(f"unknown city: {city}")
            return TIMES[city]

    kernel = Kernel()
    kernel.add_plugin(WeatherPlugin(), plugin_name="weather")
    service = OpenAIChatCompletion(ai_model_id="gpt-4o", async_client=AsyncOpenAI(base_url=base_url, api_key="sk-fake"))
    settings = OpenAIChatPromptExecutionSettings(function_choice_behavior=FunctionChoiceBehavior.Auto())
    agent = ChatCompletionAgent(service=service, kernel=kernel, name="weather_agent",
                                instructions="You are a terse weather assistant.",
                                arguments=KernelArguments(settings=settings))
    thread = ChatHistoryAgentThread()
    tracer = trace.get_tracer("capture.session")
    for question in ("Weather in Paris, and the time in Atlantis?", "And the time in Paris?"):
        with tracer.start_as_current_span("conversation turn", attributes={"session.id": SESSION}):
            response = await agent.get_response(messages=question, thread=thread)
            thread = response.thread


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("turn 1: two parallel function calls, one raising, then the answer; turn 2 (same thread): one "
             "function call, then the answer. SK's own diagnostics (sensitive): spans, and messages as log "
             "records; each turn wrapped in a parent span carrying session.id (an agent thread is no telemetry)")
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"
    with Recording(capture_dir, REPLIES, framework="semantic-kernel", instrumentation="semantic-kernel (native)",
                   packages=["semantic-kernel", "openai", "opentelemetry-sdk"], session_id=SESSION,
                   notes=notes) as rec:
        rec.env()
        from opentelemetry import trace
        from opentelemetry._logs import set_logger_provider
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create({"service.name": "semantic-kernel-weather"})
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(
            BatchSpanProcessor(OTLPSpanExporter(endpoint=rec.otlp_endpoint + "/v1/traces")))
        trace.set_tracer_provider(tracer_provider)
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(
            BatchLogRecordProcessor(OTLPLogExporter(endpoint=rec.otlp_endpoint + "/v1/logs")))
        set_logger_provider(logger_provider)
        handler = LoggingHandler()
        handler.addFilter(logging.Filter("semantic_kernel"))
        root = logging.getLogger()
        root.addHandler(handler)
        root.setLevel(logging.INFO)
        asyncio.run(scenario(rec.base_url))
        rec.flush(tracer_provider, logger_provider)


if __name__ == "__main__":
    main()
