"""Re-record: a LangChain 1.x agent graph (create_agent, ChatOpenAI) on a LangGraph MemorySaver thread, traced by
the LangSmith SDK's OpenTelemetry export (no LangSmith API: OTel only).

    python3 -m venv /tmp/cap-langsmith && /tmp/cap-langsmith/bin/pip install \
        'langsmith[otel]==0.15.1' langchain==1.5.2 langgraph==1.2.24 langchain-openai==1.8.1 \
        opentelemetry-sdk==1.44.0 opentelemetry-exporter-otlp-proto-http==1.44.0
    /tmp/cap-langsmith/bin/python tests/captures/langgraph_langsmith-otel/record.py

Set up as LangSmith's "Trace with OpenTelemetry" guide says: LANGSMITH_TRACING=true and LANGSMITH_OTEL_ENABLED=true,
with LANGSMITH_OTEL_ONLY=true so that runs go to OpenTelemetry alone. LangChain's tracer hands each run to the
LangSmith client, whose `OTELExporter` (langsmith/_internal/otel/_otel_exporter.py) turns it into a span on the
global tracer provider: here the application's, with an OTLP/HTTP exporter pointed at the recorder. The thread is
LangSmith's way: LangGraph copies `configurable.thread_id` into every run's metadata, which LangSmith groups
threads by (`session_id`, `thread_id` or `conversation_id` metadata) and the exporter writes as
`langsmith.metadata.thread_id`.

The run: turn 1 asks for the weather in Lisbon and Porto and 200 EUR in USD; the model calls three tools in
parallel (get_weather x2, convert_currency); the rate service fails once (a ToolException, `handle_tool_error`:
the model is shown the error), the model retries it, then answers. Turn 2 on the same thread ("And in GBP?", the
checkpointer's history) makes one tool call, then the answer. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "ls-otel-trip-thread-1"
MODEL = "gpt-4o-mini"
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Lisbon"}},
                    {"name": "get_weather", "arguments": {"city": "Porto"}},
                    {"name": "convert_currency", "arguments": {"amount": 200, "source": "EUR", "target": "USD"}}],
     "input_tokens": 214, "output_tokens": 71},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "source": "EUR", "target": "USD"}}],
     "input_tokens": 352, "output_tokens": 26},
    {"text": "Lisbon is sunny at 24°C and Porto cloudy at 18°C; 200 EUR is 216.40 USD.",
     "input_tokens": 395, "output_tokens": 29},
    {"tool_calls": [{"name": "convert_currency", "arguments": {"amount": 200, "source": "EUR", "target": "GBP"}}],
     "when": "GBP", "input_tokens": 437, "output_tokens": 26},
    {"text": "200 EUR is 171.20 GBP.", "input_tokens": 481, "output_tokens": 11},
]
WEATHER = {"Lisbon": "sunny, 24°C", "Porto": "cloudy, 18°C"}
RATES = {("EUR", "USD"): 1.082, ("EUR", "GBP"): 0.856}


def run(rec: Recording) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import ToolException, tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import InMemorySaver

    model = ChatOpenAI(model=MODEL, base_url=rec.base_url, api_key="sk-fake")
    failures = {"left": 1}

    @tool
    def get_weather(city: str) -> str:
        """The current weather in a city."""
        return WEATHER[city]

    @tool
    def convert_currency(amount: float, source: str, target: str) -> str:
        """Convert an amount between two currencies at today's rate."""
        if failures["left"]:
            failures["left"] -= 1
            raise ToolException("rate service timed out; try again")
        return f"{amount * RATES[(source, target)]:.2f} {target}"

    convert_currency.handle_tool_error = True

    agent = create_agent(model, tools=[get_weather, convert_currency],
                         system_prompt="You are a travel assistant. Use the tools; retry a tool that times out.",
                         checkpointer=InMemorySaver(), name="travel_agent")
    config = {"configurable": {"thread_id": SESSION}}
    agent.invoke({"messages": [{"role": "user", "content":
                                "What's the weather in Lisbon and Porto, and how much is 200 EUR in USD?"}]},
                 config=config)  # type: ignore[arg-type]
    agent.invoke({"messages": [{"role": "user", "content": "And in GBP?"}]}, config=config)  # type: ignore[arg-type]


def main() -> None:
    notes = ("create_agent on a MemorySaver thread (thread_id the session), LangSmith OTel-only export; turn 1: "
             "three parallel tool calls, the currency tool failing once (ToolException shown to the model) and "
             "retried; turn 2 on the same thread: one tool call, then the answer")
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="langsmith (OTel)",
                   packages=["langsmith", "langchain", "langchain-core", "langgraph", "langgraph-checkpoint",
                             "langchain-openai", "openai", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION, notes=notes) as rec:
        rec.env()
        os.environ.update({"LANGSMITH_TRACING": "true", "LANGSMITH_OTEL_ENABLED": "true",
                           "LANGSMITH_OTEL_ONLY": "true"})
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)  # the LangSmith client exports to the global provider
        run(rec)
        from langchain_core.tracers.langchain import wait_for_all_tracers

        wait_for_all_tracers()  # the LangSmith client turns runs into spans on its background thread
        rec.flush(provider)


if __name__ == "__main__":
    main()
