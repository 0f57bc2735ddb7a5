"""Re-record: Semantic Kernel's HandoffOrchestration (a triage agent handing off to a weather agent with a plugin)
on an InProcessRuntime, traced by Semantic Kernel's own diagnostics.

    python3 -m venv /tmp/cap-semantic-kernel_native_handoff && /tmp/cap-semantic-kernel_native_handoff/bin/pip install \
        'semantic-kernel==1.45.0' 'openai==3.63.0' 'opentelemetry-sdk==1.45.2' \
        'opentelemetry-exporter-otlp-proto-http==1.45.2'
    /tmp/cap-semantic-kernel_native_handoff/bin/python tests/captures/semantic-kernel_native_handoff/record.py

The telemetry is set up as `semantic-kernel_native`'s (SK's telemetry docs): a tracer provider, a logger
provider whose `LoggingHandler` (filtered to `semantic_kernel`) exports SK's log records, and
`SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE=true`. Besides SK's `invoke_agent` /
`chat.streaming_completions` / `execute_tool` spans, the InProcessRuntime writes its own messaging spans
(tracer `agent_runtime InProcessRuntime`: `autogen create|publish|process|ack …`) around the actors' work.

An orchestration is no telemetry of its own and has no session: each `invoke` is run here in a parent span
carrying `session.id` (semconv_atif.md §3.8), the same id for both invocations so that they are one session.
A fresh runtime is started inside that span (the SK samples start one per invocation): the runtime's message
loop is a task created by `start()`, so the actors' spans are children of that turn's span.

Scenario (7 LLM calls, all streamed: a handoff actor always calls `invoke_stream`). The orchestration's
members are `triage_agent` (no plugin of its own; the orchestration gives each member a `Handoff` plugin,
`transfer_to_<agent>` and `complete_task`) and `weather_agent` (a `weather` plugin of two functions).
No `human_response_function`: handoff needs no human input, when an agent answers without handing off the
actor completes the task itself (no LLM call).
  Invocation 1: the triage agent calls `Handoff-transfer_to_weather_agent`; the weather agent calls
  `weather-get_weather` and `weather-get_local_time` for Paris in parallel, the time service raising a
  TimeoutError once; it retries `get_local_time` alone, then answers.
  Invocation 2 (a new question, same session): triage hands off again; the weather agent calls
  `weather-get_weather` for Lyon, then answers.
(The versions are in meta.json.)
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "semantic-kernel-handoff-1"
QUESTIONS = ("What is the weather and the local time in Paris?", "Is it picnic weather in Lyon today?")
REPLIES = [
    {"tool_calls": [{"name": "Handoff-transfer_to_weather_agent", "arguments": {}}]},
    {"tool_calls": [{"name": "weather-get_weather", "arguments": {"city": "Paris"}},
                    {"name": "weather-get_local_time", "arguments": {"city": "Paris"}}]},
    {"tool_calls": [{"name": "weather-get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "Paris is sunny at 21°C, and it is 14:05 there."},
    {"tool_calls": [{"name": "Handoff-transfer_to_weather_agent", "arguments": {}}]},
    {"tool_calls": [{"name": "weather-get_weather", "arguments": {"city": "Lyon"}}]},
    {"text": "Yes: Lyon is cloudy but dry at 18°C, fine for a picnic."},
]
WEATHER = {"Paris": "sunny, 21°C", "Lyon": "cloudy, dry, 18°C"}
TIMES = {"Paris": "14:05"}


async def scenario(base_url: str) -> None:
    from openai import AsyncOpenAI
    from opentelemetry import trace
    from semantic_kernel import Kernel
    from semantic_kernel.agents import ChatCompletionAgent, HandoffOrchestration, OrchestrationHandoffs
    from semantic_kernel.agents.runtime import InProcessRuntime
    from semantic_kernel.connectors.ai.open_ai import OpenAIChatCompletion
    from semantic_kernel.functions import kernel_function

    timeouts = {"left": 1}

    class WeatherPlugin:
        @kernel_function(description="The weather in a city.")
        def get_weather(self, city: str) -> str:
            return WEATHER[city]

        @kernel_function(description="The local time in a city.")
        def get_local_time(self, city: str) -> str:
            if timeouts["left"]:
                timeouts["left"] -= 1
                raise TimeoutError("the time service timed out")
            return TIMES[city]

    def service() -> OpenAIChatCompletion:
        return OpenAIChatCompletion(ai_model_id="gpt-4o",
                                    async_client=AsyncOpenAI(base_url=base_url, api_key="sk-fake"))

    triage = ChatCompletionAgent(service=service(), name="triage_agent",
                                 description="Routes the user's request to the right specialist.",
                                 instructions="You triage travel questions: hand weather and time questions over.")
    weather_kernel = Kernel()
    weather_kernel.add_plugin(WeatherPlugin(), plugin_name="weather")
    weather = ChatCompletionAgent(service=service(), kernel=weather_kernel, name="weather_agent",
                                  description="Answers weather and local time questions.",
                                  instructions="You are a terse weather assistant.")
    handoffs = OrchestrationHandoffs().add(triage, weather, "Transfer to this agent for weather or time questions.")
    orchestration = HandoffOrchestration(members=[triage, weather], handoffs=handoffs, name="travel_desk")

    tracer = trace.get_tracer("capture.session")
    for question in QUESTIONS:
        with tracer.start_as_current_span("support turn", attributes={"session.id": SESSION}):
            runtime = InProcessRuntime()
            runtime.start()
            result = await orchestration.invoke(task=question, runtime=runtime)
            print(await result.get(timeout=60))
            await runtime.stop_when_idle()


def main() -> None:
    capture_dir = Path(__file__).parent
    notes = ("HandoffOrchestration (triage_agent -> weather_agent, OrchestrationHandoffs) on an InProcessRuntime, "
             "invoked twice in one session, every call streamed (handoff actors call invoke_stream). Invocation 1: "
             "triage hands off; the weather agent calls get_weather and get_local_time in parallel, get_local_time "
             "raising TimeoutError once, retries it, answers. Invocation 2: triage hands off; one get_weather "
             "call, the answer. No human_response_function (the actor completes the task itself). SK's own "
             "diagnostics (sensitive): spans, and messages as log records; each invocation run (with a fresh "
             "runtime) in a parent span carrying session.id")
    os.environ["SEMANTICKERNEL_EXPERIMENTAL_GENAI_ENABLE_OTEL_DIAGNOSTICS_SENSITIVE"] = "true"
    packages = ["semantic-kernel", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
    with Recording(capture_dir, REPLIES, framework="semantic-kernel", instrumentation="semantic-kernel (native)",
                   packages=packages, session_id=SESSION, notes=notes) as rec:
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

        resource = Resource.create({"service.name": "semantic-kernel-travel-desk"})
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
