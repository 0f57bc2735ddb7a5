"""Re-record: the Anthropic Python SDK with extended thinking in a hand-written tool loop, traced by OpenInference.

    python3 -m venv /tmp/cap-anthropic-sdk_openinference_thinking && \
        /tmp/cap-anthropic-sdk_openinference_thinking/bin/pip install \
        anthropic==2.17.0 openinference-instrumentation-anthropic==3.1.0 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 opentelemetry-sdk==1.45.2 \
        opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-anthropic-sdk_openinference_thinking/bin/python \
        tests/captures/anthropic-sdk_openinference_thinking/record.py

Extended thinking with tools, as Anthropic's docs show it, on Claude Sonnet 4.6: every request sets
`thinking={"type": "enabled", "budget_tokens": 2048}` (with `max_tokens` above the budget) and the
interleaved-thinking beta header, so the model thinks before each answer, also after tool results; and an effort
(`output_config={"effort": …}`, which Sonnet 4.6 takes beside the thinking budget): `high` in turn one, `medium`
in turn two. Each answer's `thinking` block (its `signature` too) comes before its text and `tool_use` blocks, and
the loop re-sends the answer's blocks unchanged as the next request's assistant message, as the docs require for
tool use with thinking (the signature proves the thinking is the model's). Every answer reports how many of its
output tokens were thinking (`usage.output_tokens_details.thinking_tokens`).

Two user turns of one session (`using_session`), each its own trace under an application AGENT span, the tools
`OITracer.tool` TOOL spans. Turn one (`messages.create`): the model calls `book_hotel` and `get_weather` in
parallel; `book_hotel` raises (the booking service times out) and the loop sends the model a `tool_result` with
`is_error: true` and the error text; the model says it retries and calls `book_hotel` again, which books; then it
answers. Turn two (`messages.stream`, read to the end: `thinking_delta` and `signature_delta` events before the
text and the tool input): the model asks the weather in Bergen and answers. Five model calls, each with its own
thinking text. As in the other OpenInference captures the application's tracer provider is passed to the
instrumentor only, so the SDK's own tracing (on by default) goes to the no-op global provider.
These are the newest releases on PyPI (anthropic 2.17.0, openinference-instrumentation-anthropic 3.1.0); the versions
recorded are in meta.json.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

MODEL = "claude-sonnet-4-6"  # a model that takes an effort beside a thinking budget
SESSION_ID = "oi-anthropic-thinking-1"
SYSTEM = "You are a terse travel assistant. Use the tools; never guess a number."
THINKING = {"type": "enabled", "budget_tokens": 2048}
# Thinking between tool calls (after a tool result) needs the beta on Claude 4 models (Anthropic's docs,
# "Interleaved thinking").
INTERLEAVED = {"anthropic-beta": "interleaved-thinking-2025-05-14"}
EFFORTS = ["high", "medium"]  # each turn's
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?", "Is Bergen warmer?"]
REPLIES = [
    {"reasoning": "The user wants a booking and the weather: both tools, independent, so call them together.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 96, "reasoning_tokens": 41},
    {"reasoning": "The booking timed out but the weather came back; a timeout is worth one retry.",
     "text": "The booking service timed out; trying again.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "output_tokens": 88, "reasoning_tokens": 37},
    {"reasoning": "Booked on the retry, ref OSL-42; rain at 9°C means an umbrella.",
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain, 9°C: pack an umbrella.",
     "output_tokens": 70, "reasoning_tokens": 29},
    {"reasoning": "Compare Bergen with Oslo's 9°C: I need Bergen's weather first.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "output_tokens": 52, "reasoning_tokens": 31},
    {"reasoning": "Bergen is 7°C, Oslo 9°C: Bergen is colder, so the answer is no.",
     "text": "No: Bergen is windy at 7°C, colder than Oslo's 9°C.",
     "output_tokens": 64, "reasoning_tokens": 33},
]
WEATHER = {"Oslo": "rainy, 9°C", "Bergen": "windy, 7°C"}
TOOLS = [
    {"name": "get_weather", "description": "The weather in a city",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}},
    {"name": "book_hotel", "description": "Book a hotel room",
     "input_schema": {"type": "object", "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
                      "required": ["city", "nights"]}},
]
PACKAGES = ["anthropic", "openinference-instrumentation-anthropic", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("extended thinking (budget_tokens 2048, the interleaved-thinking beta header) and an effort "
         "(output_config.effort: high in turn one, medium in turn two) on every call: each answer a "
         "thinking block with its signature before its text and tool_use blocks, re-sent unchanged in the next "
         "request's assistant message; usage.output_tokens_details.thinking_tokens on every answer. Two turns of one "
         "session (two traces, an application AGENT span each, OITracer.tool spans): turn one messages.create, "
         "book_hotel and get_weather in parallel, book_hotel raising (sent back as an is_error tool_result), then "
         "retried with text, then the answer; turn two messages.stream (thinking_delta, signature_delta), a "
         "get_weather call, then the answer. The SDK's own tracing uses the global tracer provider, which this app "
         "does not set: none of its spans are exported")


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="anthropic-sdk", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION_ID, notes=NOTES) as rec:
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
        failures = {"book_hotel": 1}

        @tracer.tool(name="get_weather")
        def get_weather(city: str) -> str:
            return WEATHER[city]

        @tracer.tool(name="book_hotel")
        def book_hotel(city: str, nights: int) -> str:
            if failures["book_hotel"]:
                failures["book_hotel"] -= 1
                raise TimeoutError("the booking service did not answer in time")
            return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

        functions: dict[str, Any] = {"get_weather": get_weather, "book_hotel": book_hotel}
        client = anthropic.Anthropic()

        def ask(streamed: bool, **request: Any) -> Any:
            if not streamed:
                return client.messages.create(**request)
            with client.messages.stream(**request) as stream:
                for event in stream:  # thinking_delta, signature_delta, text_delta, input_json_delta
                    if event.type == "thinking":
                        print("thinking:", event.thinking)
                return stream.get_final_message()

        def run_tool(block: Any) -> dict[str, Any]:
            try:
                return {"type": "tool_result", "tool_use_id": block.id,
                        "content": functions[block.name](**block.input)}
            except Exception as exc:  # the model is told, as a real loop would
                return {"type": "tool_result", "tool_use_id": block.id, "is_error": True,
                        "content": f"{type(exc).__name__}: {exc}"}

        messages: list[dict[str, Any]] = []
        for turn, question in enumerate(QUESTIONS):
            messages.append({"role": "user", "content": question})
            with using_session(SESSION_ID), tracer.start_as_current_span(
                    "trip-bot", openinference_span_kind="agent") as agent:
                agent.set_input(question)
                while True:
                    answer = ask(turn == 1, model=MODEL, max_tokens=4096, thinking=THINKING,
                                 output_config={"effort": EFFORTS[turn]}, system=SYSTEM, messages=messages,
                                 tools=TOOLS, extra_headers=INTERLEAVED)
                    # The whole answer back, thinking blocks and their signatures first, as the docs require.
                    messages.append({"role": "assistant",
                                     "content": [b.model_dump(exclude_none=True) for b in answer.content]})
                    uses = [b for b in answer.content if b.type == "tool_use"]
                    if not uses:
                        break
                    messages.append({"role": "user", "content": [run_tool(b) for b in uses]})
                agent.set_output("".join(b.text for b in answer.content if b.type == "text"))
        rec.flush(provider)


if __name__ == "__main__":
    main()
