"""Re-record: `litellm.acompletion` in a hand-written tool loop, traced by LiteLLM's own "otel" callback.

    python3 -m venv /tmp/cap-litellm && /tmp/cap-litellm/bin/pip install \
        litellm==1.110.2 openai==3.63.0 opentelemetry-api==1.45.2 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-litellm/bin/python tests/captures/litellm_native/record.py

LiteLLM's SDK callback (`litellm.callbacks = ["otel"]`, the legacy `OpenTelemetry` logger; the
`LITELLM_OTEL_V2` one is the proxy's) is configured as its docs say: the OTLP endpoint and protocol
from `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_PROTOCOL`, message content on by default
(`message_logging`), and `USE_OTEL_LITELLM_REQUEST_SPAN=true`, without which a call made inside an
application span writes its attributes onto that span (each call overwriting the last) instead of a
`litellm_request` span of its own. The application's tracer provider (its exporter configured by the
same `OTEL_EXPORTER_OTLP_*` variables) is set globally first, so LiteLLM reuses it, as it does any SDK
provider it finds. Each call is a `litellm_request` span and a `raw_gen_ai_request` child holding the
provider's raw request and response.

Async (`acompletion`), not `completion`: LiteLLM 1.110 logs a sync stream from its thread pool without the
caller's context (`streaming_handler.py` submits `success_handler` without `contextvars.copy_context()`,
which the non-streamed path does), so a sync streamed call's span is the root of a trace of its own, in
no session. The async paths carry the context; their `gen_ai.operation.name` is then `acompletion`.

LiteLLM has a session notion (`litellm_session_id`, `metadata={"session_id": …}`), but the OTel
callback puts it on no span: each turn runs under an application span carrying `session.id`.
The loop: two user turns in one session (the second re-sends the history), two parallel tool calls in
one answer, a streamed answer (`stream_options={"include_usage": True}`), the second turn on
`anthropic/claude-sonnet-4-5` with a tool that fails once (its error text sent as the tool message).
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

SESSION = "litellm-otel-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C."},
    {"text": "Let me look for flights.", "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Oslo"}}]},
    {"text": "The search timed out; trying again.",
     "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Oslo"}}]},
    {"text": "Fly SK4411 to Oslo, departing 09:40. Pack an umbrella."},
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


async def turn(litellm: Any, tracer: Any, messages: list[dict[str, Any]], question: str, model: str,
               stream_final: bool = False) -> None:
    messages.append({"role": "user", "content": question})
    with tracer.start_as_current_span("trip-bot turn", attributes={"session.id": SESSION}):
        while True:
            kwargs = {"model": model, "messages": messages, "tools": TOOLS, "metadata": {"session_id": SESSION}}
            answer = await streamed(litellm, **kwargs) if stream_final and messages[-1]["role"] == "tool" \
                else await litellm.acompletion(**kwargs)
            message = answer.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": run_tool(call.function.name, call.function.arguments)})


async def conversation(litellm: Any, tracer: Any) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse travel assistant."}]
    await turn(litellm, tracer, messages, "Weather in Paris and Oslo?", "openai/gpt-4o", stream_final=True)
    await turn(litellm, tracer, messages, "Find me a flight to Oslo.", "anthropic/claude-sonnet-4-5")
    print(messages[-1]["content"])
    await asyncio.sleep(1)  # LiteLLM logs from a background worker: let it end the last spans


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="litellm", instrumentation="native",
                   packages=["litellm", "openai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="litellm.acompletion in a hand-written loop, litellm.callbacks=['otel'] "
                         "(USE_OTEL_LITELLM_REQUEST_SPAN=true); two turns, each under an application span "
                         "carrying session.id (LiteLLM's session id reaches no span); parallel tool calls, a "
                         "streamed answer, the second turn on Anthropic with a tool failing once") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: litellm's bundled prices
        os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = "true"
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
