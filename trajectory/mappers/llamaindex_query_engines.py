"""A LlamaIndex query engine an agent calls as a tool (`QueryEngineTool`), and the retrieval it makes, as
OpenInference's llama-index instrumentation records them.

A `QueryEngineTool` runs its query engine inside the tool's span (`QueryEngineTool.acall`, named `{class}.{method}`):
a `RetrieverQueryEngine` retrieves the nodes nearest the query (a RETRIEVER span, the query's EMBEDDING span under
it), then its response synthesizer asks an LLM of its own to answer the query from them (an LLM span, `OpenAI.achat`,
under the synthesizer's CHAIN spans); the agent's model is shown the synthesised answer alone, as the tool's result.
The synthesis is no call of the agent's model: its prompt (the synthesizer's instructions, then the retrieved text and
the query) and answer are the query engine's own conversation. So the tool is read as a delegation whose run is
inside its span (`ToolExecution.runs_agent`, named as the model calls the tool): the spans under it are a subagent the
call started, its result the answer the agent was shown, its tokens counted with the session's.

The retrieval is that run's first step: the instrumentation writes the documents a retriever returned on its public
method's span (`VectorIndexRetriever.aretrieve`: `retrieval.documents.<i>.document.{id,content,score,metadata}`, the
query as `input.value`), which is read as OpenInference's retrievers are (`openinference_retrievers`: an execution of
the retriever, named for its class, with the query as its argument and the documents, in their order, as its result):
inside the query engine's run, a step of no LLM call, so that what was retrieved, from where and how near, is shown
where the synthesis that used it is. The span of the retriever's private method under it
(`VectorIndexRetriever._aretrieve`) is the same retrieval again (the documents only as `NodeWithScore` reprs): no
step. An EMBEDDING span records the texts embedded and their vectors, with no usage: it is read, no step (the
embeddings' tokens are in no span).

Seen in a real capture: tests/captures/llamaindex_openinference_rag (a VectorStoreIndex's query engine as
`travel_guides`, its synthesizer on another model than the agent's).
"""

from __future__ import annotations

from evalkit.trajectory.mappers import openinference_retrievers
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution

QUERY_ENGINE_TOOL = "QueryEngineTool."  # its span's name, `{class}.{method}` (`acall`, `call`)


def tool(execution: ToolExecution) -> ToolExecution:
    """A tool's execution; a query engine's tool a delegation to the engine's run inside its span, named as the model
    calls the tool."""
    if execution.span.name.startswith(QUERY_ENGINE_TOOL):
        execution.runs_agent = execution.name or ""
    return execution


def retrieval(reader: SpanReader, emitter: str) -> ToolExecution | None:
    """A retriever's span: an execution of the retriever, the query its argument and the documents it returned its
    result; None for its private method's span inside it (the same retrieval)."""
    retriever, _, method = reader.span.name.rpartition(".")
    reader.consume("output.value")  # the documents as `NodeWithScore` reprs: read from `retrieval.documents` instead
    if method.startswith("_"):
        reader.consume("input.value")
        return None
    return openinference_retrievers.retrieval(reader, emitter, retriever or reader.span.name)


def read_embedding(reader: SpanReader) -> None:
    """An embedding span: its model, the texts embedded and their vectors, read on purpose (no step, no usage)."""
    reader.consume("embedding.model_name", "input.value", "output.value")
    reader.consume_prefix("embedding.embeddings.")
