"""Re-record: a LangChain 1.x `create_agent` whose booking tool waits for a person's approval
(`HumanInTheLoopMiddleware`, a LangGraph `interrupt`), on `ChatAnthropic` with extended thinking, its graph
checkpointed (`MemorySaver`, a `thread_id`), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_interrupt && \
        /tmp/cap-langgraph_openinference_interrupt/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-anthropic==1.7.10 anthropic==2.17.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_interrupt/bin/python tests/captures/langgraph_openinference_interrupt/record.py

Why: human in the loop. LangChain 1.x's documented way to have a person review a sensitive tool call is
`HumanInTheLoopMiddleware(interrupt_on={...})` on a `create_agent` with a checkpointer (LangChain's "Human-in-the-loop"
docs; the middleware's own docstring shows the batched mode used here): after the model answers with a call of a
listed tool, the middleware's `after_model` hook raises LangGraph's `interrupt(HITLRequest)` (the calls to review,
each with a description), the run stops there with the state checkpointed, and the application resumes it with
`Command(resume={"decisions": [...]})` on the same thread; the hook runs again from its start, `interrupt()` now
returning the decisions, and the approved calls run. A trajectory should show what the agent asked the person, the
person's answer where it was given, the approved tool's result on its call, and no LLM call twice (the model node is
not re-run on resume: its answer is in the checkpoint). Every call answers with a thinking block first (distinct
text per call, thinking tokens in usage), re-sent in the next call's history, as in
`langgraph_openinference_anthropic-thinking`.

Built as the docs show: `create_agent(model, tools, middleware=[HumanInTheLoopMiddleware(...)], checkpointer=
MemorySaver(), name=…)` run with `config={"configurable": {"thread_id": …}}` and `version="v2"` (so `invoke` returns
a `GraphOutput` whose `interrupts` hold the request). The session is that thread id alone: OpenInference's LangChain
tracer records a run's `metadata.thread_id` as `session.id`, and LangGraph copies the configurable thread id into
every run's metadata; no `using_session`. get_weather raises a `ToolException` once, handled as LangChain's tools docs
show (`StructuredTool.from_function(..., handle_tool_error=True)`: the exception's text is the ToolMessage the model
is sent, with `status="error"`).

Turn 1 (`invoke`): the model thinks, says it will look, and calls book_hotel and get_weather in parallel; book_hotel
needs approval, so the run stops with the interrupt (no tool has run). The application approves
(`invoke(Command(resume={"decisions": [{"type": "approve"}]}))`): book_hotel books, get_weather raises once; the
model thinks and calls get_weather again; then thinks and answers. Turn 2, same thread, streamed (`stream(…,
stream_mode="messages")`: ChatAnthropic streams, `thinking_delta` and `signature_delta` events included): the model
thinks and calls convert_currency (not reviewed), then thinks and answers. Five LLM calls, three traces (one per
`invoke`/`stream`). (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-interrupt-1"
MODEL = "claude-sonnet-4-5"
REPLIES = [
    # turn 1: text and two tool uses in parallel, after the model's thinking; book_hotel waits for approval
    {"reasoning": "The user wants a hotel in Oslo for two nights and the weather there. The booking and the "
                  "weather are independent, so I call book_hotel and get_weather together.",
     "text": "I'll book the hotel and check the weather in Oslo.", "output_tokens": 158, "reasoning_tokens": 92,
     "tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    # approved: the booking went through, get_weather raised: try it again
    {"reasoning": "The booking was approved and went through: Hotel Nord, ref OSL-42. The weather service failed "
                  "with a timeout, which is transient, so I ask for the weather once more.",
     "output_tokens": 127, "reasoning_tokens": 84,
     "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"reasoning": "The weather came back this time: rainy, 9°C. I can confirm the booking with its reference and "
                  "suggest an umbrella.",
     "output_tokens": 141, "reasoning_tokens": 71,
     "text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy at 9°C: pack an umbrella."},
    # turn 2 (streamed)
    {"reasoning": "Two nights at 1500 NOK is 3000 NOK. Rather than guess a rate, convert it with convert_currency.",
     "output_tokens": 112, "reasoning_tokens": 77,
     "tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}]},
    {"reasoning": "convert_currency gives 256 EUR for 3000 NOK. Give the total in both currencies.",
     "output_tokens": 86, "reasoning_tokens": 49,
     "text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
]
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
APPROVAL = {"decisions": [{"type": "approve"}]}
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-anthropic", "anthropic", "openinference-instrumentation-langchain",
            "openinference-instrumentation", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name travel_agent) on ChatAnthropic with extended thinking (budget_tokens 2048, every call a "
         "thinking block first, its thinking tokens in usage.output_tokens_details), HumanInTheLoopMiddleware("
         "interrupt_on={'book_hotel': approve/edit/reject}) batched, MemorySaver, thread_id the session (no "
         "using_session), invoke(version='v2'). Turn 1 invoke: text and book_hotel + get_weather in parallel, "
         "interrupted for book_hotel's approval; invoke(Command(resume={'decisions': [{'type': 'approve'}]})): "
         "book_hotel runs, get_weather raises a ToolException once (handle_tool_error=True sends its text), retried, "
         "answered; turn 2 stream_mode='messages' (the model streams): convert_currency, answered. Three traces")


def run() -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langchain_anthropic import ChatAnthropic
    from langchain_core.tools import StructuredTool, ToolException, tool
    from langgraph.checkpoint.memory import MemorySaver
    from langgraph.types import Command

    model = ChatAnthropic(model_name=MODEL, max_tokens=4096, timeout=30, stop=None,  # type: ignore[call-arg]
                          thinking={"type": "enabled", "budget_tokens": 2048})
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
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config, version="v2")
    (asked,) = first.interrupts
    print("interrupted:", asked.value)
    resumed = agent.invoke(Command(resume=APPROVAL), config, version="v2")
    assert not resumed.interrupts, resumed.interrupts
    print(resumed.value["messages"][-1].text)
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

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-approval"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        run()
        rec.flush(provider)


if __name__ == "__main__":
    main()
