"""Re-record: the Anthropic SDK's own tracing and OpenLLMetry's, the model thinking before it answers.

    python3 -m venv /tmp/cap-anthropic-sdk_openllmetry_thinking && \
        /tmp/cap-anthropic-sdk_openllmetry_thinking/bin/pip install \
        anthropic==2.17.0 opentelemetry-instrumentation-anthropic==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-sdk_openllmetry_thinking/bin/python tests/captures/anthropic-sdk_openllmetry_thinking/record.py

A hand-written tool loop with extended thinking (`thinking={"type": "enabled", "budget_tokens": 2048}` and
`output_config={"effort": "medium"}` on every call), as Anthropic's extended-thinking docs show it with tools: every
answer starts with a `thinking` block (its own text, a signature), and the loop re-sends each answer's blocks as they
came, thinking included, in the next request's assistant message (the API requires the thinking block before a
`tool_use` to come back with its result). Two turns of one session, each under an application span (one trace
each), each tool run in an application `execute_tool` span (the GenAI conventions' tool span, as the SDK's own tool
runner writes it: name, call id, arguments, result; a raising run failed with its exception and `error.type`):

1. `messages.create`: the model thinks, then asks for the weather in Lisbon and Porto at once (two parallel
   `tool_use` blocks); Porto's lookup raises once (sent back as an `is_error` tool_result), so it thinks again and
   asks for Porto alone, then thinks and answers in text;
2. `messages.stream` (streamed: `thinking_delta` and `signature_delta` events): a follow-up question, answered by
   thinking, a sentence and a forecast tool call, then by thinking and text.

Every call is reported twice: by the SDK's own `anthropic.messages.create` span (content mode on, the session as its
`conversation_id`) and by OpenLLMetry's `anthropic.chat` span, with the same response id. Usage reports the
thinking tokens within the output tokens (`output_tokens_details.thinking_tokens`). (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "anthropic-thinking-weather-1"
MODEL = "claude-opus-4-5"
REPLIES = [
    {"reasoning": "Two cities: I can look both up at once rather than one after the other.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}}],
     "output_tokens": 96, "reasoning_tokens": 41},
    {"reasoning": "Lisbon came back; Porto's lookup timed out, so I should ask for Porto once more.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Porto"}}],
     "output_tokens": 64, "reasoning_tokens": 38},
    {"reasoning": "Both readings are in: Lisbon is the warmer and sunnier of the two.",
     "text": "Lisbon is sunny at 24°C; Porto is cloudy at 19°C.",
     "output_tokens": 58, "reasoning_tokens": 33},
    {"reasoning": "Rain tomorrow is a forecast question, not today's weather: use get_forecast for Porto.",
     "text": "Let me check tomorrow's forecast for Porto.",
     "tool_calls": [{"name": "get_forecast", "arguments": {"city": "Porto", "day": "tomorrow"}}],
     "output_tokens": 88, "reasoning_tokens": 45},
    {"reasoning": "The forecast says showers in the afternoon: recommend an umbrella.",
     "text": "Yes: showers are forecast in Porto tomorrow afternoon, so take an umbrella.",
     "output_tokens": 61, "reasoning_tokens": 29},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 19°C"}
FORECAST = {("Porto", "tomorrow"): "afternoon showers, 17°C"}
TOOLS = [
    {"name": "get_weather", "description": "The weather in a city now",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "get_forecast", "description": "A city's weather forecast for a day",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "day": {"type": "string"}},
                      "required": ["city", "day"]}},
]
SYSTEM = "You are a weather assistant. Look the weather up with the tools before you answer."
THINKING = {"type": "enabled", "budget_tokens": 2048}
EFFORT = {"effort": "medium"}


class WeatherServiceTimeout(Exception):
    pass


class WeatherService:
    """The tools; Porto's first lookup times out."""

    def __init__(self) -> None:
        self.porto_lookups = 0

    def get_weather(self, city: str) -> str:
        if city == "Porto":
            self.porto_lookups += 1
            if self.porto_lookups == 1:
                raise WeatherServiceTimeout("the weather service timed out for Porto")
        return WEATHER[city]

    def get_forecast(self, city: str, day: str) -> str:
        return FORECAST[(city, day)]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openllmetry",
                   packages=["anthropic", "opentelemetry-instrumentation-anthropic", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http", "opentelemetry-semantic-conventions-ai"],
                   session_id=SESSION,
                   notes="extended thinking (budget 2048, effort medium) with tools: each call reported by the SDK's "
                         "own span and OpenLLMetry's (same response id); every answer a thinking block first, re-sent "
                         "with its signature; parallel tool uses, one raising once (is_error tool_result) and asked "
                         "again; two turns (a trace each), the second streamed (thinking_delta, signature_delta)",
                   ) as rec:
        rec.env()
        import anthropic
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
        from opentelemetry.trace import Status, StatusCode

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = provider.get_tracer("weather-bot")
        client = anthropic.Anthropic(open_telemetry={
            "tracer_provider": provider, "traces": {"content_mode": "content"}, "conversation_id": SESSION})
        service = WeatherService()

        def run_tools(content: list[Any]) -> list[dict[str, Any]]:
            # Each run in an `execute_tool` span of the GenAI conventions, as the SDK's own tool runner writes them
            # (a hand-written loop has no runner): the tool_use id ties the run to the model's call.
            results = []
            for block in content:
                if block.type != "tool_use":
                    continue
                with tracer.start_as_current_span(f"execute_tool {block.name}", attributes={
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": block.name,
                        "gen_ai.tool.type": "function", "gen_ai.tool.call.id": block.id,
                        "gen_ai.tool.call.arguments": json.dumps(block.input)}) as span:
                    try:
                        output = getattr(service, block.name)(**block.input)
                    except WeatherServiceTimeout as exc:
                        span.record_exception(exc)
                        span.set_status(Status(StatusCode.ERROR, str(exc)))
                        span.set_attribute("error.type", type(exc).__qualname__)
                        results.append({"type": "tool_result", "tool_use_id": block.id, "content": f"Error: {exc}",
                                        "is_error": True})
                        continue
                    span.set_attribute("gen_ai.tool.call.result", output)
                results.append({"type": "tool_result", "tool_use_id": block.id, "content": output})
            return results

        def as_sent(content: list[Any]) -> list[dict[str, Any]]:
            # Every block back as it came, the thinking block with its signature (the rule for tool use with thinking).
            return [block.model_dump(exclude_none=True) for block in content]

        messages: list[dict[str, Any]] = [{"role": "user", "content": "What is the weather in Lisbon and Porto?"}]
        with tracer.start_as_current_span("weather-bot turn"):
            while True:
                answer = client.messages.create(model=MODEL, max_tokens=4096, system=SYSTEM, messages=messages,
                                                tools=TOOLS, thinking=THINKING, output_config=EFFORT)
                messages.append({"role": "assistant", "content": as_sent(answer.content)})
                if answer.stop_reason != "tool_use":
                    break
                messages.append({"role": "user", "content": run_tools(answer.content)})

        messages.append({"role": "user", "content": "Will it rain in Porto tomorrow?"})
        with tracer.start_as_current_span("weather-bot turn"):
            while True:
                with client.messages.stream(model=MODEL, max_tokens=4096, system=SYSTEM, messages=messages,
                                            tools=TOOLS, thinking=THINKING, output_config=EFFORT) as stream:
                    for _ in stream:
                        pass
                    final = stream.get_final_message()
                messages.append({"role": "assistant", "content": as_sent(final.content)})
                if final.stop_reason != "tool_use":
                    break
                messages.append({"role": "user", "content": run_tools(final.content)})
        rec.flush(provider)


if __name__ == "__main__":
    main()
