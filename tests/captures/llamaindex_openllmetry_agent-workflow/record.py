"""Re-record: a LlamaIndex 0.14 AgentWorkflow of two FunctionAgents (llama-index-llms-openai), the root agent handing
off to the other, two turns of one workflow `Context`, traced by OpenLLMetry through the Traceloop SDK
(opentelemetry-instrumentation-llamaindex + -openai).

    python3 -m venv /tmp/cap-llamaindex_openllmetry_agent-workflow && \
        /tmp/cap-llamaindex_openllmetry_agent-workflow/bin/pip install -U pip && \
        /tmp/cap-llamaindex_openllmetry_agent-workflow/bin/pip install llama-index-core==0.14.25 \
        llama-index-llms-openai==0.8.3 traceloop-sdk==0.62.4 opentelemetry-instrumentation-llamaindex==0.62.4 \
        opentelemetry-instrumentation-openai==0.62.4 openai==2.54.0 \
        opentelemetry-sdk==1.45.1 opentelemetry-exporter-otlp-proto-http==1.45.1
    /tmp/cap-llamaindex_openllmetry_agent-workflow/bin/python \
        tests/captures/llamaindex_openllmetry_agent-workflow/record.py

Set up as the `llamaindex_openllmetry` capture is (its docstring says why): `Traceloop.init(…)` with the recorder as
`api_endpoint` (batched, metrics off, content tracing on), plus `LlamaIndexInstrumentor().instrument()`, which init
skips without the `llama-index` distribution (it pins llama-index-llms-openai below 0.8); the session an association
property (`Traceloop.set_association_properties({"session_id": …})`), OpenLLMetry's documented way.

The run: an `AgentWorkflow` of `travel_agent` (the root; `can_handoff_to=["booking_agent"]`) and `booking_agent`,
two `workflow.run` calls continuing one `Context(workflow)`, as LlamaIndex's docs show for a multi-turn workflow, and
one LlamaIndex `Memory` (`Memory.from_defaults(session_id=…)`) passed to both: llama-index-workflows 2.26 serializes a
context it continues and skips its "known unserializable" `memory` key, so with the context alone turn 2 is sent its
question and nothing of turn 1 (the context still keeps which agent is current; the workflow takes the memory it is
passed only when the context holds none).
Turn 1, not streamed: the travel agent hands off (LlamaIndex's `handoff` tool); the booking agent books the hotel and
asks for the exchange rate in parallel, the rate tool raises the first time (LlamaIndex shows the model the exception
text as the tool output, flagged is_error), the agent calls it again, then answers. Turn 2, streamed (both agents'
`streaming` on, events consumed from `handler.stream_events()`, usage asked for in the stream): the context keeps
`booking_agent` as the current agent, which rebooks and answers. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "li-ll-workflow-1"
REPLIES = [
    {"tool_calls": [{"name": "handoff", "arguments": {"to_agent": "booking_agent",
                                                      "reason": "The user wants a hotel booked."}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}},
                    {"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "NOK"}}]},
    {"tool_calls": [{"name": "get_exchange_rate", "arguments": {"base": "EUR", "quote": "NOK"}}]},
    {"text": "Booked 2 nights at the Harbour Inn, Oslo (ref H-42); 1 EUR buys 11.52 NOK."},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 3}}], "when": "3 nights"},
    {"text": "Done: 3 nights at the Harbour Inn, Oslo (ref H-43)."},
]
QUESTIONS = [("Book me a hotel in Oslo for 2 nights, and how many NOK is one EUR?", False),
             ("Make it 3 nights instead.", True)]
PACKAGES = ["llama-index-core", "llama-index-llms-openai", "llama-index-workflows", "traceloop-sdk",
            "opentelemetry-instrumentation-llamaindex", "opentelemetry-instrumentation-openai", "openai",
            "opentelemetry-sdk", "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("Traceloop.init with the recorder as api_endpoint, plus LlamaIndexInstrumentor().instrument(); an "
         "AgentWorkflow, travel_agent handing off to booking_agent, two turns continuing one Context and one Memory, "
         "the session an association property; turn 1 the booking agent's parallel tool calls, one raising once (the "
         "error shown to the model), then called again; turn 2 streamed with include_usage, booking_agent still the "
         "current agent")


def run(rec: Recording) -> None:
    from llama_index.core.agent.workflow import AgentStream, AgentWorkflow, FunctionAgent
    from llama_index.core.memory import Memory
    from llama_index.core.workflow import Context
    from llama_index.llms.openai import OpenAI
    from traceloop.sdk import Traceloop

    failures = {"get_exchange_rate": 1}  # the rate service times out once
    refs = iter(["H-42", "H-43"])

    def book_hotel(city: str, nights: int) -> str:
        """Book a hotel in a city."""
        return f"Booked {nights} nights at the Harbour Inn, {city} (ref {next(refs)})."

    def get_exchange_rate(base: str, quote: str) -> str:
        """How many units of the quote currency one unit of the base currency buys."""
        if failures["get_exchange_rate"]:
            failures["get_exchange_rate"] -= 1
            raise TimeoutError(f"the rate service timed out for {base}/{quote}; try again")
        return f"1 {base} = 11.52 {quote}"

    def llm() -> OpenAI:
        return OpenAI(model="gpt-4o", api_base=rec.base_url, api_key="sk-fake",
                      additional_kwargs={"stream_options": {"include_usage": True}})

    travel = FunctionAgent(name="travel_agent", description="Answers travel questions.", tools=[], llm=llm(),
                           system_prompt="You are a travel assistant. Hand bookings to booking_agent.",
                           can_handoff_to=["booking_agent"], streaming=False)
    booking = FunctionAgent(name="booking_agent", description="Books hotels and quotes prices.",
                            tools=[book_hotel, get_exchange_rate], llm=llm(),
                            system_prompt="You book hotels. Use tools.", streaming=False)
    workflow = AgentWorkflow(agents=[travel, booking], root_agent="travel_agent")

    async def main() -> None:
        Traceloop.set_association_properties({"session_id": SESSION})
        ctx = Context(workflow)  # the current agent (and the chat memory, which continuing it drops), for turn 2
        memory = Memory.from_defaults(session_id=SESSION)  # the conversation: turn 2 is sent turn 1's messages
        for question, streamed in QUESTIONS:
            travel.streaming = booking.streaming = streamed
            handler = workflow.run(user_msg=question, ctx=ctx, memory=memory)
            if streamed:
                async for event in handler.stream_events():
                    if isinstance(event, AgentStream):
                        print(event.delta, end="", flush=True)
                print()
            print(await handler)

    asyncio.run(main())


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="llamaindex", instrumentation="openllmetry",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        os.environ["TRACELOOP_METRICS_ENABLED"] = "false"  # read by init: no metrics exporter
        from opentelemetry import trace
        from opentelemetry.instrumentation.llamaindex import LlamaIndexInstrumentor
        from traceloop.sdk import Traceloop

        Traceloop.init(app_name="travel-desk", api_endpoint=rec.otlp_endpoint, disable_batch=False,
                       telemetry_enabled=False)
        LlamaIndexInstrumentor().instrument()  # what init skips without the `llama-index` distribution
        run(rec)
        rec.flush(trace.get_tracer_provider())


if __name__ == "__main__":
    main()
