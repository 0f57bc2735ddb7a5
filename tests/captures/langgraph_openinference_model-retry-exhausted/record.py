"""Re-record: a LangChain 1.x `create_agent` whose `ModelRetryMiddleware(max_retries=2)` runs out of retries (every
attempt at a request fails), checkpointed (`MemorySaver`, a `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_model-retry && \
        /tmp/cap-langgraph_openinference_model-retry/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_model-retry/bin/python \
        tests/captures/langgraph_openinference_model-retry-exhausted/record.py

Why: a model request no answer follows. `langgraph_openinference_model-retry` records the middleware's retries that
were answered; here every attempt at one request fails: the middleware's `on_failure="continue"` (its default, as
LangChain v1's middleware docs show) then ends the model node with an AIMessage of its own ("Model call failed after 3
attempts with …"), and the run goes on. A trajectory should show the request that failed once, where it happened, its
attempts listed on it, no LLM call counted and nothing priced for it (the session's total cost still known), as
openai-agents' failed call is shown (openai-agents_openinference_model-error).

Built as `langgraph_openinference_model-retry` is (the same packages, venv and agent), but a tool result's next request
fails three times: turn 1 (`invoke`): gpt-4o asks get_weather; the request after its result fails with HTTP 500, the
middleware's retries with HTTP 500 and 429; the middleware's own message ends the turn. Turn 2, same thread, streamed
(`stream(…, stream_mode="messages")`): gpt-4o answers, re-sent turn 1's history with the middleware's message in it.
Five requests, two answered (`llm_errors.jsonl` holds the three failed ones), two traces. Installed then (pip freeze,
the packages that matter; also in meta.json): langchain 1.5.2, langchain-core 1.8.3, langgraph 1.2.24,
langgraph-prebuilt 1.1.3, langgraph-checkpoint 4.3.2, langchain-openai 1.8.1, openai 3.63.0,
openinference-instrumentation-langchain 0.1.80, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk and -exporter-otlp-proto-http 1.45.2 (each the newest).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-model-retry-exhausted-1"
MODEL = "gpt-4o"
QUESTIONS = ["What's the weather in Bergen right now?", "Should I pack an umbrella, then?"]
REPLIES = [
    # turn 1: a tool call, then the request after its result fails every attempt the middleware makes
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "input_tokens": 152, "output_tokens": 14},
    {"error": {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}},
    {"error": {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}},
    {"error": {"status": 429, "message": "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500.",
               "type": "requests", "code": "rate_limit_exceeded"}},
    # turn 2 (streamed): answered
    {"text": "Yes: it is raining in Bergen at 8°C, so pack an umbrella.", "input_tokens": 231, "output_tokens": 16},
]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name trip_agent) on ChatOpenAI(model='gpt-4o', max_retries=0, stream_usage=True) (Chat "
         "Completions) with middleware=[ModelRetryMiddleware(max_retries=2, backoff_factor=2.0, initial_delay=0.1)] "
         "(on_failure='continue', the default), MemorySaver, thread_id the session (no using_session). Turn 1 invoke: "
         "gpt-4o calls get_weather; the request after its result fails with HTTP 500, its retries with 500 and 429, "
         "and the middleware's own AIMessage ends the turn. Turn 2 stream_mode='messages': gpt-4o answers. 5 requests, "
         "2 answered")


def run() -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelRetryMiddleware
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    # max_retries=0: the middleware retries, not the OpenAI client. stream_usage=True: what langchain-openai defaults
    # to on OpenAI's own URL (off for any other, as here).
    model = ChatOpenAI(model=MODEL, max_retries=0, timeout=30, stream_usage=True)

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city now."""
        return {"Bergen": "rainy, 8°C"}[city]

    agent = create_agent(model, tools=[get_weather], name="trip_agent",
                         system_prompt="You are a travel assistant. Use the tools for the weather.",
                         middleware=[ModelRetryMiddleware(max_retries=2, backoff_factor=2.0, initial_delay=0.1)],
                         checkpointer=MemorySaver())
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                         stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-model-retry-exhausted"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
