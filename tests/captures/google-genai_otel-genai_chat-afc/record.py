"""Re-record: a Google Gen AI SDK chat (Gemini) with automatic function calling, traced by OpenTelemetry's own
google-genai instrumentation.

    python3 -m venv /tmp/cap-google-genai_otel-genai_chat-afc && \
    /tmp/cap-google-genai_otel-genai_chat-afc/bin/pip install \
        google-genai==2.34.0 opentelemetry-instrumentation-google-genai==1.3b0 opentelemetry-util-genai==1.3b0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-google-genai_otel-genai_chat-afc/bin/python tests/captures/google-genai_otel-genai_chat-afc/record.py

The scenario of `google-genai_openinference` (the same replies, questions and functions) under the other
instrumentation, set up as `google-genai_otel-genai` sets it up: `GoogleGenAiSdkInstrumentor().instrument(
tracer_provider=…, logger_provider=…)`, one `generate_content <model>` span per `Models.generate_content` /
`generate_content_stream` call, content SPAN_AND_EVENT (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, read
when instrumenting: `gen_ai.input.messages` / `gen_ai.output.messages` / `gen_ai.system_instructions` on the
spans, and the same in a `gen_ai.client.inference.operation.details` log record per call). The instrumentation
has no session of its own: each user turn runs under an application span carrying `session.id`, so each turn is
a trace and both are one session.

The application is a `client.chats.create` chat with a system instruction and two Python functions as tools:
automatic function calling on (the SDK's default for callables), so the SDK runs the functions itself and sends
their results back in `functionResponse` parts (`{"result": …}`, or `{"error": str(exception)}` for one that
raised: `_extra_utils.get_function_response_parts`), no ids (the fake answers as gemini-2.5 does). google-genai
2.34 runs the AFC loop in the chat (`chats.py`), one `Models.generate_content(_stream)` per model call, so the
instrumentation sees every inner call. Turn one (`send_message`): two parallel calls (`get_weather` and
`get_local_time` for Paris), the weather service timing out once (a raised `TimeoutError`), then the model asking
for the weather again, then the answer. Turn two (`send_message_stream`, streamed): text and a function call in
one answer, then the answer. The chat keeps a streamed answer as it came, one `model` content per chunk (the
fake streams text 16 characters a chunk), so the last call re-sends that answer as three contents.

google-genai 2.34.0: the newest the instrumentation instruments (1.3b0, its newest, declares
`google-genai>=1.32.0,<3`; with 3.x, `instrument()` logs a dependency conflict and traces nothing). The pins pull
in opentelemetry-api 1.45.2, opentelemetry-instrumentation 0.66b2 and opentelemetry-semantic-conventions 0.66b2.
The client is pointed at the fake with `http_options={"base_url": …}` (the server's root: the SDK adds
`v1beta/models/…`). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "otel-genai-chat-weather-1"
MODEL = "gemini-2.5-flash"
SYSTEM = "You are a terse weather assistant. Use the tools; never guess."
QUESTIONS = ["What is the weather and the local time in Paris?", "And in Lisbon: do I need an umbrella?"]
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_local_time", "arguments": {"city": "Paris"}}]},
    {"text": "The weather service timed out; asking again.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"text": "Paris: sunny, 21°C, and it is 14:05 there."},
    # Longer than one streamed piece (the fake streams text 16 characters a chunk): the chat keeps each chunk's
    # content, so the next call re-sends this answer as three `model` contents (two texts, then the call).
    {"text": "Let me check Lisbon's forecast.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}], "when": "Lisbon"},
    {"text": "Lisbon is sunny at 24°C: no umbrella needed."},
]
WEATHER = {"Paris": "sunny, 21°C", "Lisbon": "sunny, 24°C"}
LOCAL_TIME = {"Paris": "14:05", "Lisbon": "13:05"}
# The pins, then what they pulled in that the spans depend on (the instrumentation's base and conventions).
PACKAGES = ["google-genai", "opentelemetry-instrumentation-google-genai", "opentelemetry-util-genai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http", "opentelemetry-api",
            "opentelemetry-instrumentation", "opentelemetry-semantic-conventions"]

_timeouts_left = {"get_weather": 1}  # the weather service times out on its first request


def get_weather(city: str) -> str:
    """The current weather in a city."""
    if _timeouts_left["get_weather"]:
        _timeouts_left["get_weather"] -= 1
        raise TimeoutError("the weather service did not answer within 5 s")
    return WEATHER[city]


def get_local_time(city: str) -> str:
    """The local time in a city, HH:MM."""
    return LOCAL_TIME[city]


def main() -> None:
    # Read by the instrumentation's handler: before `instrument()`.
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "SPAN_AND_EVENT"
    notes = ("a chats.create chat with a system instruction and two Python functions (automatic function calling "
             "on: the SDK runs them), each turn under an application span carrying session.id: send_message with "
             "two parallel calls, get_weather raising TimeoutError once (sent back as {\"error\": …}) and asked "
             "again, then the answer; send_message_stream with text and a call, then the answer. Content "
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
        chat = client.chats.create(model=MODEL, config=types.GenerateContentConfig(
            system_instruction=SYSTEM, tools=[get_weather, get_local_time]))
        with tracer.start_as_current_span("weather-bot turn", attributes={"session.id": SESSION}):
            print(chat.send_message(QUESTIONS[0]).text)
        with tracer.start_as_current_span("weather-bot turn", attributes={"session.id": SESSION}):
            for chunk in chat.send_message_stream(QUESTIONS[1]):
                print(chunk.text or "", end="", flush=True)
            print()
        rec.flush(tracer_provider, logger_provider)


if __name__ == "__main__":
    main()
