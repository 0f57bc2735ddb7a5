"""Re-record: `litellm.acompletion` in a hand-written tool loop, traced by OpenInference's LiteLLM instrumentor.

    python3 -m venv /tmp/cap-litellm-oi && /tmp/cap-litellm-oi/bin/pip install \
        litellm==1.110.2 openai==3.63.0 openinference-instrumentation-litellm==0.1.51 \
        openinference-instrumentation==0.1.72 opentelemetry-api==1.45.2 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-litellm-oi/bin/python tests/captures/litellm_openinference/record.py

`litellm_native`'s scenario (the same replies, tools and messages, so the two captures compare), traced
as OpenInference documents it: `LiteLLMInstrumentor().instrument(tracer_provider=provider)` (it patches
`litellm.completion`, `acompletion`, … so each call is an LLM span of its own), the session id from
`using_session(...)` around each turn, each turn an application AGENT span and each tool an
`OITracer.tool` TOOL span (the failing one records its exception, the loop then shows the model the
error text). No LiteLLM callback is set: only OpenInference's spans are exported.

The loop: two user turns in one session (the second re-sends the history), two parallel tool calls in
one answer, a streamed answer (`stream_options={"include_usage": True}`, its chunks rebuilt with
`litellm.stream_chunk_builder`), the second turn on `anthropic/claude-sonnet-4-5` with a tool that fails
once. LiteLLM computes each call's cost from its bundled price map (`LITELLM_LOCAL_MODEL_COST_MAP`).
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

SESSION = "litellm-oi-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 120, "output_tokens": 38},
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C.", "input_tokens": 190, "output_tokens": 17},
    {"text": "Let me look for flights.", "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Oslo"}}],
     "input_tokens": 260, "output_tokens": 29},
    {"text": "The search timed out; trying again.",
     "tool_calls": [{"name": "lookup_flight", "arguments": {"city": "Oslo"}}],
     "input_tokens": 330, "output_tokens": 31},
    {"text": "Fly SK4411 to Oslo, departing 09:40. Pack an umbrella.", "input_tokens": 390, "output_tokens": 19},
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


def tools(tracer: Any) -> dict[str, Any]:
    failures: list[str] = []

    @tracer.tool(name="get_weather")
    def get_weather(city: str) -> str:
        return WEATHER[city]

    @tracer.tool(name="lookup_flight")
    def lookup_flight(city: str) -> str:
        if not failures:
            failures.append(city)
            raise ConnectionError(f"flight search timed out for {city}")
        return "SK4411, departing 09:40"

    return {"get_weather": get_weather, "lookup_flight": lookup_flight}


def run_tool(functions: dict[str, Any], name: str, arguments: str) -> str:
    try:
        return functions[name](**json.loads(arguments))
    except Exception as exc:  # the loop shows the model the error, as hand-written loops do
        return f"Error: {exc}"


async def streamed(litellm: Any, **kwargs: Any) -> Any:
    """A streamed call, its chunks put back together the way LiteLLM's docs show."""
    stream = await litellm.acompletion(stream=True, stream_options={"include_usage": True}, **kwargs)
    chunks = [chunk async for chunk in stream]
    return litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])


async def turn(litellm: Any, tracer: Any, functions: dict[str, Any], messages: list[dict[str, Any]],
               question: str, model: str, stream_final: bool = False) -> None:
    from openinference.instrumentation import using_session

    messages.append({"role": "user", "content": question})
    with using_session(SESSION), tracer.start_as_current_span("trip-bot", openinference_span_kind="agent") as agent:
        agent.set_input(question)
        while True:
            kwargs = {"model": model, "messages": messages, "tools": TOOLS}
            answer = await streamed(litellm, **kwargs) if stream_final and messages[-1]["role"] == "tool" \
                else await litellm.acompletion(**kwargs)
            message = answer.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                agent.set_output(message.content)
                return
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": run_tool(functions, call.function.name, call.function.arguments)})


async def conversation(litellm: Any, tracer: Any) -> None:
    functions = tools(tracer)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a terse travel assistant."}]
    await turn(litellm, tracer, functions, messages, "Weather in Paris and Oslo?", "openai/gpt-4o",
               stream_final=True)
    await turn(litellm, tracer, functions, messages, "Find me a flight to Oslo.", "anthropic/claude-sonnet-4-5")
    print(messages[-1]["content"])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="litellm", instrumentation="openinference",
                   packages=["litellm", "openai", "openinference-instrumentation-litellm",
                             "openinference-instrumentation", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="litellm_native's scenario traced by OpenInference's LiteLLMInstrumentor: "
                         "litellm.acompletion in a hand-written loop, two turns under using_session, each an AGENT "
                         "span, tools OITracer.tool spans; parallel tool calls, a streamed answer with usage, the "
                         "second turn on anthropic/claude-sonnet-4-5 with a tool failing once") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: litellm's bundled prices
        import litellm
        from openinference.instrumentation import OITracer, TraceConfig
        from openinference.instrumentation.litellm import LiteLLMInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LiteLLMInstrumentor().instrument(tracer_provider=provider)
        tracer = OITracer(provider.get_tracer("trip-bot"), config=TraceConfig())

        asyncio.run(conversation(litellm, tracer))
        rec.flush(provider)


if __name__ == "__main__":
    main()
