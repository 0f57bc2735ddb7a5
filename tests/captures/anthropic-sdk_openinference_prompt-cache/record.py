"""Re-record: the Anthropic Python SDK in a hand-written tool loop with prompt caching, traced by OpenInference.

    python3 -m venv /tmp/cap-anthropic-oi && /tmp/cap-anthropic-oi/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-oi/bin/python tests/captures/anthropic-sdk_openinference_prompt-cache/record.py

The loop of `tests/captures/anthropic_trip.py` (the application's tracer provider passed to the
instrumentor only, so the SDK's own tracing goes to the no-op global provider), with the system prompt
sent as a text block marked `cache_control: {"type": "ephemeral"}`. Two user turns of one session
(`using_session`), each its own trace under an application AGENT span: turn one's `messages.create`
answers with a tool use (the prompt cache written: 1500 of its 1800 prompt tokens), the tool runs (an
`OITracer.tool` span), then `messages.stream` answers (1500 of 1900 read from the cache); turn two's
`messages.create` answers from the history (1500 of 2000 read). Anthropic reports `input_tokens` without
the cached ones, `cache_creation_input_tokens` and `cache_read_input_tokens` beside it.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-5"
SESSION_ID = "oi-anthropic-cache-1"
# A real cached prefix is at least 1024 tokens; the token counts are scripted, so the text need not be.
SYSTEM = [{"type": "text", "cache_control": {"type": "ephemeral"},
           "text": "You are a terse travel assistant for trips in Portugal. Use the tools; never guess a number. "
                   "Answer in one or two sentences, in the user's language, with the units the tools give."}]
QUESTIONS = ["What is the weather in Lisbon?", "Should I pack an umbrella then?"]
REPLIES = [
    {"text": "Checking Lisbon.", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}}],
     "input_tokens": 1800, "cache_write_tokens": 1500, "output_tokens": 42},
    {"text": "Lisbon is sunny at 24°C.", "input_tokens": 1900, "cache_read_tokens": 1500, "output_tokens": 12},
    {"text": "No: it is sunny in Lisbon, so leave the umbrella at home.",
     "input_tokens": 2000, "cache_read_tokens": 1500, "output_tokens": 18},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
TOOLS = [
    {"name": "get_weather", "description": "The weather in a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
]


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
                             "opentelemetry-sdk"],
                   session_id=SESSION_ID,
                   notes="prompt caching: a system prompt block with cache_control ephemeral; two turns of one "
                         "session (two traces); turn one messages.create with a tool use (cache written 1500 of "
                         "1800), an OITracer.tool span, then messages.stream answering (1500 of 1900 read); turn "
                         "two messages.create answering (1500 of 2000 read). The SDK's own tracing uses the "
                         "global tracer provider, which this app does not set: none of its spans are exported"
                   ) as rec:
        rec.env()
        import anthropic
        from openinference.instrumentation import OITracer, TraceConfig, using_session
        from openinference.instrumentation.anthropic import AnthropicInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AnthropicInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("trip-bot"), config=TraceConfig())

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            return WEATHER[city]

        functions: dict[str, Any] = {"get_weather": get_weather}
        client = anthropic.Anthropic()

        def ask(streamed: bool, **request: Any) -> Any:
            if not streamed:
                return client.messages.create(**request)
            with client.messages.stream(**request) as stream:
                for _ in stream.text_stream:
                    pass
                return stream.get_final_message()

        messages: list[dict[str, Any]] = []
        for question in QUESTIONS:
            messages.append({"role": "user", "content": question})
            with using_session(SESSION_ID), tracer.start_as_current_span(
                    "trip-bot", openinference_span_kind="agent") as agent:
                agent.set_input(question)
                streamed = False  # a turn's first call is made with create(), the calls after a tool with stream()
                while True:
                    answer = ask(streamed, model=MODEL, max_tokens=512, system=SYSTEM, messages=messages,
                                 tools=TOOLS)
                    messages.append({"role": "assistant",
                                     "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                    uses = [b for b in answer.content if b.type == "tool_use"]
                    if not uses:
                        break
                    messages.append({"role": "user", "content": [
                        {"type": "tool_result", "tool_use_id": b.id, "content": functions[b.name](**b.input)}
                        for b in uses]})
                    streamed = True
                agent.set_output("".join(b.text for b in answer.content if b.type == "text"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
