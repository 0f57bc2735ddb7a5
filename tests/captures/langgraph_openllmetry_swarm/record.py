"""Re-record: `langgraph-swarm`'s `create_swarm` over two `create_agent` agents handing the conversation to each
other (`create_handoff_tool`), traced by OpenLLMetry (opentelemetry-instrumentation-langchain): the scenario of
`langgraph_openinference_swarm` under the other LangChain tracer.

    python3 -m venv /tmp/cap-langgraph_openllmetry_swarm && \
        /tmp/cap-langgraph_openllmetry_swarm/bin/pip install \
        langgraph-swarm==0.1.0 langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 \
        langgraph-prebuilt==1.1.3 langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 \
        opentelemetry-instrumentation-langchain==0.62.4 opentelemetry-semantic-conventions-ai==0.5.1 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langgraph_openllmetry_swarm/bin/python tests/captures/langgraph_openllmetry_swarm/record.py

Built as the package's README shows (0.1.0, its newest release): two `create_agent` agents, each named, each with a
`create_handoff_tool(agent_name=<the other>)`, given to `create_swarm(..., default_active_agent="triage_agent")`,
the workflow compiled with an `InMemorySaver` checkpointer ("Memory": the swarm remembers the active agent) and
run with `config={"configurable": {"thread_id": …}}`. OpenLLMetry's LangChain instrumentation is set up as its
README shows (`LangchainInstrumentor().instrument(tracer_provider=…)`, as `langgraph_openllmetry_subgraph` does)
and the session given as that capture gives it: run metadata (`config["metadata"]["session_id"]`, the thread id),
which the instrumentation records as `traceloop.association.properties.session_id`. A swarm's handoff is a tool
returning `Command(goto=<agent>, graph=PARENT, update={"messages": [...history, its ToolMessage], "active_agent":
<agent>})`; nothing hands back: the receiving agent answers the user itself, and the next turn starts with it (the
router on START reads `active_agent` from the checkpoint).

The booking agent's tool errors are handled as LangChain's agents docs show ("Tool error handling"): a
`@wrap_tool_call` middleware around the agent's ToolNode execution turns an exception into the ToolMessage the model
is sent (create_agent's ToolNode otherwise re-raises anything but an invocation error).

Turn 1 (`invoke`): the triage agent calls `transfer_to_booking_agent`; the booking agent calls book_hotel and
get_weather in parallel, book_hotel raising TimeoutError once (the middleware's error text is its result), calls
book_hotel again, answers. Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`,
`ChatOpenAI(stream_usage=True)` so the streamed calls report tokens): the router starts the booking agent (the
active agent), which calls convert_currency and answers. Six LLM calls. (The versions the capture was recorded
with are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-ll-swarm-1"
REPLIES = [
    # turn 1: the triage agent hands the conversation to the booking agent
    {"tool_calls": [{"name": "transfer_to_booking_agent", "arguments": {}}]},
    # the booking agent: two tools in parallel, book_hotel raising once, then again, then its answer to the user
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Booked Hotel Nord in Oslo for 2 nights (ref OSL-42). Expect rain at 9°C: pack an umbrella."},
    # turn 2 (streamed): straight to the booking agent, still the active agent
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 3000, "currency": "NOK"}}]},
    {"text": "Two nights at 1500 NOK come to 3000 NOK, about 256 EUR."},
]
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]
WEATHER = {"Oslo": "rainy, 9°C"}
PACKAGES = ["langgraph-swarm", "langchain", "langchain-core", "langgraph", "langgraph-prebuilt",
            "langgraph-checkpoint", "langchain-openai", "openai", "opentelemetry-instrumentation-langchain",
            "opentelemetry-semantic-conventions-ai", "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("langgraph-swarm's create_swarm over two create_agent agents (triage_agent, the default active agent, and "
         "booking_agent), each with a create_handoff_tool to the other (transfer_to_<agent>: Command(goto=…), "
         "active_agent in the swarm state); compiled with InMemorySaver, thread_id. Turn 1 invoke: triage hands "
         "over, the booking agent calls book_hotel and get_weather in parallel, book_hotel raising once (a "
         "@wrap_tool_call middleware sends the model its error text), retried, answers; turn 2 "
         "stream_mode='messages' (stream_usage=True) goes straight to the booking agent (the active agent), which "
         "calls convert_currency and answers. OpenLLMetry's LangchainInstrumentor; the session the thread id as run "
         "metadata (config metadata session_id)")


def run(rec: Recording) -> None:
    from langchain.agents import create_agent
    from langchain.agents.middleware import wrap_tool_call
    from langchain_core.messages import ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver
    from langgraph_swarm import create_handoff_tool, create_swarm

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

    @tool
    def convert_currency(amount: float, currency: str) -> str:
        """Convert an amount to EUR."""
        return f"{amount:g} {currency} is {amount / 11.7:.0f} EUR"

    @wrap_tool_call
    def handle_tool_errors(request: Any, handler: Any) -> Any:
        """Send the model the tool's error instead of failing the run (LangChain's documented middleware)."""
        try:
            return handler(request)
        except Exception as e:  # every tool error goes back to the model, as the docs show
            return ToolMessage(content=f"Tool error: Please check your input and try again. ({e})",
                               tool_call_id=request.tool_call["id"])

    triage_agent = create_agent(
        model, tools=[create_handoff_tool(agent_name="booking_agent",
                                          description="Transfer to booking_agent, who books hotels and travel")],
        system_prompt="You are the travel desk's triage agent. Hand bookings, weather and costs to booking_agent.",
        name="triage_agent")
    booking_agent = create_agent(
        model, tools=[book_hotel, get_weather, convert_currency,
                      create_handoff_tool(agent_name="triage_agent", description="Transfer to triage_agent")],
        middleware=[handle_tool_errors], name="booking_agent",
        system_prompt="You book hotels, check the weather and convert costs to EUR.")
    workflow = create_swarm([triage_agent, booking_agent], default_active_agent="triage_agent")
    app = workflow.compile(checkpointer=InMemorySaver())
    # OpenLLMetry turns run metadata into traceloop.association.properties.* (the session id, as in
    # langgraph_openllmetry_subgraph); the thread id is the swarm's checkpoint, which keeps the active agent.
    config: Any = {"configurable": {"thread_id": SESSION}, "metadata": {"session_id": SESSION}}
    first = app.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["active_agent"], first["messages"][-1].text)
    for chunk, _metadata in app.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                       stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])
    print(app.get_state(config).values["active_agent"])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-swarm"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangchainInstrumentor().instrument(tracer_provider=provider)
        run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
