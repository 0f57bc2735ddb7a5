"""A LangChain retriever's run as OpenInference's LangChain tracer records it.

A retriever (a `VectorStoreRetriever`, any `BaseRetriever`) runs as a run of type "retriever": the tracer makes it a
RETRIEVER span named for the retriever's class, the query as `input.value`, each document found as
`retrieval.documents.<i>.document.{content,metadata}` (`_as_document`: no id, and no score, which a
`VectorStoreRetriever` drops anyway), and the run's outputs as `output.value`, `{"documents": [...]}`, each document
serialised whole (`id`, `metadata`, `page_content`, `type`): the only record of the documents' ids. It is read as
OpenInference's retrievers are (`openinference_retrievers`), the ids from that output.

`create_retriever_tool` runs its retriever inside the tool's run, so the RETRIEVER span is under the tool's TOOL span:
the call's own work, its documents listed on the call's result, whose content is the documents' text as the model was
shown it (joined as the tool's `document_prompt` and separator made it).

Seen in a real capture: tests/captures/langchain_openinference_rag (`create_retriever_tool` over an
`InMemoryVectorStore`'s retriever, in a `create_agent`'s tools).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import openinference_retrievers
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import ToolExecution


def retrieval(reader: SpanReader, emitter: str) -> ToolExecution:
    """A retriever's span: an execution of the retriever (named for its class, as the span is), its documents'
    ids from its serialised output."""
    return openinference_retrievers.retrieval(reader, emitter, reader.span.name,
                                              _document_ids(reader.get("output.value")))


def _document_ids(output: Any) -> list[str | None]:
    """Each serialised document's id, in order (None for one with none)."""
    found = parse_json(output)
    documents = found.get("documents") if isinstance(found, dict) else None
    if not isinstance(documents, list):
        return []
    return [document["id"] if isinstance(document, dict) and isinstance(document.get("id"), str) else None
            for document in documents]
