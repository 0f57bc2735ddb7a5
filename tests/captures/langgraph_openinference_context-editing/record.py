"""Re-record: a LangChain 1.x `create_agent` whose older tool results LangChain v1's `ContextEditingMiddleware`
clears from what the model is sent (`ClearToolUsesEdit`, a low token trigger, so that it clears mid-session),
checkpointed (`MemorySaver`, a `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_context-editing && \
        /tmp/cap-langgraph_openinference_context-editing/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_context-editing/bin/python \
        tests/captures/langgraph_openinference_context-editing/record.py

Why: context editing, the other way LangChain v1 keeps an agent's context small. LangChain's middleware docs
("Context editing") show `create_agent(model, tools, middleware=[ContextEditingMiddleware(edits=[ClearToolUsesEdit(
trigger=…, keep=…)])])`. Unlike `SummarizationMiddleware` it changes nothing in the thread: it wraps each model call
(`wrap_model_call`, no graph node, no span of its own) and, when the messages' approximate token count
(`count_tokens_approximately`) passes `trigger`, sends the model a copy in which every tool result but the `keep`
latest is replaced by `placeholder` (the ToolMessage's content; its `response_metadata.context_editing` marked
`{"cleared": true, "strategy": "clear_tool_uses"}`), the tool calls asking for them left as they were. The checkpoint
keeps the results; every later call clears them again, from the whole thread. A trajectory should show each tool
result once, on its call, as the model first saw it; a later call's re-sent `[cleared]` no new result, no copied step,
no error; the clearing where it happened (which calls' results the model no longer saw, from which call on); every
question once.

Built as the docs show: `create_agent(model, tools, system_prompt=…, name=…, middleware=[ContextEditingMiddleware(
edits=[ClearToolUsesEdit(trigger=230, keep=2, placeholder="[cleared]")])], checkpointer=MemorySaver())` run with
`config={"configurable": {"thread_id": …}}`; the session is that thread id (the tracer records a run's
`metadata.thread_id` as `session.id`), no `using_session`. get_weather raises a `ToolException` once, handled as
LangChain's tools docs show (`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the
ToolMessage the model is sent).

Turn 1 (`invoke`): gpt-4o answers with text and get_weather + find_hotel in parallel; get_weather raises once; gpt-4o
calls it again, then answers (under the trigger: nothing cleared). Turn 2, same thread, streamed (`stream(…,
stream_mode="messages")`, `stream_usage=True` as langchain-openai defaults to on OpenAI's own URL): gpt-4o streams a
convert_currency call, then the answer. Turn 3 (`invoke`): walking_distance and find_events in parallel, then the
answer. From turn 2's first call the thread counts more than 230 tokens (about 256; turn 1's last call 208): that call
is sent `[cleared]` for turn 1's failed get_weather result (3 results, the 2 latest kept), turn 2's second call also
for find_hotel's (4 results), turn 3's first call the same two, its answer also for the get_weather retry's and
convert_currency's (6 results). Seven calls, three traces. Installed then (pip freeze, the
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

SESSION = "lg-oi-context-editing-1"
MODEL = "gpt-4o"
QUESTIONS = ["I'm going to Bergen for 3 nights: what's the weather there, and find me a hotel.",
             "What do 3 nights there cost in euros?",
             "Is that hotel close to the fish market, and is anything on at Grieghallen on Friday?"]
# The token count past which the middleware clears (its approximate count of the thread's messages) and how many of
# the latest tool results it keeps: low, so that a short session clears from turn two on.
TRIGGER, KEEP = 230, 2
REPLIES = [
    # turn 1: text and two calls in parallel; get_weather raises once and is asked again; the answer
    {"text": "I'll check Bergen's weather and look for a hotel.",
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}},
                    {"name": "find_hotel", "arguments": {"city": "Bergen", "nights": 3}}],
     "input_tokens": 262, "output_tokens": 37},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen"}}],
     "input_tokens": 371, "output_tokens": 15},
    {"text": "Bergen is rainy at 8°C. Hotel Bryggen, on the Bryggen wharf, has a room for 3 nights at 1400 NOK a "
             "night.",
     "input_tokens": 399, "output_tokens": 29},
    # turn 2 (streamed)
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 4200, "currency": "NOK"}}],
     "input_tokens": 436, "output_tokens": 19},
    {"text": "3 nights at Hotel Bryggen come to 4200 NOK, about 359 EUR.", "input_tokens": 459, "output_tokens": 18},
    # turn 3: two calls in parallel, then the answer
    {"tool_calls": [{"name": "walking_distance", "arguments": {"origin": "Hotel Bryggen", "to": "Fish market"}},
                    {"name": "find_events", "arguments": {"venue": "Grieghallen", "day": "Friday"}}],
     "input_tokens": 497, "output_tokens": 41},
    {"text": "Yes: the fish market is a 5-minute walk from Hotel Bryggen. On Friday the Bergen Philharmonic plays "
             "Grieg's Piano Concerto at Grieghallen, 19:30.",
     "input_tokens": 561, "output_tokens": 38},
]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "openinference-semantic-conventions", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name trip_agent) on ChatOpenAI(model='gpt-4o', stream_usage=True) (Chat Completions) with "
         f"middleware=[ContextEditingMiddleware(edits=[ClearToolUsesEdit(trigger={TRIGGER}, keep={KEEP}, "
         "placeholder='[cleared]')])] (approximate token count), MemorySaver, thread_id the session (no "
         "using_session). Turn 1 invoke: text and get_weather + find_hotel in parallel, get_weather raising a "
         "ToolException once (handle_tool_error=True sends its text); gpt-4o calls it again, then answers. Turn 2 "
         "stream_mode='messages' (stream_usage=True): convert_currency, then the answer. Turn 3 invoke: "
         "walking_distance + find_events in parallel, then the answer. 7 calls. Sent '[cleared]' first (by the "
         "log's seq): seq 3 "
         "(turn 2's first call) call_0_0 (the failed get_weather), seq 4 call_0_1 (find_hotel), seq 6 (turn 3's "
         "answer) call_1_0 and call_3_0; each later call re-sends those cleared.")


def run() -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ClearToolUsesEdit, ContextEditingMiddleware
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    # stream_usage=True: what langchain-openai defaults to on OpenAI's own URL (off for any other, as here).
    model = ChatOpenAI(model=MODEL, timeout=30, stream_usage=True)
    failures = {"get_weather": 1}

    def get_weather(city: str) -> str:
        """The weather in a city now."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise ToolException("the weather service did not answer in time")
        return {"Bergen": "rainy, 8°C, wind from the south-west at 6 m/s; showers all afternoon"}[city]

    @tool
    def find_hotel(city: str, nights: int) -> str:
        """Find a hotel room in a city."""
        return (f"Hotel Bryggen, Bryggen 5, {city}: a double room free for {nights} nights, 1400 NOK a night, "
                "breakfast included, free cancellation until 48 hours before arrival")

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount to EUR."""
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR at 11.7 {currency} to the euro"

    @tool
    def walking_distance(origin: str, to: str) -> str:
        """How long it takes to walk from one place to another in Bergen."""
        return f"{origin} to {to}: 400 m, a 5-minute walk along Bryggen"

    @tool
    def find_events(venue: str, day: str) -> str:
        """What is on at a venue on a day."""
        return f"{venue}, {day}: Bergen Philharmonic Orchestra, Grieg's Piano Concerto in A minor, 19:30"

    weather = StructuredTool.from_function(func=get_weather, handle_tool_error=True)
    # A low trigger so that a short session clears: past it, every tool result but the 2 latest is sent as
    # "[cleared]" (the placeholder the docs show), the thread itself unchanged.
    agent = create_agent(model, tools=[weather, find_hotel, convert_currency, walking_distance, find_events],
                         name="trip_agent",
                         system_prompt="You are a travel assistant. Use the tools for the weather, hotels, costs in "
                                       "EUR, walking distances and events.",
                         middleware=[ContextEditingMiddleware(edits=[ClearToolUsesEdit(
                             trigger=TRIGGER, keep=KEEP, placeholder="[cleared]")])],
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

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-context-editing"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
