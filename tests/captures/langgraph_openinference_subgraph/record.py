"""Re-record: a LangGraph StateGraph whose second node is a create_agent graph (a subgraph node),
traced by OpenInference.

    python3 -m venv /tmp/cap-langchain && /tmp/cap-langchain/bin/pip install \
        langchain==1.5.2 langgraph==1.2.24 langchain-openai==1.7.4 \
        openinference-instrumentation-langchain==0.1.80 opentelemetry-instrumentation-langchain==0.62.4 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langchain/bin/python tests/captures/langgraph_openinference_subgraph/record.py

The run: a "triage" node asks the model once (no tools), then the "research" node runs the
researcher agent graph on the conversation so far (its own system prompt, a tool call, an answer).
(The versions recorded are in meta.json.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lg-oi-subgraph-1"
REPLIES = [
    {"text": "A history question about Oslo: passing it to the researcher."},
    {"tool_calls": [{"name": "search_notes", "arguments": {"topic": "Oslo"}}]},
    {"text": "Oslo was founded around 1040."},
]


def run(rec: Recording) -> None:
    from langchain.agents import create_agent
    from langchain_core.messages import SystemMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import END, START, MessagesState, StateGraph

    model = ChatOpenAI(model="gpt-4o", base_url=rec.base_url, api_key="sk-fake")

    @tool
    def search_notes(topic: str) -> str:
        """Search the research notes."""
        return f"Notes on {topic}: founded c. 1040 by Harald Hardrada."

    researcher = create_agent(model, tools=[search_notes],
                              system_prompt="You are a meticulous historian. Answer from the notes.",
                              name="researcher")

    def triage(state: MessagesState) -> dict[str, object]:
        answer = model.invoke([SystemMessage("You triage questions for specialists."), *state["messages"]])
        return {"messages": [answer]}

    graph = StateGraph(MessagesState)
    graph.add_node("triage", triage)
    graph.add_node("research", researcher)
    graph.add_edge(START, "triage")
    graph.add_edge("triage", "research")
    graph.add_edge("research", END)
    app = graph.compile(name="trip_planner")
    app.invoke({"messages": [{"role": "user", "content": "When was Oslo founded?"}]})


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langgraph", instrumentation="openinference",
                   packages=["langchain", "langchain-core", "langgraph", "langchain-openai",
                             "openinference-instrumentation-langchain", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="a StateGraph: a triage node's model call, then a create_agent graph as a node") as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "trip-planner"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        with using_session(SESSION):
            run(rec)
        rec.flush(provider)


if __name__ == "__main__":
    main()
