"""Re-record: a LangChain 1.x `create_agent` whose tools are a retriever tool over an `InMemoryVectorStore` of travel
guide passages (`create_retriever_tool`) and a weather tool, checkpointed (`MemorySaver`, a `thread_id`), traced by
OpenInference.

    python3 -m venv /tmp/cap-langchain_openinference_rag && \
        /tmp/cap-langchain_openinference_rag/bin/pip install \
        langchain==1.5.2 langchain-core==1.8.3 langgraph==1.2.24 langgraph-prebuilt==1.1.3 \
        langgraph-checkpoint==4.3.2 langchain-openai==1.8.1 openai==3.63.0 numpy==2.4.6 \
        openinference-instrumentation-langchain==0.1.80 openinference-instrumentation==0.1.72 \
        openinference-semantic-conventions==0.1.42 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-langchain_openinference_rag/bin/python tests/captures/langchain_openinference_rag/record.py

Why: retrieval-augmented generation the way LangChain's docs build an agent's retrieval: documents added to a vector
store (`InMemoryVectorStore(OpenAIEmbeddings(...))`, numpy for its cosine similarity), `vector_store.as_retriever()`,
and `create_retriever_tool(retriever, name, description)` among `create_agent`'s tools. The tool runs the retriever
inside its own run, and OpenInference's LangChain tracer records that as a RETRIEVER span under the tool's TOOL span:
the query as `input.value`, each document found as `retrieval.documents.<i>.document.{content,metadata}` (the tracer
writes no id and no score: LangChain's `Document.id` is not read, and a `VectorStoreRetriever` drops the scores).
The model is shown the documents' text joined by blank lines, as the tool's result. A trajectory should show the
tool's call with that result, and the documents found (text, metadata) where the retrieval happened, once.

The embeddings are the fake LLM's `/v1/embeddings` (vectors made from each text's words), through `OpenAIEmbeddings`
with `check_embedding_ctx_length=False` (as langchain-openai's docs say for an OpenAI-compatible endpoint: the text
sent as text, not as tiktoken's token ids). LangChain's tracer records no embedding (the embeddings are no runnable):
the store is filled before the session, the query embedded inside the retriever's run. The session is the thread id
(the tracer records a run's `metadata.thread_id` as `session.id`), no `using_session`. get_weather raises a
`ToolException` once, handled as LangChain's tools docs show (`StructuredTool.from_function(...,
handle_tool_error=True)`: the exception's text is the ToolMessage the model is sent).

Turn 1 (`invoke`): the model answers with text and calls travel_guides and get_weather in parallel; get_weather
raises; the model calls it again, then answers. Turn 2, same thread, streamed (`stream(…, stream_mode="messages")`,
`stream_usage=True` as langchain-openai defaults to on OpenAI's own URL): the model streams a travel_guides call,
then the answer. Five LLM calls, two retrievals, two traces. Installed then (pip freeze, the packages that matter;
also in meta.json): langchain 1.5.2, langchain-core 1.8.3, langgraph 1.2.24, langgraph-prebuilt 1.1.3,
langgraph-checkpoint 4.3.2, langchain-openai 1.8.1, openai 3.63.0, numpy 2.4.6,
openinference-instrumentation-langchain 0.1.80, openinference-instrumentation 0.1.72,
openinference-semantic-conventions 0.1.42, opentelemetry-sdk and -exporter-otlp-proto-http 1.45.2 (each the newest).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "lc-oi-rag-1"
MODEL = "gpt-4o"
EMBEDDING_MODEL = "text-embedding-3-small"
# The guide's passages, each a document of the store under an id of its own, its metadata where it comes from.
PASSAGES = {
    "guide-bergen-sights": ("Bergen sights: Bryggen, the old Hanseatic wharf of wooden houses on the harbour, is a "
                            "UNESCO World Heritage site. The Floibanen funicular climbs Mount Floyen for views over "
                            "Bergen, its harbour and the fjord.", "Bergen"),
    "guide-bergen-food": ("Bergen food: the Fish Market at the head of the harbour sells fresh seafood and fish "
                          "cakes; Bryggeloftet on Bryggen serves Bergen fish soup, a restaurant since 1910.", "Bergen"),
    "guide-oslo-sights": ("Oslo sights: visitors walk on the roof of the Opera House by the fjord; the Vigeland "
                          "sculpture park is in Frogner Park.", "Oslo"),
    "guide-tromso": ("Tromso: the northern lights show from September to March; the Arctic Cathedral stands across "
                     "the bridge from the town.", "Tromso"),
}
QUESTIONS = ["I'm in Bergen on Saturday. What should I see, and what's the weather like?",
             "Where can I eat good fish there?"]
SIGHTS_QUERY = "What to see in Bergen"
FOOD_QUERY = "Fish restaurants in Bergen"
REPLIES: list[dict[str, Any]] = [
    # turn 1: text and two calls in parallel, the guides' retrieval and the weather
    {"text": "Let me look in the travel guides and check the weather.",
     "tool_calls": [{"name": "travel_guides", "arguments": {"query": SIGHTS_QUERY}},
                    {"name": "get_weather", "arguments": {"city": "Bergen", "day": "Saturday"}}],
     "input_tokens": 236, "output_tokens": 41},
    # get_weather raised: ask again
    {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Bergen", "day": "Saturday"}}],
     "input_tokens": 402, "output_tokens": 18},
    {"text": "On Saturday walk Bryggen, the old Hanseatic wharf, then take the Floibanen up Mount Floyen for the "
             "view. Bring a raincoat: showers and 11°C are forecast.", "input_tokens": 431, "output_tokens": 36},
    # turn 2 (streamed): the guides again
    {"tool_calls": [{"name": "travel_guides", "arguments": {"query": FOOD_QUERY}}],
     "input_tokens": 482, "output_tokens": 17},
    {"text": "For fish, go to the Fish Market by the harbour, or have Bergen fish soup at Bryggeloftet on Bryggen.",
     "input_tokens": 590, "output_tokens": 27},
]
PACKAGES = ["langchain", "langchain-core", "langgraph", "langgraph-prebuilt", "langgraph-checkpoint",
            "langchain-openai", "openai", "numpy", "openinference-instrumentation-langchain",
            "openinference-instrumentation", "openinference-semantic-conventions", "opentelemetry-sdk",
            "opentelemetry-exporter-otlp-proto-http"]
NOTES = ("create_agent (name guide_agent, ChatOpenAI gpt-4o, Chat Completions, stream_usage=True) with "
         "create_retriever_tool travel_guides over InMemoryVectorStore(OpenAIEmbeddings(text-embedding-3-small, "
         "check_embedding_ctx_length=False) against the fake's /v1/embeddings).as_retriever(k=2), four Documents "
         "(ids guide-*, metadata source and city), and get_weather; MemorySaver, thread_id the session (no "
         "using_session). Turn 1 invoke: text and travel_guides + get_weather in parallel, get_weather raising a "
         "ToolException once (handle_tool_error=True sends its text), called again, answered. Turn 2 "
         "stream_mode='messages': travel_guides streamed, answered. 5 LLM calls, 2 retrievals (RETRIEVER spans under "
         "the tool's; no embedding span: LangChain's tracer records none)")


def build_store(rec: Recording) -> Any:
    from langchain_core.documents import Document
    from langchain_core.vectorstores import InMemoryVectorStore
    from langchain_openai import OpenAIEmbeddings

    embeddings = OpenAIEmbeddings(model=EMBEDDING_MODEL, base_url=rec.base_url, api_key="sk-fake",
                                  check_embedding_ctx_length=False)
    store = InMemoryVectorStore(embeddings)
    store.add_documents([Document(id=doc_id, page_content=text, metadata={"source": "norway-guide.md", "city": city})
                         for doc_id, (text, city) in PASSAGES.items()])
    return store


def run(store: Any) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool, ToolException, create_retriever_tool
    from langchain_openai import ChatOpenAI
    from langgraph.checkpoint.memory import MemorySaver

    failures = {"get_weather": 1}  # the weather service fails once

    def get_weather(city: str, day: str) -> str:
        """The weather forecast for a city on a day."""
        if failures["get_weather"]:
            failures["get_weather"] -= 1
            raise ToolException("the weather service did not answer in time")
        return {"Bergen": "showers, 11°C"}[city]

    guides = create_retriever_tool(
        store.as_retriever(search_kwargs={"k": 2}), "travel_guides",
        "Searches the travel guides' passages about Norwegian cities (sights, food) and returns the nearest ones.")
    weather = StructuredTool.from_function(func=get_weather, handle_tool_error=True)
    # stream_usage=True: what langchain-openai defaults to on OpenAI's own URL (off for any other, as here).
    model = ChatOpenAI(model=MODEL, max_retries=0, timeout=30, stream_usage=True)
    agent = create_agent(model, tools=[guides, weather], name="guide_agent",
                         system_prompt="You are a travel assistant. Use the travel guides for what to see and eat, "
                                       "and get_weather for the forecast.",
                         checkpointer=MemorySaver())
    config: Any = {"configurable": {"thread_id": SESSION}}
    first = agent.invoke({"messages": [{"role": "user", "content": QUESTIONS[0]}]}, config)
    print(first["messages"][-1].text)
    for chunk, _metadata in agent.stream({"messages": [{"role": "user", "content": QUESTIONS[1]}]}, config,
                                         stream_mode="messages"):
        print(type(chunk).__name__, str(chunk.content)[:80])


def main() -> None:
    with Recording(Path(__file__).parent, REPLIES, framework="langchain", instrumentation="openinference",
                   packages=PACKAGES, session_id=SESSION, notes=NOTES) as rec:
        rec.env()
        from openinference.instrumentation.langchain import LangChainInstrumentor
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "norway-guide"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        LangChainInstrumentor().instrument(tracer_provider=provider)
        store = build_store(rec)
        run(store)
        rec.flush(provider)


if __name__ == "__main__":
    main()
