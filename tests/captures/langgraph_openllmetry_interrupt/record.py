"""Re-record: a LangChain 1.x `create_agent` whose booking tool waits for a person's review
(`HumanInTheLoopMiddleware`, a LangGraph `interrupt`), on a plain `ChatOpenAI`, its graph checkpointed
(`MemorySaver`, a `thread_id`), traced by OpenLLMetry (opentelemetry-instrumentation-langchain); the reviewer
*edits* the call: the scenario of `langgraph_openinference_interrupt` under the other LangChain tracer.

    python3 -m venv /tmp/cap-langgraph_openllmetry_interrupt && \
        /tmp/cap-langgraph_openllmetry_interrupt/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langchain-protocol==0.0.20 langgraph==1.2.24 \
        langgraph-prebuilt==1.1.3 langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        opentelemetry-instrumentation-langchain==0.62.4 opentelemetry-semantic-conventions-ai==0.5.1 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openllmetry_interrupt/bin/python tests/captures/langgraph_openllmetry_interrupt/record.py

The newest release of each, but langchain-core: 1.8.4 needs langchain-protocol>=0.0.22, which the index here does not
have (0.0.20 is its newest).

Why: human in the loop, the reviewer changing what the agent is about to do. LangChain 1.x's documented way to have a
person review a sensitive tool call is `HumanInTheLoopMiddleware(interrupt_on={...})` on a `create_agent` with a
checkpointer (LangChain's "Human-in-the-loop" docs; the batched mode of the middleware's docstring): after the model
answers with a call of a listed tool, the middleware's `after_model` hook raises LangGraph's `interrupt(HITLRequest)`,
the run stops with the state checkpointed, and the application resumes it with `Command(resume={"decisions":
[...]})` on the same thread. An `edit` decision (`{"type": "edit", "edited_action": {"name", "args"}}`) keeps the
model's own call in its message (LangChain 1.5: "Keep the model's own call in the message; `wrap_tool_call`
substitutes the reviewer's at execution time"): the tool runs with the reviewer's arguments, and the middleware
prepends a notice to its result saying so ("Note: a human reviewer replaced this tool call … Executed instead: …").
A trajectory should show what the agent asked the person, the person's answer (the edit) where it was given, the
edited call's result on the model's call, and no LLM call twice (the model node is not re-run on resume).

Built as the docs show: `create_agent(model, tools, middleware=[HumanInTheLoopMiddleware(...)], checkpointer=
MemorySaver(), name=…)` run with `version="v2"` (`invoke` returns a `GraphOutput` whose `interrupts` hold the
request). OpenLLMetry's LangChain instrumentation is set up as its README shows (`LangchainInstrumentor().instrument(
tracer_provider=…)`) and the session given as `langgraph_openllmetry_swarm` gives it: run metadata
(`config["metadata"]["session_id"]`, the thread id), which the instrumentation records as
`traceloop.association.properties.session_id`. get_weather raises a `ToolException` once, handled as LangChain's
tools docs show (`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the ToolMessage
the model is sent, with `status="error"`). The model answers plain chat completions, no reasoning
(`ChatOpenAI(stream_usage=True)` so the streamed calls report tokens).

Turn 1 (`invoke`): the model says it will look and calls book_hotel (2 nights) and get_weather in parallel; book_hotel
needs review, so the run stops with the interrupt (no tool has run). The reviewer edits the booking to 3 nights
(`invoke(Command(resume={"decisions": [{"type": "edit", "edited_action": {"name": "book_hotel", "args": {"city":
"Oslo", "nights": 3}}}]}))`): book_hotel books 3 nights, get_weather raises once; the model calls get_weather again,
then answers. Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`): the model calls convert_currency
(not reviewed), then answers. Five LLM calls; three traces of runs (one per `invoke`/`stream`), and a fourth of the
instrumentation's `create_agent` span. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-ll-interrupt-1"
REPLIES = [
    # turn 1: text and two tool calls in parallel; book_hotel waits for review
    {"text": "I'll book the hotel and check the weather in Oslo.",
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # resumed with the reviewer's edit (3 nights): the booking went through, get_weather raised: try it again
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Booked Hotel Nord in Oslo for 3 nights, as your reviewer changed it (ref OSL-42). Oslo is rainy at "
             "9°C: pack an umbrella."},
    # turn 2 (streamed)
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 4500, "currency": "NOK"}}]},
    {"text": "Three nights at 1500 NOK come to 4500 NOK, about 385 EUR."},
]
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
EDIT = {"decisions": [{"type": "edit", "edited_action": {"name": "book_hotel", "args": {"city": "Oslo", "nights": 3}}}]}
PACKAGES = ["langchain", "langchain-core", "langchain-protocol", "langgraph", "langgraph-prebuilt",
            "langgraph-checkpoint", "langchain-openai", "openai", "opentelemetry-instrumentation-langchain",
            "opentelemetry-semantic-conventions-ai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name travel_agent) on ChatOpenAI (plain chat completions, stream_usage=True), "
         "HumanInTheLoopMiddleware(interrupt_on={'book_hotel': approve/edit/reject}) batched, MemorySaver, thread_id; "
         "OpenLLMetry's LangchainInstrumentor, the session the thread id as run metadata (config metadata "
         "session_id). Turn 1 invoke: text and book_hotel(2 nights) + get_weather in parallel, interrupted for "
         "book_hotel's review; invoke(Command(resume={'decisions': [{'type': 'edit', 'edited_action': {'name': "
         "'book_hotel', 'args': {'city': 'Oslo', 'nights': 3}}}]})): book_hotel runs with 3 nights (its result "
         "prefixed with the middleware's edit notice), get_weather raises a ToolException once "
         "(handle_tool_error=True sends its text), retried, answered; turn 2 stream_mode='messages': "
         "convert_currency, answered. Three traces of runs (and create_agent's own)")


def run(rec: Recording) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.types import Command

    model = ChatOpenAI(model="gpt-4o", base_url=rec.base_url, api_key="sk-fake", stream_usage=True)
    failures = {"get_weather": 1}

    @tool
    def book_hotel(city: str, nights: int) -> str:
        """Book a hotel room (charges the user's card)."""
        return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

    def get_weather(city: str) -> str:
        """The weather in a city."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise ToolException("the weather service did not answer in time")
        return {"Oslo": "rainy, 9°C"}[city]

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount to EUR."""
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR"

    weather = StructuredTool.from_function(func=get_weather, handle_tool_error=True)
    review = HumanInTheLoopMiddleware(interrupt_on={"book_hotel": {"allowed_decisions": ["approve", "edit", "reject"]}})
    agent = create_agent(model, tools=[book_hotel, weather, convert_currency], name="travel_agent",
                         system_prompt="You are a travel agent. Book hotels, check the weather, convert costs to EUR.",
                         middleware=[review], checkpointer=MemorySaver())
    # OpenLLMetry turns run metadata into traceloop.association.properties.* (the session id, as in
    # langgraph_openllmetry_swarm); the thread id is the checkpoint the resume carries on from.
    config: Any = {"configurable": {"thread_id": SESSION}, "metadata": {"session_id": SESSION}}
    first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config, version="v2")
    (asked,) = first.interrupts
    print("interrupted:", asked.value)
    resumed = agent.invoke(Command(resume=EDIT), config, version="v2")
    assert not resumed.interrupts, resumed.interrupts
    print(resumed.value["messages"][-1].text)
    for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                         stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-review"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangchainInstrumentor().instrument(tracer_provider=provider)
        run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
