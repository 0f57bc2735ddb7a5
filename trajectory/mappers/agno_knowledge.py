"""Agno's knowledge search as OpenInference's Agno instrumentation records it.

An Agent (or Team) given `knowledge` and `search_knowledge=True` offers the model Agno's own `search_knowledge_base`
tool (`agent/_default_tools.create_knowledge_search_tool`, a Team's alike). It searches the knowledge (its vector db,
or the agent's `knowledge_retriever`) for the model's `query` and returns what it found as text: the documents'
`Document.to_dict()` (`name`, `content`, `meta_data`: no id, no score), dumped as indented JSON or as YAML (the agent's
`references_format`, "json" by default); "No documents found" where it found none; "Error searching knowledge base:
<exception class>" where the search raised, the tool itself succeeding. The instrumentation wraps Agno's runs, model
calls and function calls only: the search is the tool's TOOL span, with no RETRIEVER span inside it (nor a span of the
embedding or of the vector db).

So the retrieval is read from the tool's result, which stays the text the model was shown (`agno.tool_execution`): a
retrieval run within the tool's span (`ToolExecution.retrievals`), listed on the call's result as a retriever's span
inside a tool's is (`extra.retrievals`, `openinference_retrievers`): the knowledge named as its documents name it
(`meta_data.linked_to`, the `Knowledge`'s name, which Agno adds on insert), else "Knowledge" (the class the agent's run
span names, `agno.knowledge`); each document its name, text and metadata, in the order found.

Seen in a real capture: tests/captures/agno_openinference_knowledge (a `Knowledge` over LanceDB, two searches).
"""

from __future__ import annotations

from typing import Any

import yaml

from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.operations import ErrorInfo, ToolExecution

TOOL = "search_knowledge_base"  # the name Agno gives its knowledge tool (`Function.from_callable(…, name=…)`)
_NONE_FOUND = "No documents found"
_FAILED = "Error searching knowledge base: "  # then the exception's class name
_KNOWLEDGE = "Knowledge"
_LINKED_TO = "linked_to"  # the metadata key Agno gives each document inserted: its knowledge's name
# `Document.to_dict()`'s fields, as the shared document shape names them (`openinference_retrievers`), in its order.
_FIELDS = (("name", "name"), ("content", "content"), ("meta_data", "metadata"))


def tool_execution(execution: ToolExecution) -> ToolExecution:
    """The knowledge tool's call given the retrieval it ran, read from its result; any other tool as it is."""
    if execution.name != TOOL or not isinstance(execution.result, str):
        return execution
    text = execution.result.strip()
    error = None
    if text == _NONE_FOUND:
        documents: list[dict[str, Any]] = []
    elif text.startswith(_FAILED):
        documents, error = [], ErrorInfo(status_message=text, error_type=text.removeprefix(_FAILED) or None)
    else:
        found = _found_documents(text)
        if found is None:
            return execution  # a result of no shape Agno writes: no retrieval read into it
        documents = found
    arguments = execution.arguments
    execution.retrievals.append(ToolExecution(
        span=execution.span,
        emitter=execution.emitter,
        name=_knowledge_name(documents),
        arguments={"query": arguments.get("query") if isinstance(arguments, dict) else arguments},
        result=documents,
        error=error,
        retrieval=True,
    ))
    return execution


def _found_documents(text: str) -> list[dict[str, Any]] | None:
    """The documents of a search's result, JSON or YAML as Agno dumped them, each in the shared shape; None where the
    text is no list of them."""
    found = parse_json(text)
    if isinstance(found, str):
        try:
            found = yaml.safe_load(text)
        except yaml.YAMLError:
            return None
    if not isinstance(found, list) or not found:
        return None
    documents = []
    for item in found:
        if isinstance(item, str):  # a `knowledge_retriever` may return texts
            documents.append({"content": item})
        elif isinstance(item, dict) and "content" in item:
            documents.append({shared: item[key] for key, shared in _FIELDS if item.get(key) is not None})
        else:
            return None
    return documents


def _knowledge_name(documents: list[dict[str, Any]]) -> str:
    """The knowledge searched, as every document found names it, else Agno's class."""
    names = {_linked_to(document.get("metadata")) for document in documents}
    name = names.pop() if len(names) == 1 else None
    return name or _KNOWLEDGE


def _linked_to(metadata: Any) -> str | None:
    name = metadata.get(_LINKED_TO) if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None
