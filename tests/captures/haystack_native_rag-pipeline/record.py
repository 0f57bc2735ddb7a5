"""Re-record: a Haystack RAG pipeline (BM25 retriever, ChatPromptBuilder, OpenAIChatGenerator), traced by
Haystack's own OpenTelemetry tracer through its `OpenTelemetryConnector` component.

    python3 -m venv /tmp/cap-haystack && /tmp/cap-haystack/bin/pip install \
        haystack-ai==3.4.1 opentelemetry-haystack==2.0.0 \
        opentelemetry-sdk==1.45.2 opentelemetry-exporter-otlp-proto-http==1.45.2
    /tmp/cap-haystack/bin/python tests/captures/haystack_native_rag-pipeline/record.py

The connector is the documented way to trace a pipeline (`HAYSTACK_CONTENT_TRACING_ENABLED=true` for content):
`haystack.pipeline.run` > one `haystack.component.run` per component, each with its inputs and outputs as JSON
(`haystack.component.input` / `.output`). The generator's are the chat: the prompt builder's rendered messages
in, `replies` out (model and usage in each reply's `meta`). Two questions in one session (the application's
span carries `session.id`), each a pipeline run of its own. (The versions are in meta.json.)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from tests.captures.recording.session import Recording

SESSION = "haystack-rag-1"
REPLIES = [
    {"text": "The Eiffel Tower is 330 metres tall."},
    {"text": "It was finished in 1889."},
]
DOCUMENTS = [
    "The Eiffel Tower is 330 metres (1,083 ft) tall, about the height of an 81-storey building.",
    "The Eiffel Tower was completed in March 1889 for the World's Fair.",
    "The Louvre is the world's most-visited museum.",
]
TEMPLATE = ("Answer from these documents only.\n{% for document in documents %}- {{ document.content }}\n"
            "{% endfor %}\nQuestion: {{ question }}")


def main() -> None:
    os.environ["HAYSTACK_CONTENT_TRACING_ENABLED"] = "true"  # read when haystack is imported
    with Recording(Path(__file__).parent, REPLIES, framework="haystack",
                   instrumentation="haystack (native, OpenTelemetryConnector)",
                   packages=["haystack-ai", "opentelemetry-haystack", "openai", "opentelemetry-sdk"],
                   session_id=SESSION,
                   notes="RAG pipeline (BM25 retriever, chat prompt builder, chat generator), two questions in "
                         "one session (the application's span carries session.id)") as rec:
        rec.env()
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider(resource=Resource.create({"service.name": "tower-facts"}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)

        from haystack import Document, Pipeline
        from haystack.components.builders import ChatPromptBuilder
        from haystack.components.generators.chat import OpenAIChatGenerator
        from haystack.components.retrievers.in_memory import InMemoryBM25Retriever
        from haystack.dataclasses import ChatMessage
        from haystack.document_stores.in_memory import InMemoryDocumentStore
        from haystack.utils import Secret
        from haystack_integrations.components.connectors.opentelemetry import OpenTelemetryConnector

        store = InMemoryDocumentStore()
        store.write_documents([Document(content=text) for text in DOCUMENTS])
        pipeline = Pipeline()
        pipeline.add_component("tracer", OpenTelemetryConnector())
        pipeline.add_component("retriever", InMemoryBM25Retriever(document_store=store, top_k=2))
        pipeline.add_component("prompt_builder", ChatPromptBuilder(
            template=[ChatMessage.from_system("You answer questions about Paris landmarks."),
                      ChatMessage.from_user(TEMPLATE)], required_variables=["question", "documents"]))
        pipeline.add_component("llm", OpenAIChatGenerator(model="gpt-4o-mini", api_key=Secret.from_token("sk-fake"),
                                                          api_base_url=rec.base_url))
        pipeline.connect("retriever.documents", "prompt_builder.documents")
        pipeline.connect("prompt_builder.prompt", "llm.messages")
        app = trace.get_tracer("tower-facts")
        for question in ("How tall is the Eiffel Tower?", "When was the Eiffel Tower finished?"):
            with app.start_as_current_span("question", attributes={"session.id": SESSION}):
                result = pipeline.run({"retriever": {"query": question}, "prompt_builder": {"question": question}})
            print(result["llm"]["replies"][0].text)
        rec.flush(provider)


if __name__ == "__main__":
    main()
