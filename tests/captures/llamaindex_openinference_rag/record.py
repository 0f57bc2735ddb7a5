"""Re-record: a LlamaIndex 0.14 FunctionAgent whose tools are a `QueryEngineTool` over a vector index (retrieval, then
an LLM call synthesising the answer, inside the tool) and a function tool, two turns continuing one `Context`, traced
by OpenInference.

    python3 -m venv /tmp/cap-llamaindex_openinference_rag && /tmp/cap-llamaindex_openinference_rag/bin/pip install \
        llama-index-core==0.14.25 llama-index-llms-openai==0.8.3 llama-index-embeddings-openai==0.7.0 \
        llama-index-workflows==2.26.1 llama-index-instrumentation==0.6.0 openai==2.54.0 \
        openinference-instrumentation-llama-index==4.6.1 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-llamaindex_openinference_rag/bin/python tests/captures/llamaindex_openinference_rag/record.py

Why: retrieval-augmented generation as an agent's tool, the way LlamaIndex's docs build it (a `VectorStoreIndex` of
nodes, `index.as_query_engine()`, `QueryEngineTool.from_defaults(...)` in a `FunctionAgent`'s tools), as
OpenInference's llama-index instrumentation records it: the query engine's work (its RETRIEVER span with the
documents it found, their ids, text and scores; the EMBEDDING span of the query; the synthesizer's LLM call) runs
inside the tool's span, and the agent is shown the synthesised answer. The embeddings are the fake LLM's
`/v1/embeddings` (vectors made from each text's words: a paid service the fake stands in for), through
`OpenAIEmbedding`; the synthesis is `gpt-4o-mini`, the agent `gpt-4o`, so each call's model says whose it is. The
index is built (its four nodes embedded) before the session, as an application builds it at start-up: those
EMBEDDING spans are a trace of no session. Set up as `llamaindex_openinference_image` is (a tracer provider exporting
OTLP/HTTP, `LlamaIndexInstrumentor().instrument()`, the session by OpenInference's `using_session`).

The run: two `agent.run` turns continuing one workflow `Context` and one LlamaIndex `Memory` (llama-index-workflows
2.26 skips a continued context's memory, as `llamaindex_openinference_react` says). Turn 1, not streamed: the model
calls travel_guides (the query engine: the two nearest passages, then the synthesis call) and get_weather in
parallel; get_weather raises once (LlamaIndex shows the model the exception text, the ToolOutput flagged is_error);
the model calls it again, then answers. Turn 2, streamed (`streaming=True`, events consumed from
`handler.stream_events()`, `stream_options.include_usage`): the model asks travel_guides again (retrieval and
synthesis again), then answers. Seven LLM calls, two of them the synthesizer's. Every package its newest release
but openai, 2.54.0, the newest llama-index-llms-openai 0.8.3 allows (`openai<3`). (The versions the capture was
recorded with are in meta.json.)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "li-oi-rag-1"
AGENT_MODEL = "gpt-4o"
SYNTHESIS_MODEL = "gpt-4o-mini"
EMBEDDING_MODEL = "text-embedding-3-small"
# The guide's passages, each a node of the index under an id of its own (what a retrieval names).
PASSAGES = {
    "guide-bergen-sights": "Bergen sights: Bryggen, the old Hanseatic wharf of wooden houses on the harbour, is a "
                           "UNESCO World Heritage site. The Floibanen funicular climbs Mount Floyen for views over "
                           "Bergen, its harbour and the fjord.",
    "guide-bergen-food": "Bergen food: the Fish Market at the head of the harbour sells fresh seafood and fish "
                         "cakes; Bryggeloftet on Bryggen serves Bergen fish soup, a restaurant since 1910.",
    "guide-oslo-sights": "Oslo sights: visitors walk on the roof of the Opera House by the fjord; the Vigeland "
                         "sculpture park is in Frogner Park.",
    "guide-tromso": "Tromso: the northern lights show from September to March; the Arctic Cathedral stands across "
                    "the bridge from the town.",
}
QUESTIONS = [("I'm in Bergen on Saturday. What should I see, and what's the weather like?", False),
             ("Where can I eat good fish there?", True)]
SIGHTS_QUERY = "What to see in Bergen"
FOOD_QUERY = "Fish restaurants in Bergen"
REPLIES: list[dict[str, Any]] = [
    # turn 1: text and two calls in parallel, the guide's query and the weather
    {"text": "Let me look in the travel guides and check the weather.",
     "tool_calls": [{"name": "travel_guides", "arguments": {"input": SIGHTS_QUERY}},
                    {"name": "get_weather", "arguments": {"city": "Bergen", "day": "Saturday"}}]},
    # the query engine's synthesis, inside travel_guides: the question with the retrieved passages
    {"when": SIGHTS_QUERY,
     "text": "See Bryggen, the Hanseatic wharf (a UNESCO World Heritage site), and ride the Floibanen funicular up "
             "Mount Floyen for the view over the harbour and the fjord."},
    # get_weather raised: ask again
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen", "day": "Saturday"}}]},
    {"text": "On Saturday walk Bryggen, the old Hanseatic wharf, then take the Floibanen up Mount Floyen for the "
             "view. Bring a raincoat: showers and 11°C are forecast."},
    # turn 2 (streamed)
    {"tool_calls": [{"name": "travel_guides", "arguments": {"input": FOOD_QUERY}}]},
    {"when": FOOD_QUERY,
     "text": "Try the Fish Market at the head of the harbour for fresh seafood, or Bryggeloftet on Bryggen for "
             "Bergen fish soup."},
    {"text": "For fish, go to the Fish Market by the harbour, or have Bergen fish soup at Bryggeloftet on Bryggen."},
]
PACKAGES = ["llama-index-core", "llama-index-llms-openai", "llama-index-embeddings-openai", "llama-index-workflows",
            "llama-index-instrumentation", "openai", "openinference-instrumentation-llama-index",
            "openinference-instrumentation", "openinference-semantic-conventions", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("FunctionAgent (name guide_agent, gpt-4o) with a QueryEngineTool travel_guides over a VectorStoreIndex of "
         "four TextNodes (ids guide-*; OpenAIEmbedding text-embedding-3-small against the fake's /v1/embeddings; "
         "as_query_engine(similarity_top_k=2), its synthesizer on gpt-4o-mini) and get_weather; two agent.run turns "
         "continuing one Context and one Memory in using_session. Turn 1: text and travel_guides + get_weather in "
         "parallel (retrieval, then a synthesis call inside the tool), get_weather raising once (is_error), retried, "
         "answered. Turn 2 streamed: travel_guides again (retrieval, synthesis), answered. The index is built before "
         "the session: its EMBEDDING spans are a trace of no session")


def build_index(rec: Recording) -> Any:
    from llama_index.core import VectorStoreIndex
    from llama_index.core.schema import TextNode
    from llama_index.embeddings.openai import OpenAIEmbedding

    embed_model = OpenAIEmbedding(model=EMBEDDING_MODEL, api_base=rec.base_url, api_key="sk-fake")
    nodes = [TextNode(id_=node_id, text=text, metadata={"source": "norway-guide"})
             for node_id, text in PASSAGES.items()]
    return VectorStoreIndex(nodes, embed_model=embed_model)


def run(rec: Recording, index: Any) -> None:
    from llama_index.core.agent.workflow import AgentStream, FunctionAgent
    from llama_index.core.memory import Memory
    from llama_index.core.tools import QueryEngineTool
    from llama_index.core.workflow import Context
    from llama_index.llms.openai import OpenAI

    failures = {"get_weather": 1}  # the weather service fails once

    def get_weather(city: str, day: str) -> str:
        """The weather forecast for a city on a day."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise RuntimeError("the weather service did not answer in time")
        return {"Bergen": "showers, 11°C"}[city]

    synthesis_llm = OpenAI(model=SYNTHESIS_MODEL, api_base=rec.base_url, api_key="sk-fake")
    guides = QueryEngineTool.from_defaults(
        index.as_query_engine(llm=synthesis_llm, similarity_top_k=2), name="travel_guides",
        description="Answers a question from the travel guides' passages about Norwegian cities (sights, food).")
    agent = FunctionAgent(name="guide_agent", tools=[guides, get_weather],
                          # Usage at the stream's end, asked for as LlamaIndex's docs do (dropped from calls that do
                          # not stream).
                          llm=OpenAI(model=AGENT_MODEL, api_base=rec.base_url, api_key="sk-fake",
                                     additional_kwargs={"stream_options": {"include_usage": True}}),
                          system_prompt="You are a travel assistant. Use the travel guides for what to see and eat, "
                                        "and get_weather for the forecast.", streaming=False)

    async def main() -> None:
        ctx = Context(agent)
        memory = Memory.from_defaults(session_id=SESSION)
        for question, streamed in QUESTIONS:
            agent.streaming = streamed
            handler = agent.run(user_msg=question, ctx=ctx, memory=memory)
            if streamed:
                async for event in handler.stream_events():
                    if isinstance(event, AgentStream):
                        print(event.delta, end="", flush=True)
                print()
            print(await handler)

    asyncio.run(main())


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="llamaindex", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation import using_session
        from openinference.instrumentation.llama_index import LlamaIndexInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "norway-guide"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LlamaIndexInstrumentor().instrument(tracer_provider=provider)
        index = build_index(rec)
        with using_session(SESSION):
            run(rec, index)
        rec.flush(provider)


if __name__ == "__main__":
    main()
