"""Re-record: the OpenAI Python SDK in a hand-written tool loop, traced by OpenTelemetry's own GenAI instrumentation.

    python3 -m venv /tmp/cap-otelgenai && /tmp/cap-otelgenai/bin/pip install \
        openai==3.63.0 opentelemetry-instrumentation-openai-v2==2.4b0 opentelemetry-util-genai==0.4b0 httpx==0.29.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-otelgenai/bin/python tests/captures/openai-sdk_otel-genai/record.py

`opentelemetry-instrumentation-openai-v2` (the OpenTelemetry project's instrumentation, semantic
conventions v1.30 by default): one `chat <model>` span per call, and with
OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true the messages as *log records* (events
`gen_ai.system.message`, `gen_ai.user.message`, `gen_ai.assistant.message`, `gen_ai.tool.message`,
`gen_ai.choice`) linked to the span, sent to /v1/logs. The loop runs under an application span per
user turn carrying `session.id` (the instrumentation has no session of its own). Two user turns of
one session: two parallel tool calls, one failing (an unknown city, its error sent to the model as
the tool message), then the answer; then a second question answered by one tool call.

`openai-sdk_otel-genai_latest-semconv` is the same conversation with
OTEL_SEMCONV_STABILITY_OPT_IN=gen_ai_latest_experimental and content captured on the spans
(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY: on that path `true` is not a valid
value and captures nothing). There the loop is wrapped the way opentelemetry-util-genai (installed
with the instrumentation) offers: `TelemetryHandler.invoke_local_agent()` for each turn (an
`invoke_agent` span, its `conversation_id` the session) and `TelemetryHandler.tool(…)` around each
tool (`execute_tool` spans, the failing one failed).

The pins matter. openai-v2 2.4b0 asks for `opentelemetry-util-genai>=0.4b0.dev`; what it does depends
on which one pip gives it: 1.2b0 and 1.3b0 (pip's choice today) no longer have the
`opentelemetry.util.genai.instruments` it imports (ImportError on `import opentelemetry.instrumentation.openai_v2`);
1.0b0 and 1.1b0 answer `is_experimental_mode()` True whatever OTEL_SEMCONV_STABILITY_OPT_IN says, so the
default conventions are unreachable; only 0.4b0 honours the opt-in. So this capture is recorded with
util-genai 0.4b0 and the latest-semconv one with 1.1b0 (its own virtualenv, see its record.py).
openai 3.x no longer depends on httpx, which the instrumentation imports.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "otel-genai-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find Atlantis."},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}], "when": "Lisbon"},
    {"text": "Lisbon is sunny at 24°C."},
]
WEATHER = {"Paris": "sunny, 21°C", "Lisbon": "sunny, 24°C"}
QUESTIONS = ["Weather in Paris and Atlantis?", "And in Lisbon?"]
PACKAGES = ["openai", "opentelemetry-instrumentation-openai-v2", "opentelemetry-util-genai", "opentelemetry-sdk",
            "httpx"]


def get_weather(city: str) -> str:
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return WEATHER[city]


def run(capture_dir: Path, latest_semconv: bool) -> None:
    # Read by the instrumentation when it is set up: before `instrument()`.
    if latest_semconv:
        os.environ["OTEL_SEMCONV_STABILITY_OPT_IN"] = "gen_ai_latest_experimental"
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_ONLY"
    else:
        os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "true"
    notes = ("two user turns of one session: two parallel tool calls, one failing (its error sent as the tool "
             "message), then the answer; then one tool call and the answer. "
             + ("gen_ai_latest_experimental, content on the spans (SPAN_ONLY); each turn an invoke_agent span "
                "(util-genai invoke_local_agent, its conversation_id the session), each tool an execute_tool span"
                if latest_semconv else
                "default conventions (v1.30): messages as log records; each turn under an application span "
                "carrying session.id, tools not traced"))
    with Recording(capture_dir, REPLIES, framework="openai-sdk",
                   instrumentation="opentelemetry-instrumentation-openai-v2", packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        import openai
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.util.genai.handler import TelemetryHandler

        resource = Resource.create({"service.name": "weather-bot"})
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
        OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        tracer = tracer_provider.get_tracer("weather-bot")
        # Only the latest-conventions run uses util-genai's handler (it reads the content mode there).
        handler = TelemetryHandler(tracer_provider=tracer_provider, logger_provider=logger_provider) \
            if latest_semconv else None

        @contextmanager
        def turn(question: str) -> Iterator[None]:
            if handler is not None:
                with handler.invoke_local_agent(agent_name="weather-bot", request_model="gpt-4o") as agent:
                    agent.conversation_id = SESSION  # util-genai 1.1b0: set on the invocation
                    yield
            else:
                with tracer.start_as_current_span("weather-bot turn", attributes={"session.id": SESSION}):
                    yield

        def run_tool(call: Any) -> str:
            arguments = json.loads(call.function.arguments)
            if handler is None:
                try:
                    return get_weather(**arguments)
                except ValueError as exc:
                    return f"error: {exc}"
            invocation = handler.tool(call.function.name, tool_type="function", tool_call_id=call.id)
            invocation.arguments = arguments
            try:
                invocation.tool_result = get_weather(**arguments)
            except ValueError as exc:
                invocation.fail(exc)
                return f"error: {exc}"
            invocation.stop()
            return str(invocation.tool_result)

        client = openai.OpenAI()
        tools = [{"type": "function", "function": {
            "name": "get_weather", "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
        messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse weather assistant."}]
        for question in QUESTIONS:
            messages.append({"role": "user", "content": question})
            with turn(question):
                while True:
                    answer = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
                    message = answer.choices[0].message
                    messages.append(message.model_dump(exclude_none=True))
                    if not message.tool_calls:
                        break
                    for call in message.tool_calls:
                        messages.append({"role": "tool", "tool_call_id": call.id, "content": run_tool(call)})
        rec.flush(tracer_provider, logger_provider)


def main() -> None:
    run(Path(__file__).parent, latest_semconv=False)


if __name__ == "__main__":
    main()
