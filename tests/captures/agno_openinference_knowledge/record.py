"""Re-record: an Agno Agent searching its Knowledge (LanceDB) and calling a tool, traced by OpenInference.

    python3 -m venv /tmp/cap-agno_openinference_knowledge
    /tmp/cap-agno_openinference_knowledge/bin/pip install \
        agno==3.1.10 openai==3.63.0 lancedb==0.41.0 openinference-instrumentation-agno==1.0.15 \
        openinference-instrumentation==0.1.72 openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-agno_openinference_knowledge/bin/python tests/captures/agno_openinference_knowledge/record.py

Why: retrieval-augmented answers as OpenInference's Agno instrumentation records them, beside the retriever spans
LangChain's and LlamaIndex's instrumentations write (`langchain_openinference_rag`, `llamaindex_openinference_rag`).
Agno's `Knowledge` (here over a LanceDB table in a scratch directory, its embeddings by `OpenAIEmbedder` pointed at the
fake LLM's `/v1/embeddings`, which answers with a vector of the text's words: no LLM call, not logged) is searched by
the model through the `search_knowledge_base` tool Agno adds for `search_knowledge=True`; the tool returns the
documents found as JSON (`Document.to_dict()`: name, content, meta_data; Agno's `references_format` "json") and keeps
them as the run's `references`. The instrumentation wraps Agno's runs, model calls and function calls only: the search
is a TOOL span of that function (no RETRIEVER span, no EMBEDDING span).

Four airline policies are inserted as text (`Knowledge.insert(name=…, text_content=…, metadata=…)`, `max_results=2`).
One Agent (an in-memory db, `add_history_to_context`) given Agno's own `session_id`, run twice. Turn 1: the model
calls `search_knowledge_base` and `get_weather` in parallel; the weather service times out once (the tool raises:
Agno hands the model the exception's text), so the model calls `get_weather` again, then answers from both. Turn 2
(`stream=True`: Agno streams with `stream_options.include_usage`) re-sends turn 1 as history; the model says a word
and searches the knowledge again, then answers. Five calls in all. The newest agno, lancedb, openai and OpenInference
packages at the time of recording, no pin conflict; `pip freeze` of what matters is the pip line above, with what
lancedb pulled in: pyarrow==26.0.1, numpy==2.4.6, lance-namespace==0.13.0. The versions recorded are in meta.json.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.fake_llm import EMBEDDING_DIMENSIONS
from tests.captures.recording.session import Recording

SESSION = "agno-oi-knowledge-trip-1"
QUESTIONS = ["How much checked baggage can I take on my Nordwind flight to Oslo, and what's the weather there?",
             "Can my small dog travel with me in the cabin?"]
POLICIES = [
    ("baggage-allowance", "Checked baggage: every Nordwind economy ticket includes one checked bag of up to 23 kg; "
                          "business class includes two bags of up to 32 kg each.", {"topic": "baggage"}),
    ("cabin-baggage", "Cabin baggage: one carry-on bag of up to 8 kg and one small personal item fit under the "
                      "seat.", {"topic": "baggage"}),
    ("pets-in-cabin", "Pets: a small dog or cat of up to 8 kg, carrier included, may travel in the cabin in a soft "
                      "carrier under the seat; book it at least 48 hours before the flight.", {"topic": "pets"}),
    ("refunds", "Refunds: flexible fares are refundable until 24 hours before departure; basic fares are not "
                "refundable.", {"topic": "fares"}),
]
REPLIES = [
    {"tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "checked bag allowance economy"}},
                    {"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]},
    {"text": "Your economy ticket includes one checked bag of up to 23 kg (business: two of 32 kg). Oslo is rainy, "
             "9°C."},
    {"text": "Let me check the pet policy.",
     "tool_calls": [{"name": "search_knowledge_base", "arguments": {"query": "small dog pets in the cabin"}}]},
    {"text": "Yes: a small dog of up to 8 kg with its carrier can fly in the cabin in a soft carrier under the seat. "
             "Book it at least 48 hours before the flight."},
]
WEATHER = {"Oslo": "rainy, 9°C"}


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="agno", instrumentation="openinference",
                   packages=["agno", "openai", "lancedb", "pyarrow", "numpy", "lance-namespace",
                             "openinference-instrumentation-agno", "openinference-instrumentation",
                             "openinference-semantic-conventions", "opentelemetry-sdk",
                             "opentelemetry-exporter-otlp-proto-http"],
                   session_id=SESSION,
                   notes="two turns of one Agno session (history re-sent), an Agent with search_knowledge=True over "
                         "a Knowledge of four airline policies in LanceDB (max_results=2, embeddings from the fake "
                         "LLM): search_knowledge_base beside get_weather, which raises once (a timeout), get_weather "
                         "again, the answer; turn 2 streamed (run stream=True): a word and search_knowledge_base, "
                         "then the answer") as rec:
        rec.env()
        from openinference.instrumentation.agno import AgnoInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "airline-assistant"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        AgnoInstrumentor().instrument(tracer_provider=provider)

        from agno.agent import Agent
        from agno.db.in_memory import InMemoryDb
        from agno.knowledge.embedder.openai import OpenAIEmbedder
        from agno.knowledge.knowledge import Knowledge
        from agno.models.openai import OpenAIChat
        from agno.vectordb.lancedb import LanceDb

        embedder = OpenAIEmbedder(id="text-embedding-3-small", dimensions=EMBEDDING_DIMENSIONS,
                                  base_url=rec.base_url, api_key="sk-fake")
        knowledge = Knowledge(name="airline-policies", max_results=2,
                              vector_db=LanceDb(uri=tempfile.mkdtemp(prefix="agno-lancedb-"),
                                                table_name="policies", embedder=embedder))
        for name, text, metadata in POLICIES:
            knowledge.insert(name=name, text_content=text, metadata=metadata)

        failures = {"Oslo": 1}

        def get_weather(city: str) -> str:
            """The weather in a city today.

            Args:
                city: the city
            """
            if failures.get(city):
                failures[city] -= 1
                raise TimeoutError("the weather service did not answer in time")
            return WEATHER[city]

        agent = Agent(name="airline-assistant",
                      model=OpenAIChat(id="gpt-4o", base_url=rec.base_url, api_key="sk-fake"),
                      tools=[get_weather], knowledge=knowledge, search_knowledge=True,
                      instructions="You are a terse airline assistant. Answer from the airline's policies.",
                      db=InMemoryDb(), add_history_to_context=True, session_id=SESSION, telemetry=False)
        print(agent.run(QUESTIONS[0]).content)
        answer = ""  # a streamed run yields its answer in RunContent events (no RunCompleted unless stream_events)
        for event in agent.run(QUESTIONS[1], stream=True):
            if getattr(event, "event", "") == "RunContent" and isinstance(event.content, str):
                answer += event.content
        print(answer)
        rec.flush(provider)


if __name__ == "__main__":
    main()
