"""A retriever's span under OpenInference's conventions, shared by its instrumentations (LlamaIndex's, LangChain's).

A RETRIEVER span records the query as `input.value` and each document the retriever returned as
`retrieval.documents.<i>.document.{id,score,content,metadata}`, in the retriever's order, each key only where the
instrumentation knows it (LangChain's tracer writes no id and no score). It is read as an execution of the retriever,
named for it, the query its argument and the documents its result, marked a retrieval (`ToolExecution.retrieval`):
where it is inside a tool the model called that runs no agent of its own (a LangChain retriever tool), it is that
call's own work, its documents listed on the call's result rather than a step of their own (`build`); elsewhere (a
LlamaIndex query engine's run, a chain of no tool) it is a step of no LLM call whose result is the documents found.

What an instrumentation records beyond the convention (the span of a private method repeating the retrieval, ids only
in the retriever's serialised output) is read by its framework's mapper: `llamaindex_query_engines`,
`langchain_retrievers`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit.trajectory.mappers.errors import span_error
from evalkit.trajectory.mappers.reader import SpanReader, dig, indexed, parse_json, unflatten
from evalkit.trajectory.operations import ToolExecution

DOCUMENTS = "retrieval.documents."


def retrieval(reader: SpanReader, emitter: str, retriever: str, ids: Sequence[str | None] = ()) -> ToolExecution:
    """The retriever's execution: the query its argument, the documents it returned its result. `ids`: the documents'
    ids, in their order, where the framework records them elsewhere than as `document.id`."""
    documents = [_document(node) for node in indexed(unflatten(reader.prefixed(DOCUMENTS)))]
    for document, found_id in zip(documents, ids, strict=False):
        if found_id is not None:
            document.setdefault("id", found_id)
    return ToolExecution(
        span=reader.span,
        emitter=emitter,
        name=retriever,
        arguments={"query": reader.get("input.value")},
        result=[_in_order(document) for document in documents],
        error=span_error(reader),
        retrieval=True,
    )


_ORDER = ("id", "score", "content", "metadata")  # as the convention lists a document's keys


def _document(node: Any) -> dict[str, Any]:
    """A retrieved document as the instrumentation wrote it: its id, score, text and metadata, the ones it has."""
    document = dig(node, "document")
    found = {"id": dig(document, "id"), "score": dig(document, "score"), "content": dig(document, "content"),
             "metadata": parse_json(dig(document, "metadata"))}
    return {key: value for key, value in found.items() if value is not None}


def _in_order(document: dict[str, Any]) -> dict[str, Any]:
    return {key: document[key] for key in _ORDER if key in document}


def as_document(found: dict[str, Any]) -> dict[str, Any]:
    """A document found as every retrieval lists it, from what another record says of it (a provider's file search's
    results: `openai_agents_file_search`): the convention's keys it has a value for, in the convention's order."""
    return _in_order({key: value for key, value in found.items() if value is not None})
