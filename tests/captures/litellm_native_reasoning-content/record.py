"""Re-record: `litellm.acompletion` on a DeepSeek-R1-style reasoning model, traced by LiteLLM's own "otel" callback.

    python3 -m venv /tmp/cap-litellm_native_reasoning-content && \
        /tmp/cap-litellm_native_reasoning-content/bin/pip install \
        litellm==1.110.2 openai==3.63.0 opentelemetry-api==1.45.2 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-litellm_native_reasoning-content/bin/python tests/captures/litellm_native_reasoning-content/record.py

The model is `deepseek/deepseek-r1`, LiteLLM's DeepSeek provider (`DeepSeekChatConfig`, an OpenAI-compatible chat
endpoint), reached through `DEEPSEEK_API_BASE` (the fake LLM) as LiteLLM's DeepSeek docs set it. R1 rather than
`deepseek-reasoner`: LiteLLM 1.110's model map lists `deepseek-reasoner` without function calling (and at DeepSeek's
V3.2 prices, which genai-prices 0.2.3 does not have yet), `deepseek-r1` with it (at R1's, as genai-prices). A
DeepSeek-R1-style endpoint answers with the model's thinking in `choices[0].message.reasoning_content` beside
`content` (streamed: `delta.reasoning_content` chunks before the content's), and counts it in
`usage.completion_tokens_details.reasoning_tokens`. LiteLLM reads both into its `Message` / `Usage`. Every call
passes `reasoning_effort="medium"`, which LiteLLM's DeepSeek config forwards as `reasoning_effort` plus
`thinking: {"type": "enabled"}`. In that thinking mode it also re-sends each earlier answer's `reasoning_content`
in the history, which DeepSeek requires (`_fill_reasoning_content`).

LiteLLM's SDK callback is configured as in `litellm_native`: `litellm.callbacks = ["otel"]` (the legacy `OpenTelemetry`
logger), endpoint and protocol from `OTEL_EXPORTER_OTLP_*`, message content on by default,
`USE_OTEL_LITELLM_REQUEST_SPAN=true` so each call is a `litellm_request` span of its own under the application
span (with a `raw_gen_ai_request` child holding the provider's raw request and response), the application's
tracer provider set globally first so LiteLLM reuses it. Async (`acompletion`) because LiteLLM 1.110 logs a sync
stream without the caller's context (see `litellm_native`).

LiteLLM's session id (`metadata={"session_id": …}`) reaches no span, so each turn runs under an application span
carrying `session.id`. The loop: two user turns in one session, the second re-sending the first. Turn 1 (not
streamed): two parallel `get_weather` calls in one answer, then a text answer. Turn 2 (every call streamed,
`stream_options={"include_usage": True}`, the chunks put back together by `litellm.stream_chunk_builder`):
`lookup_flight` raising once (its error text sent as the tool message), called again, then the answer. Each
of the five calls reasons first, a distinct text, with its reasoning tokens counted.
(The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "litellm-otel-reasoner-1"
MODEL = "deepseek/deepseek-r1"
REPLIES = [
    {"reasoning": "Two cities, and the weather of each is independent: ask get_weather for Paris and Oslo at once.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "output_tokens": 60, "reasoning_tokens": 24},
    {"reasoning": "Both results are in: Paris sunny and warm, Oslo rainy and cool. One terse sentence will do.",
     "text": "Paris is sunny at 21°C; Oslo is rainy at 9°C.", "output_tokens": 40, "reasoning_tokens": 22},
    {"reasoning": "A flight to Oslo: lookup_flight is the tool for that; tell the user I am searching.",
     "text": "Let me look for flights.", "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Oslo"}}],
     "output_tokens": 45, "reasoning_tokens": 21},
    {"reasoning": "The flight search timed out, a transient error: the same lookup is worth one retry.",
     "text": "The search timed out; trying again.",
     "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Oslo"}}],
     "output_tokens": 48, "reasoning_tokens": 20},
    {"reasoning": "SK4411 departs 09:40, and Oslo is rainy: name the flight and suggest an umbrella.",
     "text": "Fly SK4411 to Oslo, departing 09:40. Pack an umbrella.", "output_tokens": 42, "reasoning_tokens": 19},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "lookup_flight", "description": "Flights to a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]
failures: list[str] = []


def get_weather(city: str) -> str:
    return WEATHER[city]


def lookup_flight(city: str) -> str:
    if not failures:
        failures.append(city)
        raise ConnectionError(f"flight search timed out for {city}")
    return "SK4411, departing 09:40"


def run_tool(name: str, arguments: str) -> str:
    try:
        return {"get_weather": get_weather, "lookup_flight": lookup_flight}[name](**json.loads(arguments))
    except Exception as exc:  # the loop shows the model the error, as hand-written loops do
        return f"Error: {exc}"


async def streamed(litellm: Any, **kwargs: Any) -> Any:
    """A streamed call, its chunks put back together the way LiteLLM's docs show."""
    stream = await litellm.acompletion(stream=True, stream_options={"include_usage": True}, **kwargs)
    chunks = [chunk async for chunk in stream]
    return litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])


async def turn(litellm: Any, tracer: Any, messages: list[dict[str, Any]], question: str, stream: bool) -> None:
    messages.append({"role": "user", "content": question})
    with tracer.start_as_current_span("trip-bot turn", attributes={"session.id": SESSION}):
        while True:
            kwargs = {"model": MODEL, "messages": messages, "tools": TOOLS, "reasoning_effort": "medium",
                      "metadata": {"session_id": SESSION}}
            answer = await streamed(litellm, **kwargs) if stream else await litellm.acompletion(**kwargs)
            message = answer.choices[0].message
            print("reasoning:", message.reasoning_content)
            # The whole answer, its reasoning_content included, goes back in the history (DeepSeek's thinking mode
            # wants it re-sent; LiteLLM would otherwise send a placeholder).
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": run_tool(call.function.name, call.function.arguments)})


async def conversation(litellm: Any, tracer: Any) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse travel assistant."}]
    await turn(litellm, tracer, messages, "Weather in Paris and Oslo?", stream=False)
    await turn(litellm, tracer, messages, "Find me a flight to Oslo.", stream=True)
    print(messages[-1]["content"])
    await asyncio.sleep(1)  # LiteLLM logs from a background worker: let it end the last spans


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="litellm", instrumentation="native",
                   packages=["litellm", "openai", "opentelemetry-api", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="litellm.acompletion on deepseek/deepseek-r1 (DEEPSEEK_API_BASE at the fake LLM, "
                         "reasoning_content beside content, reasoning_effort='medium') in a hand-written loop, "
                         "litellm.callbacks=['otel'] (USE_OTEL_LITELLM_REQUEST_SPAN=true); two turns, each under an "
                         "application span carrying session.id; parallel tool calls, a tool failing once and "
                         "retried, the second turn streamed; every call reasons (distinct text, reasoning "
                         "tokens reported)") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: litellm's bundled prices
        os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = "true"
        os.environ["DEEPSEEK_API_BASE"] = rec.base_url
        os.environ["DEEPSEEK_API_KEY"] = "sk-fake"
        import litellm
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        litellm.callbacks = ["otel"]
        tracer = provider.get_tracer("trip-bot")

        asyncio.run(conversation(litellm, tracer))
        rec.flush(provider)


if __name__ == "__main__":
    main()
