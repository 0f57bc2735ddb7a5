"""Re-record: the OpenAI Python SDK in a hand-written tool loop, traced by OpenInference.

    python3 -m venv /tmp/cap-openai-oi && /tmp/cap-openai-oi/bin/pip install \
        openai==3.57.0 openinference-instrumentation-openai==0.1.66 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-openai-oi/bin/python tests/captures/openai-sdk_openinference/record.py

(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "oi-openai-weather-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="openai-sdk", instrumentation="openinference",
                   packages=["openai", "openinference-instrumentation-openai", "opentelemetry-sdk"],
                   session_id=SESSION, notes="two parallel tool calls answered in one turn") as rec:
        rec.env()
        import openai
        from openinference.instrumentation import using_session
        from openinference.instrumentation.openai import OpenAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        OpenAIInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("weather-bot")

        client = openai.OpenAI()
        tools = [{"type": "function", "function": {
            "name": "get_weather", "description": "The weather in a city",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}]
        messages: list[dict] = [{"role": "system", "content": "You are a terse weather assistant."},
                                {"role": "user", "content": "Weather in Paris and Oslo?"}]
        with using_session(SESSION), tracer.start_as_current_span(
                "weather-bot", attributes={"openinference.span.kind": "AGENT", "input.value": messages[-1]["content"]}):
            while True:
                answer = client.chat.completions.create(model="gpt-4o", messages=messages, tools=tools)
                message = answer.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    city = json.loads(call.function.arguments)["city"]
                    with tracer.start_as_current_span(call.function.name, attributes={
                            "openinference.span.kind": "TOOL", "tool.name": call.function.name,
                            "input.value": call.function.arguments, "output.value": WEATHER[city]}):
                        messages.append({"role": "tool", "tool_call_id": call.id, "content": WEATHER[city]})
        rec.flush(provider)


if __name__ == "__main__":
    main()
