"""Re-record: a BeeAI RequirementAgent on OpenAI, two turns of one session, traced by OpenInference.

    python3 -m venv /tmp/cap-beeai && /tmp/cap-beeai/bin/pip install \
        beeai-framework==0.1.85 openinference-instrumentation-beeai==0.1.30 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-beeai/bin/python tests/captures/beeai_openinference/record.py

One RequirementAgent (BeeAI's lead agent; `ChatModel.from_name("openai:gpt-4o-mini")` through
LiteLLM to OPENAI_API_BASE, with native tool calls as against OpenAI's own API) with two custom
tools and an UnconstrainedMemory, run twice inside OpenInference's `using_session`. The agent
answers by calling its `final_answer` tool. Turn one: a get_weather call, then the final answer.
Turn two (the agent re-sends its memory, the first turn's tool calls and results included): a
lookup_flight call whose date the tool rejects (it raises), the call again with a valid date, then
the final answer. No parallel tool calls: BeeAI 0.1.85 sends OpenAI `parallel_tool_calls: false`
even with `allow_parallel_tool_calls=True` (ChatModelInput never gets the flag it computes).
BeeAI's instrumentation builds each run's spans when the run ends. (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "beeai-oi-trip-1"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}],
     "input_tokens": 412, "output_tokens": 18},
    {"tool_calls": [{"name": "final_answer", "arguments": {"response": "Oslo: rainy, 9°C."}}],
     "input_tokens": 471, "output_tokens": 21},
    {"tool_calls": [{"name": "lookup_flight",
                     "arguments": {"origin": "Paris", "destination": "Oslo", "date": "Friday"}}],
     "input_tokens": 561, "output_tokens": 31},
    {"tool_calls": [{"name": "lookup_flight",
                     "arguments": {"origin": "Paris", "destination": "Oslo", "date": "2025-10-17"}}],
     "input_tokens": 640, "output_tokens": 33},
    {"tool_calls": [{"name": "final_answer",
                     "arguments": {"response": "SK4417 leaves Paris CDG for Oslo at 08:10 on Friday 17 October; "
                                               "pack an umbrella for Oslo."}}],
     "input_tokens": 702, "output_tokens": 36},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="beeai-framework", instrumentation="openinference",
                   packages=["beeai-framework", "litellm", "openai", "openinference-instrumentation-beeai",
                             "openinference-instrumentation", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="RequirementAgent, two turns of one using_session (memory re-sent): a tool call, then a "
                         "tool that raises on a bad date and its retry; answers are final_answer tool calls") as rec:
        rec.env()
        os.environ["OPENAI_API_BASE"] = rec.base_url  # BeeAI's OpenAI provider reads this one
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # no download of LiteLLM's price list
        from openinference.instrumentation import using_session
        from openinference.instrumentation.beeai import BeeAIInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        BeeAIInstrumentor().instrument(tracer_provider=provider)

        from beeai_framework.agents.requirement import RequirementAgent
        from beeai_framework.backend import ChatModel
        from beeai_framework.memory import UnconstrainedMemory
        from beeai_framework.tools import StringToolOutput, tool

        @tool
        def get_weather(city: str) -> StringToolOutput:
            """The current weather in a city."""
            return StringToolOutput(WEATHER[city])

        @tool
        def lookup_flight(origin: str, destination: str, date: str) -> StringToolOutput:
            """Flights between two cities on a date (YYYY-MM-DD)."""
            if len(date) != 10 or date[4] != "-":
                raise ValueError(f"date must be YYYY-MM-DD, got {date!r}")
            return StringToolOutput(f"SK4417 {origin} CDG 08:10 -> {destination} OSL 10:35 on {date}")

        # A base_url makes BeeAI's OpenAI provider assume a compatible server without tool_choice
        # "required" and ask for tool calls as JSON text (response_format) instead; OpenAI's own API
        # (no base_url) gets native tools and tool_choice "required": its default set, named again.
        llm = ChatModel.from_name("openai:gpt-4o-mini", tool_choice_support={"required", "none", "single", "auto"})
        agent = RequirementAgent(llm=llm, tools=[get_weather, lookup_flight],
                                 memory=UnconstrainedMemory(), role="Trip planner",
                                 instructions="Answer tersely.")

        async def chat() -> None:
            with using_session(SESSION):
                first = await agent.run("What's the weather in Oslo?")
                print(first.last_message.text)
                second = await agent.run("Find me a flight from Paris to Oslo on Friday (2025-10-17).")
                print(second.last_message.text)

        asyncio.run(chat())
        rec.flush(provider)


if __name__ == "__main__":
    main()
