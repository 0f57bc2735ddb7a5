"""Re-record: a LangChain 1.x agent (create_agent, ChatOpenAI) traced by OpenLLMetry
(opentelemetry-instrumentation-langchain), with no session id (as LangChain users usually run it).

    python3 -m venv /tmp/cap-langchain && /tmp/cap-langchain/bin/pip install \
        langchain==1.5.2 langgraph==1.2.24 langchain-openai==1.7.4 \
        openinference-instrumentation-langchain==0.1.80 opentelemetry-instrumentation-langchain==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langchain/bin/python tests/captures/langchain_openllmetry_no-session/record.py

The run: two parallel weather calls (answered in a different order than asked, the Oslo one
slower), a stock lookup that fails (a ToolException the model is shown as the tool message), a
nested researcher agent (its own create_agent graph, with its own system prompt and a tool)
invoked from a tool, then the answer. (The versions recorded are in meta.json.)
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

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


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langchain", instrumentation="openllmetry",
                   packages=["langchain", "langchain-core", "langgraph", "langchain-openai",
                             "opentelemetry-instrumentation-langchain", "opentelemetry-sdk"],
                   session_id=None,
                   notes="parallel tool calls finishing out of order, a failing tool (ToolException shown to "
                         "the model), a nested create_agent graph invoked from a tool") as rec:
        rec.env()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.instrumentation.langchain import LangchainInstrumentor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "travel-agent"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangchainInstrumentor().instrument(tracer_provider=provider)
        run(rec, provider, None)
        rec.flush(provider)


if __name__ == "__main__":
    main()
