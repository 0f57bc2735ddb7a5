"""Re-record: the Anthropic Python SDK with its own tracing on, and OpenLLMetry's instrumentation too.

    python3 -m venv /tmp/cap-anthropic && /tmp/cap-anthropic/bin/pip install \
        anthropic==2.15.0 opentelemetry-instrumentation-anthropic==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic/bin/python tests/captures/anthropic-sdk_openllmetry/record.py

A hand-written tool loop under an application span: one call answered by a tool use, the tool
run, then a streamed call answering in text. Every call is reported twice: by the SDK's own
`anthropic.messages.create` span (content mode on, the session as its `conversation_id`) and by
OpenLLMetry's `anthropic.chat` span, with the same response id. (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "anthropic-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}]},
    {"text": "Lisbon is sunny at 24°C."},
]
WEATHER = {"Lisbon": "sunny, 24°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openllmetry",
                   packages=["anthropic", "opentelemetry-instrumentation-anthropic", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="each call reported by the SDK's own span and OpenLLMetry's (same response id); "
                         "a tool use, then a streamed answer") as rec:
        rec.env()
        import anthropic
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("weather-bot")

        client = anthropic.Anthropic(open_telemetry={
            "tracer_provider": provider, "traces": {"content_mode": "content"}, "conversation_id": SESSION})
        tools = [{"name": "get_weather", "description": "The weather in a city",
                  "input_schema": {"type": "object", "properties": {"city": {"type": "string"}},
                                   "required": ["city"]}}]
        messages: list[dict] = [{"role": "user", "content": "What is the weather in Lisbon?"}]
        system = "You are a terse weather assistant."
        with tracer.start_as_current_span("weather-bot"):
            answer = client.messages.create(model="claude-sonnet-4-5", max_tokens=256, system=system,
                                            messages=messages, tools=tools)
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in answer.content]})
            results = []
            for block in answer.content:
                if block.type == "tool_use":
                    with tracer.start_as_current_span(f"tool {block.name}"):
                        results.append({"type": "tool_result", "tool_use_id": block.id,
                                        "content": WEATHER[block.input["city"]]})
            messages.append({"role": "user", "content": results})
            with client.messages.stream(model="claude-sonnet-4-5", max_tokens=256, system=system,
                                        messages=messages, tools=tools) as stream:
                for _ in stream.text_stream:
                    pass
        rec.flush(provider)


if __name__ == "__main__":
    main()
