"""Re-record: a LlamaIndex 0.14 AgentWorkflow of two FunctionAgents, the first handing off to the
second, traced by OpenInference.

    python3 -m venv /tmp/cap-llamaindex && /tmp/cap-llamaindex/bin/pip install \
        llama-index-core==0.14.25 llama-index-llms-openai==0.8.3 \
        openinference-instrumentation-llama-index==4.6.1 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-llamaindex/bin/python tests/captures/llamaindex_openinference_agent-workflow/record.py

The run: the travel agent looks up the weather, then hands off (LlamaIndex's `handoff` tool) to
the booking agent, which books a hotel and answers. Not streamed. (Versions in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "li-oi-workflow-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "handoff", "arguments": {"to_agent": "booking_agent",
                                                      "reason": "The user wants a hotel booked."}}]},
    {"tool_calls": [{"name": "book_hotel", "arguments": {"city": "Oslo", "nights": 2}}]},
    {"text": "Oslo is rainy (9°C); I booked you 2 nights at the Harbour Inn (ref H-42)."},
]


def run(rec: Recording) -> None:
    from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
    from llama_index.llms.openai import OpenAI

    def get_weather(city: str) -> str:
        """The weather in a city."""
        return {"Oslo": "rainy, 9°C"}.get(city, "unknown")

    def book_hotel(city: str, nights: int) -> str:
        """Book a hotel in a city."""
        return f"Booked {nights} nights at the Harbour Inn, {city} (ref H-42)."

    def llm() -> OpenAI:
        return OpenAI(model="gpt-4o", api_base=rec.base_url, api_key="sk-fake")

    travel = FunctionAgent(name="travel_agent", description="Answers travel questions.", tools=[get_weather],
                           llm=llm(), system_prompt="You are a travel assistant. Hand bookings to booking_agent.",
                           can_handoff_to=["booking_agent"], streaming=False)
    booking = FunctionAgent(name="booking_agent", description="Books hotels.", tools=[book_hotel], llm=llm(),
                            system_prompt="You book hotels.", streaming=False)
    workflow = AgentWorkflow(agents=[travel, booking], root_agent="travel_agent")

    async def main() -> None:
        await workflow.run(user_msg="What's the weather in Oslo? And book me a hotel there for 2 nights.")

    asyncio.run(main())


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="llamaindex", instrumentation="openinference",
                   packages=["llama-index-core", "llama-index-llms-openai",
                             "openinference-instrumentation-llama-index", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="AgentWorkflow: a tool call, a handoff to a second agent, its tool call, the answer") as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-desk"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
        with using_session(SESSION):
            run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
