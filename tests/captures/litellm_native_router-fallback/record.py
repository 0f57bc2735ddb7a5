"""Re-record: a LiteLLM `Router` falling back from gpt-4o to gpt-4o-mini, traced by LiteLLM's own "otel" callback.

    python3 -m venv /tmp/cap-litellm_native_router-fallback && \
        /tmp/cap-litellm_native_router-fallback/bin/pip install \
        litellm==1.110.2 openai==3.63.0 opentelemetry-api==1.45.2 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-litellm_native_router-fallback/bin/python tests/captures/litellm_native_router-fallback/record.py

The app's model is a `Router` over two deployments on the fake LLM, `gpt-4o` and `gpt-4o-mini`, with
`fallbacks=[{"gpt-4o": ["gpt-4o-mini"]}]` and `num_retries=0`, as LiteLLM's routing docs show; each deployment's
`max_retries=0`, so that the OpenAI SDK under it does not retry a 500 or a 429 itself (LiteLLM would then never see
it fail). A hand-written tool loop calls `router.acompletion`. LiteLLM's callback is set up as in litellm_native
(`litellm.callbacks = ["otel"]`, `USE_OTEL_LITELLM_REQUEST_SPAN=true`, the app's tracer provider set globally first,
each turn under an application span carrying `session.id`, LiteLLM's own `metadata={"session_id": …}` passed too,
though it reaches no span).

Turn one: gpt-4o calls `get_weather` for Paris and Atlantis in parallel, Atlantis raising (its error text sent as the
tool message); the next request to gpt-4o fails with HTTP 500, the Router falls back to gpt-4o-mini, which asks for
Oslo instead; gpt-4o answers. Turn two, streamed (`stream_options={"include_usage": True}`): gpt-4o fails with
HTTP 429, gpt-4o-mini streams the answer. Six requests, four of them answered: `llm_errors.jsonl` holds the two
failed ones (what a fallback is for, and what a trajectory must neither show as an answer nor lose). Installed then
(pip freeze, the packages that matter; also in meta.json): litellm 1.110.2 (the newest), openai 3.63.0, httpx 0.29.0,
httpx2 2.17.0, aiohttp 3.14.5, pydantic 2.14.4, tiktoken 0.14.0, opentelemetry-api / -sdk /
-exporter-otlp-proto-http 1.45.2.
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

SESSION = "litellm-router-fallback-1"
REPLIES = [
    # Turn one, gpt-4o.
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}},
                    {"name": "get_weather", "arguments": {"city": "Atlantis"}}]},
    # gpt-4o fails; the Router's fallback, gpt-4o-mini, is asked the same.
    {"error": {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # The next request goes to gpt-4o first again.
    {"text": "Paris is sunny at 21°C; Oslo is rainy at 9°C."},
    # Turn two, streamed: gpt-4o is rate-limited, gpt-4o-mini streams the answer.
    {"error": {"status": 429, "message": "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500.",
               "type": "requests", "code": "rate_limit_exceeded"}},
    {"text": "Paris is warmer, by 12 degrees."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}
TOOLS = [
    {"type": "function", "function": {
        "name": "get_weather", "description": "The weather in a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}},
]


def get_weather(city: str) -> str:
    if city not in WEATHER:
        raise LookupError(f"No weather station in {city}; ask about another city.")
    return WEATHER[city]


def run_tool(name: str, arguments: str) -> str:
    try:
        return {"get_weather": get_weather}[name](**json.loads(arguments))
    except Exception as exc:  # the loop shows the model the error, as hand-written loops do
        return f"Error: {exc}"


async def streamed(litellm: Any, router: Any, **kwargs: Any) -> Any:
    """A streamed call, its chunks put back together the way LiteLLM's docs show."""
    stream = await router.acompletion(stream=True, stream_options={"include_usage": True}, **kwargs)
    chunks = [chunk async for chunk in stream]
    return litellm.stream_chunk_builder(chunks, messages=kwargs["messages"])


async def turn(litellm: Any, router: Any, tracer: Any, messages: list[dict[str, Any]], question: str,
               stream: bool = False) -> None:
    messages.append({"role": "user", "content": question})
    with tracer.start_as_current_span("weather-bot turn", attributes={"session.id": SESSION}):
        while True:
            kwargs = {"model": "gpt-4o", "messages": messages, "tools": TOOLS, "metadata": {"session_id": SESSION}}
            answer = await streamed(litellm, router, **kwargs) if stream else await router.acompletion(**kwargs)
            message = answer.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return
            for call in message.tool_calls:
                messages.append({"role": "tool", "tool_call_id": call.id,
                                 "content": run_tool(call.function.name, call.function.arguments)})


async def conversation(litellm: Any, router: Any, tracer: Any) -> None:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You answer weather questions tersely."}]
    await turn(litellm, router, tracer, messages, "Weather in Paris and Atlantis? If Atlantis has none, Oslo.")
    await turn(litellm, router, tracer, messages, "Which is warmer?", stream=True)
    print(messages[-1]["content"])
    await asyncio.sleep(1)  # LiteLLM logs from a background worker: let it end the last spans


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="litellm", instrumentation="native",
                   packages=["litellm", "openai", "httpx", "httpx2", "aiohttp", "pydantic", "tiktoken",
                             "opentelemetry-api", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="router.acompletion (Router over gpt-4o and gpt-4o-mini, fallbacks gpt-4o -> gpt-4o-mini, "
                         "num_retries=0, each deployment's max_retries=0) in a hand-written loop, "
                         "litellm.callbacks=['otel'] (USE_OTEL_LITELLM_REQUEST_SPAN=true); two turns, each under an "
                         "application span carrying session.id: turn one's parallel tool calls, one raising, then "
                         "gpt-4o failing with HTTP 500 and gpt-4o-mini answering; turn two streamed, gpt-4o failing "
                         "with HTTP 429 and gpt-4o-mini streaming the answer; the failed requests are in "
                         "llm_errors.jsonl") as rec:
        rec.env()
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # offline: litellm's bundled prices
        os.environ["USE_OTEL_LITELLM_REQUEST_SPAN"] = "true"
        import litellm
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "weather-bot"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
        litellm.callbacks = ["otel"]
        tracer = provider.get_tracer("weather-bot")

        def deployment(name: str) -> dict[str, Any]:
            return {"model_name": name, "litellm_params": {"model": f"openai/{name}", "api_base": rec.base_url,
                                                           "api_key": "sk-fake", "max_retries": 0}}

        router = litellm.Router(model_list=[deployment("gpt-4o"), deployment("gpt-4o-mini")],
                                fallbacks=[{"gpt-4o": ["gpt-4o-mini"]}], num_retries=0)
        asyncio.run(conversation(litellm, router, tracer))
        rec.flush(provider)


if __name__ == "__main__":
    main()
