"""Re-record: `langgraph-supervisor`'s `create_supervisor` over two `create_react_agent` workers, traced by
OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_create-supervisor && \
        /tmp/cap-langgraph_openinference_create-supervisor/bin/pip install \
        langgraph-supervisor==0.0.31 langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 \
        langgraph-prebuilt==1.1.3 langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_create-supervisor/bin/python \
        tests/captures/langgraph_openinference_create-supervisor/record.py

Why this package although LangChain deprecates it (its README recommends "the supervisor pattern directly via
tools", which `langgraph_openinference_supervisor` records): 0.0.31 is its newest release, made compatible with
LangChain 1.0, and code built on it is still common. Its handoffs differ from the tool-calling pattern: the
supervisor (a legacy `create_react_agent` named `supervisor_name`) calls a `transfer_to_<worker>` tool that returns
a `Command(goto=<worker>, graph=PARENT)`; the worker then runs as the next node of the outer graph, beside the
supervisor, on the whole shared history, and hands back with a `transfer_back_to_<supervisor>` message pair the
library appends (`add_handoff_back_messages`), after which the supervisor runs again.

Built as the package's README shows: two `create_react_agent` workers (`booking_agent`, `budget_agent`) given to
`create_supervisor(..., supervisor_name="travel_supervisor")`, the workflow compiled with an `InMemorySaver`
checkpointer ("Adding Memory") and run with `config={"configurable": {"thread_id": …}}`; the session is also
OpenInference's `using_session`, the same id (as `langgraph_openinference_supervisor` gives it). The booking
worker's tools are a `ToolNode(..., handle_tool_errors=True)` (LangGraph's documented tool error handling: the
exception's text becomes the ToolMessage the model is sent; the default handler re-raises anything but an
invocation error).

Turn 1 (`invoke`): the supervisor calls `transfer_to_booking_agent`; the booking agent calls book_hotel and
get_weather in parallel, book_hotel raising TimeoutError once (ToolNode's error text is its result), calls
book_hotel again, answers; the supervisor answers. Turn 2, same thread, streamed (`stream(…,
stream_mode="messages")`, `ChatOpenAI(stream_usage=True)` so the streamed calls report tokens): the supervisor
calls `transfer_to_budget_agent`, the budget agent answers from its instructions, the supervisor answers. Eight
LLM calls. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-create-supervisor-1"
REPLIES = [
    # turn 1: the supervisor hands over to the booking agent
    {"tool_calls": [{"name": "transfer_to_booking_agent", "arguments": {}}]},
    # the booking agent: two tools in parallel, book_hotel raising once, then again, then its answer
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy, 9°C."},
    # back with the supervisor, which answers the user
    {"text": "Your hotel is booked: Hotel Nord in Oslo for 2 nights, ref OSL-42. Expect rain at 9°C: pack an "
             "umbrella."},
    # turn 2 (streamed): the supervisor hands over to the budget agent, which answers from its instructions
    {"tool_calls": [{"name": "transfer_to_budget_agent", "arguments": {}}]},
    {"text": "2 nights at 1500 NOK is 3000 NOK, about 256 EUR at 11.7 NOK per EUR."},
    {"text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
]
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
WEATHER = {"Oslo": "rainy, 9°C"}
PACKAGES = ["langgraph-supervisor", "langchain", "langchain-core", "langgraph", "langgraph-prebuilt",
            "langgraph-checkpoint", "langchain-openai", "openai", "openinference-instrumentation-langchain",
            "openinference-instrumentation", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("langgraph-supervisor's create_supervisor (supervisor_name travel_supervisor, the legacy create_react_agent) "
         "over two create_react_agent workers, transfer_to_<worker> handoffs (Command(goto=…)) and the library's "
         "transfer_back_to_travel_supervisor messages; compiled with InMemorySaver, thread_id. Turn 1 invoke: the "
         "booking agent calls book_hotel and get_weather in parallel, book_hotel raising once "
         "(ToolNode(handle_tool_errors=True) sends the model its error text), retried; turn 2 "
         "stream_mode='messages' (stream_usage=True): the budget agent answers. using_session with the thread id")


def run(rec: Recording) -> None:
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph.prebuilt import ToolNode, create_react_agent
    from langgraph_supervisor import create_supervisor

    model = ChatOpenAI(model="gpt-4o", base_url=rec.base_url, api_key="sk-fake", stream_usage=True)
    failures = {"book_hotel": 1}

    @tool
    def book_hotel(city: str, nights: int) -> str:
        """Book a hotel room."""
        if failures["book_hotel"]:
            failures["book_hotel"] -= 1
            raise TimeoutError("the booking service did not answer in time")
        return f"Booked Hotel Nord in {city}, {nights} nights, ref OSL-42"

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        return WEATHER[city]

    booking_agent = create_react_agent(model, tools=ToolNode([book_hotel, get_weather], handle_tool_errors=True),
                                       prompt="You book hotels and check the weather.", name="booking_agent")
    budget_agent = create_react_agent(model, tools=[], prompt="You convert travel costs. 1 EUR is 11.7 NOK.",
                                      name="budget_agent")
    workflow = create_supervisor([booking_agent, budget_agent], model=model, supervisor_name="travel_supervisor",
                                 prompt="You are a travel supervisor. Hand bookings and weather to booking_agent "
                                        "and costs to budget_agent.")
    app = workflow.compile(checkpointer=InMemorySaver())
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = app.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    for chunk, _metadata in app.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                       stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-create-supervisor"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        with using_session(SESSION):
            run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
