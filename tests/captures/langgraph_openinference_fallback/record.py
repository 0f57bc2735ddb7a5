"""Re-record: a LangChain 1.x `create_agent` whose model is
`ChatOpenAI(gpt-4o).with_fallbacks([ChatOpenAI(gpt-4o-mini)])` (LangChain's documented model fallbacks), its first
model failing once a turn, checkpointed (`MemorySaver`, a `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_fallback && \
        /tmp/cap-langgraph_openinference_fallback/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_fallback/bin/python tests/captures/langgraph_openinference_fallback/record.py

Why: a model request that fails and is answered by a fallback model. LangChain's "Fallbacks" docs show
`llm.with_fallbacks([other_llm])` (a `RunnableWithFallbacks`: each runnable tried in turn until one does not raise),
with the client retries off (`max_retries=0`, else the OpenAI SDK retries a 500 or a 429 itself and the
fallback is never reached). `create_agent` takes it as its model (typed `str | BaseChatModel`, it checks neither at
run time: its `bind_tools` is forwarded to each runnable by `RunnableWithFallbacks.__getattr__`, giving a
`RunnableWithFallbacks` of bound models), so LangChain v1's `ModelFallbackMiddleware` is not needed. OpenInference's
LangChain tracer records the `RunnableWithFallbacks` as a CHAIN span holding one LLM span per model it tried: the
failed one with ERROR status and its exception, then the one that answered. A trajectory should show one agent step
per answer, with the model that gave it, each failed attempt listed on it (not a step, not lost), and bill only
the answered calls.

Built as the docs show: `create_agent(model, tools, system_prompt=…, name=…, checkpointer=MemorySaver())` run with
`config={"configurable": {"thread_id": …}}`; the session is that thread id (the tracer records a run's
`metadata.thread_id` as `session.id`), no `using_session`. get_weather raises a `ToolException` once, handled as
LangChain's tools docs show (`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the
ToolMessage the model is sent).

Turn 1 (`invoke`): gpt-4o fails with HTTP 500, gpt-4o-mini answers with text and get_weather + find_hotel in
parallel; get_weather raises once; gpt-4o (tried first again at the next request) calls it again; then answers.
Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`: the chat models stream, `stream_usage=True` as
langchain-openai defaults to on OpenAI's own URL, so the streamed calls report tokens): gpt-4o fails with HTTP
429 (rate limited), gpt-4o-mini streams a convert_currency call; gpt-4o answers. Seven requests, five answered
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

SESSION = "lg-oi-fallback-1"
PRIMARY, FALLBACK = "gpt-4o", "gpt-4o-mini"
QUESTIONS = ["I'm going to Oslo for 2 nights: what's the weather there, and find me a hotel.",
             "What do 2 nights there cost in euros?"]
REPLIES = [
    # turn 1: gpt-4o fails; gpt-4o-mini answers with text and two calls in parallel
    {"error": {"status": 500, "message": "The server had an error while processing your request. Sorry about that!"}},
    {"text": "I'll check Oslo's weather and look for a hotel.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "find_hotel", "arguments": {"city": "Oslo", "nights": 2}}],
     "input_tokens": 212, "output_tokens": 38},
    # get_weather raised: gpt-4o, tried first again, asks once more
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}], "input_tokens": 301, "output_tokens": 14},
    {"text": "Oslo is rainy at 9°C. Hotel Nord has a room for 2 nights at 1500 NOK a night.",
     "input_tokens": 330, "output_tokens": 24},
    # turn 2 (streamed): gpt-4o is rate-limited; gpt-4o-mini streams a call
    {"error": {"status": 429, "message": "Rate limit reached for gpt-4o on requests per min (RPM): Limit 500.",
               "type": "requests", "code": "rate_limit_exceeded"}},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}],
     "input_tokens": 372, "output_tokens": 19},
    {"text": "2 nights at Hotel Nord come to 3000 NOK, about 256 EUR.", "input_tokens": 405, "output_tokens": 17},
]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name trip_agent) on ChatOpenAI(model='gpt-4o', max_retries=0, stream_usage=True)"
         ".with_fallbacks([ChatOpenAI(model='gpt-4o-mini', max_retries=0, stream_usage=True)]) (Chat Completions), "
         "MemorySaver, thread_id the session (no using_session). Turn 1 invoke: gpt-4o fails with HTTP 500, "
         "gpt-4o-mini answers text and get_weather + find_hotel in parallel, get_weather raising a ToolException "
         "once (handle_tool_error=True sends its text); gpt-4o calls it again, then answers. Turn 2 "
         "stream_mode='messages' (the models stream): gpt-4o fails with HTTP 429, gpt-4o-mini streams "
         "convert_currency; gpt-4o answers. 7 requests, 5 answered")


def run() -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    # stream_usage=True: what langchain-openai defaults to on OpenAI's own URL (off for any other, as here).
    model = ChatOpenAI(model=PRIMARY, max_retries=0, timeout=30, stream_usage=True).with_fallbacks(
        [ChatOpenAI(model=FALLBACK, max_retries=0, timeout=30, stream_usage=True)])
    failures = {"get_weather": 1}

    def get_weather(city: str) -> str:
        """The weather in a city now."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise ToolException("the weather service did not answer in time")
        return {"Oslo": "rainy, 9°C"}[city]

    @tool
    def find_hotel(city: str, nights: int) -> str:
        """Find a hotel room in a city."""
        return f"Hotel Nord, {city}: a room free for {nights} nights, 1500 NOK a night"

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount to EUR."""
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR"

    weather = StructuredTool.from_function(func=get_weather, handle_tool_error=True)
    agent = create_agent(model, tools=[weather, find_hotel, convert_currency],  # type: ignore[arg-type]
                         name="trip_agent",
                         system_prompt="You are a travel assistant. Use the tools for the weather, hotels and "
                                       "converting costs to EUR.",
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

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-fallback"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
