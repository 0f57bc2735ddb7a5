"""Re-record: the Google Gen AI SDK (Gemini) in a hand-written tool loop, traced by OpenTelemetry's own instrumentation.

    python3 -m venv /tmp/cap-genai && /tmp/cap-genai/bin/pip install \
        google-genai==2.34.0 opentelemetry-instrumentation-google-genai==1.3b0 opentelemetry-util-genai==1.3b0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-genai/bin/python tests/captures/google-genai_otel-genai/record.py

`opentelemetry-instrumentation-google-genai` (the OpenTelemetry project's instrumentation, built on
opentelemetry-util-genai, so the current GenAI conventions whatever OTEL_SEMCONV_STABILITY_OPT_IN
says): one `generate_content <model>` span per call (streamed or not), `gen_ai.provider.name` `gemini`.
Message content is off by default; OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT takes NO_CONTENT,
SPAN_ONLY, EVENT_ONLY or SPAN_AND_EVENT (`true` is not one: it captures nothing). This capture is
SPAN_AND_EVENT: `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions` on
the spans, and the same again in a `gen_ai.client.inference.operation.details` log record per call,
linked to its span, sent to /v1/logs (the instrumentation turns OTEL_INSTRUMENTATION_GENAI_EMIT_EVENT
on itself, so that record is sent in every mode, with the call's attributes and tokens). The
function calls are read as OTel parts; Gemini's carry no id, so the instrumentation makes one up,
`<name>_<index of the part>`: every call's first `get_weather` is `get_weather_0`.

The tool loop is the application's (automatic function calling disabled: the instrumentation traces
only the tools the SDK runs itself, so no `execute_tool` spans), each user turn under an application
span carrying `session.id` (the instrumentation has no session of its own). Two user turns of one
session, the second re-sending the history: two parallel function calls, one failing (an unknown city:
the loop answers it with {"error": …} in its functionResponse), then the answer; then, streamed
(`generate_content_stream`), text and a function call in one answer, then the answer.

google-genai 2.34.0: the newest the instrumentation instruments (it declares `google-genai>=1.32.0,<3`;
with 3.x, `instrument()` logs a dependency conflict and traces nothing). The client is pointed at the
fake with `http_options={"base_url": …}` (the server's root: the SDK adds `v1beta/models/…`);
GOOGLE_GEMINI_BASE_URL would do the same. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "genai-weather-1"
MODEL = "gemini-2.5-flash"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    {"text": "Paris is sunny at 21°C; I could not find Atlantis."},
    {"text": "Checking Lisbon.", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}],
     "when": "Lisbon"},
    {"text": "Lisbon is sunny at 24°C: no umbrella needed."},
]
WEATHER = {"Paris": "sunny, 21°C", "Lisbon": "sunny, 24°C"}
QUESTIONS = ["Weather in Paris and Atlantis?", "And in Lisbon: do I need an umbrella?"]
PACKAGES = ["google-genai", "opentelemetry-instrumentation-google-genai", "opentelemetry-util-genai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]


def get_weather(city: str) -> str:
    if city not in WEATHER:
        raise ValueError(f"unknown city: {city}")
    return WEATHER[city]


def main() -> None:
    # Read by the instrumentation's handler: before `instrument()`.
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_AND_EVENT"
    notes = ("two user turns of one session under an application span carrying session.id: two parallel function "
             "calls, one failing ({\"error\": …} in its functionResponse), then the answer; then, streamed "
             "(generate_content_stream), text and a function call in one answer, then the answer. Content "
             "SPAN_AND_EVENT: on the spans and in gen_ai.client.inference.operation.details log records")
    with Recording(Path(__file__).parent, REPLIES, framework="google-genai",
                   instrumentation="opentelemetry-instrumentation-google-genai", packages=PACKAGES,
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        from google import genai
        from google.genai import types
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.google_genai import GoogleGenAiSdkInstrumentor
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        resource = Resource.create({"service.name": "weather-bot"})
        tracer_provider = TracerProvider(resource=resource)
        tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        logger_provider = LoggerProvider(resource=resource)
        logger_provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter()))
        GoogleGenAiSdkInstrumentor().instrument(tracer_provider=tracer_provider, logger_provider=logger_provider)
        tracer = tracer_provider.get_tracer("weather-bot")

        client = genai.Client(api_key="fake", http_options=types.HttpOptions(
            base_url=rec.base_url.removesuffix("/v1") + "/"))
        config = types.GenerateContentConfig(
            system_instruction="You are a terse weather assistant.",
            tools=[types.Tool(function_declarations=[types.FunctionDeclaration(
                name="get_weather", description="The weather in a city",
                parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}},
                                        "required": ["city"]})])],
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
        )

        def ask(contents: list[Any], streamed: bool) -> types.Content:
            """The model's answer, as the content to re-send in the history."""
            if not streamed:
                response = client.models.generate_content(model=MODEL, contents=contents, config=config)
                assert response.candidates and response.candidates[0].content
                return response.candidates[0].content
            text, calls = "", []
            for chunk in client.models.generate_content_stream(model=MODEL, contents=contents, config=config):
                print(chunk.text or "", end="", flush=True)
                text += chunk.text or ""
                calls.extend(chunk.function_calls or ())
            print()
            parts = ([types.Part.from_text(text=text)] if text else []) + [
                types.Part(function_call=call) for call in calls]
            return types.Content(role="model", parts=parts)

        def answer(call: types.FunctionCall) -> types.Part:
            try:
                result: dict[str, Any] = {"result": get_weather(**(call.args or {}))}
            except ValueError as exc:
                result = {"error": str(exc)}
            return types.Part(function_response=types.FunctionResponse(id=call.id, name=call.name, response=result))

        contents: list[Any] = []
        for turn, question in enumerate(QUESTIONS):
            contents.append(types.Content(role="user", parts=[types.Part.from_text(text=question)]))
            with tracer.start_as_current_span("weather-bot turn", attributes={"session.id": SESSION}):
                while True:
                    content = ask(contents, streamed=turn == 1)
                    contents.append(content)
                    calls = [part.function_call for part in content.parts or () if part.function_call]
                    if not calls:
                        break
                    contents.append(types.Content(role="user", parts=[answer(call) for call in calls]))
        rec.flush(tracer_provider, logger_provider)


if __name__ == "__main__":
    main()
