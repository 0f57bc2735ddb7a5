"""Re-record: a LangChain 1.x `create_agent` compacting its context with LangChain v1's `SummarizationMiddleware`
(a low message threshold, so it summarizes twice in the session), checkpointed (`MemorySaver`, a `thread_id`), traced
by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_summarization && \
        /tmp/cap-langgraph_openinference_summarization/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_summarization/bin/python \
        tests/captures/langgraph_openinference_summarization/record.py

Why: context compaction. LangChain v1's middleware docs ("Summarization") show `create_agent(model, tools,
middleware=[SummarizationMiddleware(model=…, trigger=…, keep=…)])`: before each model call (`before_model`) it
counts the thread's messages and, at the trigger, asks its own model (here a cheaper one, gpt-4o-mini) to summarize
the older ones (one user message: its summary prompt with those messages as XML, the call's metadata `lc_source:
summarization`), then replaces the whole history in the checkpoint (`RemoveMessage(REMOVE_ALL_MESSAGES)`) by one
user message, "Here is a summary of the conversation to date:\n\n<summary>" (`additional_kwargs={"lc_source":
"summarization"}`), followed by the `keep` most recent messages (never splitting a tool call from its results).
The agent's later calls send that summary message and the kept messages instead of the whole history. A trajectory
should show every question and answer once, in order; the summarizer's call as a compaction of the context (what
it summarized into), not an ordinary answer nor a new question; the re-sent summary message no new user step, the
kept messages no copied steps, and nothing earlier lost because the model no longer saw it.

Built as the docs show: `create_agent(model, tools, system_prompt=…, name=…, middleware=[SummarizationMiddleware(
model=ChatOpenAI(model="gpt-4o-mini"), trigger=("messages", 8), keep=("messages", 4))], checkpointer=MemorySaver())`
run with `config={"configurable": {"thread_id": …}}`; the session is that thread id (the tracer records a run's
`metadata.thread_id` as `session.id`), no `using_session`. get_weather raises a `ToolException` once, handled as
LangChain's tools docs show (`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the
ToolMessage the model is sent).

Turn 1 (`invoke`, 1 → 7 messages, no summary): gpt-4o answers with text and get_weather + find_hotel in parallel;
get_weather raises once; gpt-4o calls it again; then answers. Turn 2, same thread, streamed (`stream(…,
stream_mode="messages")`: the chat models stream, `stream_usage=True` as langchain-openai defaults to on OpenAI's own
URL; the summary request is streamed too, its `nostream` tag only keeping its tokens out of the app's stream): 8
messages reach the trigger,
so gpt-4o-mini summarizes the first 4 (turn 1's question, the first answer and its two results) and the agent's
model is sent the summary and the 4 kept (the get_weather retry and its result, turn 1's answer, the new question);
it streams a convert_currency call, then the answer. Turn 3 (`invoke`): 9 messages, so gpt-4o-mini summarizes again,
the first summary message among what it summarizes (a summary of a summary), keeping turn 2's call, its result, its
answer and the new question; gpt-4o answers from that. Eight calls, three traces. Installed then (pip freeze, the
packages that matter; also in meta.json): langchain 1.5.2, langchain-core 1.8.3, langgraph 1.2.24, langgraph-prebuilt
1.1.3, langgraph-checkpoint 4.3.2, langchain-openai 1.8.1, openai 3.63.0, openinference-instrumentation-langchain
0.1.80, openinference-instrumentation 0.1.72, openinference-semantic-conventions 0.1.42, opentelemetry-sdk and
-exporter-otlp-proto-http 1.45.2 (each the newest).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-summarization-1"
MODEL, SUMMARY_MODEL = "gpt-4o", "gpt-4o-mini"
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?",
             "Is that hotel close to the fish market?"]
# What the middleware's summary prompt ends with: only its summary requests hold it.
SUMMARY_REQUEST = "Messages to summarize:"
FIRST_SUMMARY = ("## SESSION INTENT\nThe user is planning 3 nights in Bergen and wants the weather and a hotel.\n\n"
                 "## SUMMARY\nget_weather failed once (the weather service did not answer in time). find_hotel found "
                 "Hotel Bryggen, Bergen: a room free for 3 nights at 1400 NOK a night.\n\n## ARTIFACTS\nNone\n\n"
                 "## NEXT STEPS\nGet Bergen's weather again and answer the user.")
SECOND_SUMMARY = ("## SESSION INTENT\nThe user is planning 3 nights in Bergen: weather, a hotel, the cost in euros."
                  "\n\n## SUMMARY\nBergen is rainy at 8°C. Hotel Bryggen has a room for 3 nights at 1400 NOK a night."
                  "\n\n## ARTIFACTS\nNone\n\n## NEXT STEPS\nAnswer the user's next question.")
REPLIES = [
    # turn 1: text and two calls in parallel; get_weather raises once and is asked again; the answer
    {"text": "I'll check Bergen's weather and look for a hotel.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "find_hotel", "arguments": {"city": "Bergen", "nights": 3}}],
     "input_tokens": 214, "output_tokens": 37},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "input_tokens": 303, "output_tokens": 15},
    {"text": "Bergen is rainy at 8°C. Hotel Bryggen has a room for 3 nights at 1400 NOK a night.",
     "input_tokens": 331, "output_tokens": 26},
    # turn 2 (streamed): 8 messages, so the middleware's model summarizes the first 4 before the agent's call
    {"when": SUMMARY_REQUEST, "text": FIRST_SUMMARY, "input_tokens": 812, "output_tokens": 88},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 4200, "currency": "NOK"}}],
     "input_tokens": 352, "output_tokens": 19},
    {"text": "3 nights at Hotel Bryggen come to 4200 NOK, about 359 EUR.", "input_tokens": 387, "output_tokens": 18},
    # turn 3: 9 messages, so it summarizes again (the first summary among them) before the answer
    {"when": SUMMARY_REQUEST, "text": SECOND_SUMMARY, "input_tokens": 845, "output_tokens": 71},
    {"text": "Yes: Hotel Bryggen is on the Bryggen wharf, a five-minute walk from the fish market.",
     "input_tokens": 318, "output_tokens": 21},
]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name trip_agent) on ChatOpenAI(model='gpt-4o', stream_usage=True) (Chat Completions) with "
         "middleware=[SummarizationMiddleware(model=ChatOpenAI(model='gpt-4o-mini'), trigger=('messages', 8), "
         "keep=('messages', 4))], MemorySaver, thread_id the session (no using_session). Turn 1 invoke: text and "
         "get_weather + find_hotel in parallel, get_weather raising a ToolException once (handle_tool_error=True "
         "sends its text); gpt-4o calls it again, then answers. Turn 2 stream_mode='messages' (both models stream, "
         "stream_usage=True): gpt-4o-mini summarizes the first 4 messages (its request streamed, its tokens kept out "
         "of the app's stream by the middleware's nostream tag), then "
         "gpt-4o is sent the summary message and the 4 kept, streams convert_currency, then the answer. Turn 3 invoke: "
         "gpt-4o-mini summarizes again (the first summary among what it summarizes), gpt-4o answers. 8 calls, 2 of "
         "them summaries")


def run() -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    # stream_usage=True: what langchain-openai defaults to on OpenAI's own URL (off for any other, as here). The
    # summarizer's too: in a turn streamed with stream_mode="messages" its request is streamed as well.
    model = ChatOpenAI(model=MODEL, timeout=30, stream_usage=True)
    summarizer = ChatOpenAI(model=SUMMARY_MODEL, timeout=30, stream_usage=True)
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
    # A low threshold so that a short session compacts: at 8 messages, keep the last 4 (the middleware moves the cut
    # so that no tool result is kept without the call that asked for it).
    agent = create_agent(model, tools=[weather, find_hotel, convert_currency], name="trip_agent",
                         system_prompt="You are a travel assistant. Use the tools for the weather, hotels and "
                                       "converting costs to EUR.",
                         middleware=[SummarizationMiddleware(model=summarizer, trigger=("messages", 8),
                                                             keep=("messages", 4))],
                         checkpointer=MemorySaver())
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                         stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])
    third = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[2]}]}, config)
    print([type(m).__name__ for m in third["messages"]])
    print(third["messages"][-1].text)


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-summarization"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
