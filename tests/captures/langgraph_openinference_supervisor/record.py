"""Re-record: LangChain's supervisor pattern (a `create_agent` supervisor calling two `create_agent` workers
wrapped as tools), traced by OpenInference.

    python3 -m venv /tmp/cap-langgraph_openinference_supervisor && \
        /tmp/cap-langgraph_openinference_supervisor/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openinference_supervisor/bin/python tests/captures/langgraph_openinference_supervisor/record.py

Why not `langgraph-supervisor`'s `create_supervisor` (0.0.31, installable here): its README now recommends "the
supervisor pattern directly via tools rather than this library", and LangChain's migration guide
(`oss/python/migrate/langgraph-supervisor`) says the package is no longer actively maintained and maps
`create_supervisor` with worker agents as graph nodes to `create_agent` with subagents wrapped as `@tool`
functions. So this is the docs' supervisor ("Build a personal assistant with subagents"): each worker is its own
`create_agent` graph, and the supervisor's tool for it runs `worker.invoke({"messages": [request]})` and returns
the worker's last message's text. The supervisor keeps the conversation: an `InMemorySaver` checkpointer and
`config={"configurable": {"thread_id": …}}`, as LangGraph's persistence docs show; the session is also OpenInference's
`using_session` (as `langgraph_openinference_subgraph` gives it), the same id (the instrumentor would read the
`thread_id` LangGraph copies into the run metadata as `session.id` too).

The booking worker's tool errors are handled as LangChain's agents docs show ("Tool error handling"): a
`@wrap_tool_call` middleware around the ToolNode's execution turns an exception into the ToolMessage the model is
sent (create_agent's ToolNode otherwise re-raises anything but an invocation error).

Turn 1 (`invoke`): the supervisor calls `book_travel`; the booking agent calls book_hotel and get_weather in
parallel, book_hotel raising TimeoutError once (the middleware's error text is its result), calls book_hotel again,
answers; the supervisor answers. Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`,
`ChatOpenAI(stream_usage=True)` so the streamed calls report tokens; the worker's call, made inside the tool,
streams too): the supervisor calls `check_budget`, the budget agent answers from its instructions, the supervisor
answers. Eight LLM calls. (The versions the capture was recorded with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-supervisor-1"
REPLIES = [
    # turn 1: the supervisor hands the booking to the booking agent
    {"tool_calls": [{"name": "book_travel",
                     "arguments": {"request": "Book a hotel in Oslo for 2 nights and check the weather in Oslo."}}]},
    # the booking agent: two tools in parallel, book_hotel raising once, then again, then its answer
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Oslo is rainy, 9°C."},
    {"text": "Your hotel is booked: Hotel Nord in Oslo for 2 nights, ref OSL-42. Expect rain at 9°C: pack an "
             "umbrella."},
    # turn 2 (streamed): the supervisor asks the budget agent, which answers from its instructions
    {"tool_calls": [{"name": "check_budget",
                     "arguments": {"request": "Convert 2 nights at 1500 NOK a night to EUR."}}]},
    {"text": "3000 NOK is about 256 EUR at 11.7 NOK per EUR."},
    {"text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
]
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
WEATHER = {"Oslo": "rainy, 9°C"}
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "openinference-instrumentation-langchain", "openinference-instrumentation",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("LangChain's supervisor pattern (langgraph-supervisor is no longer maintained; its README and LangChain's "
         "migration guide point to it): a create_agent supervisor (InMemorySaver, thread_id) whose tools book_travel "
         "and check_budget invoke two create_agent workers. Turn 1 invoke: the booking agent calls book_hotel and "
         "get_weather in parallel, book_hotel raising once (a @wrap_tool_call middleware sends the model its error "
         "text), retried; turn 2 stream_mode='messages' (stream_usage=True): the budget agent answers. "
         "using_session with the thread id")


def run(rec: Recording) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

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

    @wrap_tool_call
    def handle_tool_errors(request: Any, handler: Any) -> Any:
        """Send the model the tool's error instead of failing the run (LangChain's documented middleware)."""
        try:
            return handler(request)
        except Exception as e:  # every tool error goes back to the model, as the docs show
            return ToolMessage(content=f"Tool error: Please check your input and try again. ({e})",
                               tool_call_id=request.tool_call["id"])

    booking_agent = create_agent(model, tools=[book_hotel, get_weather], middleware=[handle_tool_errors],
                                 system_prompt="You book hotels and check the weather.", name="booking_agent")
    budget_agent = create_agent(model, tools=[], name="budget_agent",
                                system_prompt="You convert travel costs. 1 EUR is 11.7 NOK.")

    @tool
    def book_travel(request: str) -> str:
        """Book hotels and check the weather at a destination, in natural language."""
        result = booking_agent.invoke({"messages": [{"role": "user", "content": request}]})
        return str(result["messages"][-1].text)

    @tool
    def check_budget(request: str) -> str:
        """Convert and total travel costs, in natural language."""
        result = budget_agent.invoke({"messages": [{"role": "user", "content": request}]})
        return str(result["messages"][-1].text)

    supervisor = create_agent(model, tools=[book_travel, check_budget], checkpointer=InMemorySaver(),
                              system_prompt="You are a travel assistant. Delegate bookings and weather to "
                                            "book_travel and costs to check_budget.",
                              name="travel_supervisor")
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = supervisor.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    for chunk, _metadata in supervisor.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
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

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-supervisor"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        with using_session(SESSION):
            run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
