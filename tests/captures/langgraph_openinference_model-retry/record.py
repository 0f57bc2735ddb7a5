"""Re-record: a LangChain 1.x `create_agent` retrying its model on an error with LangChain v1's
`ModelRetryMiddleware(max_retries=2)`, gpt-4o failing once a turn, checkpointed (`MemorySaver`, a `thread_id`),
traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_model-retry && \
        /tmp/cap-langgraph_openinference_model-retry/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_model-retry/bin/python tests/captures/langgraph_openinference_model-retry/record.py

Why: a model request that fails and is made again, by the agent, of the same model. LangChain v1's middleware docs
("Model retry") show `create_agent(model, tools, middleware=[ModelRetryMiddleware(max_retries=…, backoff_factor=…,
initial_delay=…)])`: its `wrap_model_call` calls the model handler again after an exception (by default any but a
model error marked not retryable), sleeping a backoff between attempts, up to `max_retries` retries. The client's own
retries are off (`ChatOpenAI(max_retries=0)`, else the OpenAI SDK retries a 500 or a 429 itself and the middleware
never sees the error). A trajectory should show one agent step per answer, each failed attempt listed on it (not a
step, not lost), and bill only the answered calls, as the fallback captures do (langgraph_openinference_fallback).

Built as the docs show: `create_agent(model, tools, system_prompt=…, name=…, middleware=[ModelRetryMiddleware(…)],
checkpointer=MemorySaver())` run with `config={"configurable": {"thread_id": …}}`; the session is that thread id
(the tracer records a run's `metadata.thread_id` as `session.id`), no `using_session`. get_weather raises a
`ToolException` once, handled as LangChain's tools docs show (`StructuredTool.from_function(...,
handle_tool_error=True)`: the exception's text is the ToolMessage the model is sent).

Turn 1 (`invoke`): gpt-4o fails with HTTP 500, the retry answers with text and get_weather + find_hotel in parallel;
get_weather raises once; gpt-4o calls it again; then answers. Turn 2, same thread, streamed (`stream(…,
stream_mode="messages")`: the chat model streams, `stream_usage=True` as langchain-openai defaults to on OpenAI's own
URL, so the streamed calls report tokens): gpt-4o streams a convert_currency call; its next request, after the tool
result, fails with HTTP 429 (rate limited) and the retry streams the answer. Seven requests, five answered
(`llm_errors.jsonl` holds the two failed ones), two traces. Installed then (pip freeze, the packages that matter;
also in meta.json): langchain 1.5.2, langchain-core 1.8.3, langgraph 1.2.24, langgraph-prebuilt 1.1.3,
langgraph-checkpoint 4.3.2, langchain-openai 1.8.1, openai 3.63.0, openinference-instrumentation-langchain 0.1.80,
openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42, opentelemetry-sdk and
-exporter-otlp-proto-http 1.45.2 (each the newest).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-model-retry-1"
MODEL = "gpt-4o"
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?"]
REPLIES = [
    # turn 1: the first request fails; the middleware's retry answers with text and two calls in parallel
    {"error": {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}},
    {"text": "I'll check Bergen's weather and look for a hotel.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "find_hotel", "arguments": {"city": "Bergen", "nights": 3}}],
     "input_tokens": 214, "output_tokens": 37},
    # get_weather raised: the model asks once more
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "input_tokens": 303, "output_tokens": 15},
    {"text": "Bergen is rainy at 8°C. Hotel Bryggen has a room for 3 nights at 1400 NOK a night.",
     "input_tokens": 331, "output_tokens": 26},
    # turn 2 (streamed): a convert_currency call; the request after its result is rate-limited once, then answered
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 4200, "currency": "NOK"}}],
     "input_tokens": 374, "output_tokens": 19},
    {"error": {"status": 429, "message": "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500.",
               "type": "requests", "code": "rate_limit_exceeded"}},
    {"text": "3 nights at Hotel Bryggen come to 4200 NOK, about 359 EUR.", "input_tokens": 409, "output_tokens": 18},
]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name trip_agent) on ChatOpenAI(model='gpt-4o', max_retries=0, stream_usage=True) (Chat "
         "Completions) with middleware=[ModelRetryMiddleware(max_retries=2, backoff_factor=2.0, initial_delay=0.5)], "
         "MemorySaver, thread_id the session (no using_session). Turn 1 invoke: gpt-4o fails with HTTP 500, the retry "
         "answers text and get_weather + find_hotel in parallel, get_weather raising a ToolException once "
         "(handle_tool_error=True sends its text); gpt-4o calls it again, then answers. Turn 2 stream_mode='messages' "
         "(the model streams): gpt-4o streams convert_currency; the next request fails with HTTP 429, the retry "
         "streams the answer. 7 requests, 5 answered")


def run() -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelRetryMiddleware
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    # max_retries=0: the middleware retries, not the OpenAI client. stream_usage=True: what langchain-openai defaults
    # to on OpenAI's own URL (off for any other, as here).
    model = ChatOpenAI(model=MODEL, max_retries=0, timeout=30, stream_usage=True)
    failures = {"get_weather": 1}

    def get_weather(city: str) -> str:
        """The weather in a city now."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise ToolException("the weather service did not answer in time")
        return {"Bergen": "rainy, 8°C"}[city]

    @tool
    def find_hotel(city: str, nights: int) -> str:
        """Find a hotel room in a city."""
        return f"Hotel Bryggen, {city}: a room free for {nights} nights, 1400 NOK a night"

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount to EUR."""
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR"

    weather = StructuredTool.from_function(func=get_weather, handle_tool_error=True)
    agent = create_agent(model, tools=[weather, find_hotel, convert_currency], name="trip_agent",
                         system_prompt="You are a travel assistant. Use the tools for the weather, hotels and "
                                       "converting costs to EUR.",
                         middleware=[ModelRetryMiddleware(max_retries=2, backoff_factor=2.0, initial_delay=0.5)],
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

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-model-retry"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
