"""The LangChain trip scenario the four `langchain_*` captures record, each under another instrumentation.

Two parallel weather calls (answered in a different order than asked, the Oslo one slower), a
stock lookup that fails (a ToolException the model is shown as the tool message), a nested
researcher agent (its own create_agent graph, with its own system prompt and a tool) invoked from
a tool, then the answer. Imported by the capture folders' `record.py` inside the recording
virtualenv (their docstrings say which), never by the tests.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from tests.captures.recording.session import Recording

NOTES = ("parallel tool calls finishing out of order, a failing tool (ToolException shown to the model), "
         "a nested create_agent graph invoked from a tool")
PACKAGES = ["langchain", "langchain-core", "langgraph", "langchain-openai"]
REPLIES = [
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}},
                    {"name": "get_weather", "arguments": {"city": "Paris"}}]},
    {"tool_calls": [{"name": "lookup_stock", "arguments": {"ticker": "ACME"}}]},
    {"tool_calls": [{"name": "ask_researcher", "arguments": {"question": "When was Oslo founded?"}}]},
    # the researcher's own calls
    {"tool_calls": [{"name": "search_notes", "arguments": {"topic": "Oslo"}}]},
    {"text": "Oslo was founded around 1040."},
    {"text": "Oslo is rainy (9°C), Paris sunny (21°C); the ACME quote is unavailable; Oslo dates from about 1040."},
]
WEATHER = {"Paris": "sunny, 21°C", "Oslo": "rainy, 9°C"}


def run(rec: Recording, provider: object, session_id: str | None) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import ToolException, tool
    from langchain_openai import ChatOpenAI

    model = ChatOpenAI(model="gpt-4o", base_url=rec.base_url, api_key="sk-fake")

    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        if city == "Oslo":
            time.sleep(0.2)  # finishes after Paris although asked first
        return WEATHER[city]

    @tool
    def lookup_stock(ticker: str) -> str:
        """The last quote of a stock ticker."""
        raise ToolException(f"quote service unavailable for {ticker}; try again later")

    lookup_stock.handle_tool_error = True

    @tool
    def search_notes(topic: str) -> str:
        """Search the research notes."""
        return f"Notes on {topic}: founded c. 1040 by Harald Hardrada."

    researcher = create_agent(model, tools=[search_notes],
                              system_prompt="You are a meticulous historian. Answer from the notes.",
                              name="researcher")

    @tool
    def ask_researcher(question: str) -> str:
        """Ask the research agent a history question."""
        result = researcher.invoke({"messages": [{"role": "user", "content": question}]})
        return str(result["messages"][-1].content)

    agent = create_agent(model, tools=[get_weather, lookup_stock, ask_researcher],
                         system_prompt="You are a travel assistant. Use tools.", name="travel_agent")
    config = {"metadata": {"session_id": session_id}} if session_id else {}
    agent.invoke({"messages": [{"role": "user", "content":
                                "Weather in Oslo and Paris, the ACME quote, and when Oslo was founded?"}]},
                 config=config)  # type: ignore[arg-type]




def record(capture_dir: Path, instrumentation: str, package: str, session_id: str | None,
           instrument: Callable[[object], None], run_session: str | None = None) -> None:
    """Record the scenario into `capture_dir`: `instrument(provider)` sets the instrumentation up;
    `run_session` is passed to LangChain as run metadata (OpenLLMetry reads it from there)."""
    with Recording(capture_dir, REPLIES, framework="langchain", instrumentation=instrumentation,
                   packages=[*PACKAGES, package, "opentelemetry-sdk"], session_id=session_id, notes=NOTES) as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        instrument(provider)
        run(rec, provider, run_session)
        rec.flush(provider)
