"""Re-record: the Anthropic SDK's own tracing and OpenLLMetry's, with the system prompt cached.

    python3 -m venv /tmp/cap-pc-anthropic-ollm && /tmp/cap-pc-anthropic-ollm/bin/pip install \
        anthropic==2.15.0 opentelemetry-instrumentation-anthropic==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-pc-anthropic-ollm/bin/python tests/captures/anthropic-sdk_openllmetry_prompt-cache/record.py

A hand-written tool loop under an application span, its long system prompt marked
`cache_control: ephemeral` as a prompt-caching user does: a `create()` call answered by a tool use
(it writes the cache: 1500 of its 1800 prompt tokens), the tool run, a streamed call
(`messages.stream`) answering in text, then a follow-up question answered by `create()` (both read
the 1500 cached tokens). Every call is reported twice: by the SDK's own `anthropic.messages.create`
span (content mode on, the session as its `conversation_id`) and by OpenLLMetry's `anthropic.chat`
span, with the same response id. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "anthropic-weather-cached-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 1800, "cache_write_tokens": 1500, "output_tokens": 42},
    {"text": "Lisbon is sunny at 24°C.", "input_tokens": 1900, "cache_read_tokens": 1500, "output_tokens": 12},
    {"text": "No umbrella needed: no rain is forecast.", "input_tokens": 1950, "cache_read_tokens": 1500,
     "output_tokens": 11},
]
WEATHER = {"Lisbon": "sunny, 24°C"}
# Long enough to be worth caching (Anthropic caches prompts of 1024 tokens and more).
SYSTEM_PROMPT = ("You are a terse weather assistant. Answer in one sentence, in the user's language; "
                 "call get_weather for any city the user names before answering. ") + \
    " ".join(f"Style rule {n}: be brief, be accurate, never guess a forecast." for n in range(1, 120))


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openllmetry",
                   packages=["anthropic", "opentelemetry-instrumentation-anthropic", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="each call reported by the SDK's own span and OpenLLMetry's (same response id); "
                         "system prompt cached (cache_control ephemeral): a tool use writing the cache, "
                         "a streamed answer and a follow-up create() reading it") as rec:
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
        system = [{"type": "text", "text": SYSTEM_PROMPT, "cache_control": {"type": "ephemeral"}}]
        messages: list[dict] = [{"role": "user", "content": "What is the weather in Lisbon?"}]
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
                final = stream.get_final_message()
            messages.append({"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in final.content]})
            messages.append({"role": "user", "content": "Should I bring an umbrella?"})
            client.messages.create(model="claude-sonnet-4-5", max_tokens=256, system=system,
                                   messages=messages, tools=tools)
        rec.flush(provider)


if __name__ == "__main__":
    main()
