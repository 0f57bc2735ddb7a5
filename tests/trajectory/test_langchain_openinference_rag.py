"""A LangChain `create_agent` with a retriever tool (`create_retriever_tool` over an `InMemoryVectorStore`), traced by
OpenInference: the `langchain_openinference_rag` capture's trace exports.

The agent calls `travel_guides` twice (in parallel with a get_weather that raises once, then in the streamed turn 2).
The tool runs its retriever inside its own span: a RETRIEVER span with the documents found (their text and metadata as
`retrieval.documents.*`, their ids only in the run's serialised output), and the model is shown the documents' text
joined, as the tool's result. Before `langchain_retrievers`, the documents were in no step (the RETRIEVER spans'
attributes unmapped): the corpus comparison passed all the same (one step per call, each result on its call, the
totals). These tests hold what a person expects: each retriever call's result the text the model was shown, with the
documents found listed on it, and no step of its own for the same retrieval.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader, parse_json
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "langchain_openinference_rag"
SESSION = "lc-oi-rag-1"
RETRIEVER_TOOL = "travel_guides"
Json = dict[str, Any]


def _document(spans: list[Span] | None = None) -> Json:
    result = trajectory_from_spans(spans if spans is not None else capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _retriever_spans() -> list[Span]:
    return sorted((s for s in capture_spans(CAPTURE) if s.attributes.get("openinference.span.kind") == "RETRIEVER"),
                  key=lambda span: span.start_time_unix_nano)


def _retriever_calls(document: Json) -> list[tuple[Json, Json]]:
    """Each call of the retriever tool and its result, in the order they were made."""
    found = []
    for step in document["steps"]:
        results = {r["source_call_id"]: r for r in (step.get("observation") or {}).get("results") or ()}
        found.extend((call, results[call["tool_call_id"]]) for call in step.get("tool_calls") or ()
                     if call["function_name"] == RETRIEVER_TOOL)
    return found


def _serialised_documents(span: Span) -> list[Json]:
    """The documents as the retriever's run returned them (its `output.value`, each Document dumped whole)."""
    return list(parse_json(span.attributes["output.value"])["documents"])


def test_each_retriever_call_lists_the_documents_found_on_the_result_the_model_was_shown() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    calls = _retriever_calls(document)
    spans = _retriever_spans()
    assert len(calls) == len(spans) == 2
    for (call, result), span in zip(calls, spans, strict=True):
        # The result is the text the model was shown: the documents' text, joined as the tool joins them.
        assert result["content"] == truth.tool_results[call["tool_call_id"]]
        (retrieval,) = result["extra"]["retrievals"]
        assert retrieval["retriever"] == span.name == "VectorStoreRetriever"
        assert retrieval["query"] == call["arguments"]["query"]
        assert retrieval["span_id"] == span.span_id
        found = retrieval["documents"]
        assert "\n\n".join(d["content"] for d in found) == result["content"]
        # Each document's id (recorded only in the run's output: the tracer writes no `document.id`), its text and
        # its metadata, in the retriever's order.
        assert not any(key.endswith(".document.id") for key in span.attributes)
        serialised = _serialised_documents(span)
        assert found == [{"id": d["id"], "content": d["page_content"], "metadata": d["metadata"]} for d in serialised]
        assert all(d["id"].startswith("guide-") for d in found)


def test_a_retrieval_is_no_step_of_its_own() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    # The steps are the instructions, the two questions and the model's calls: nothing else, no call of the retriever.
    steps = document["steps"]
    assert [s["source"] for s in steps if s["source"] != "agent"] == ["system", "user", "user"]
    assert [s.get("llm_call_count") for s in steps if s["source"] == "agent"] == [1] * len(truth.calls)
    called = [c["function_name"] for s in steps for c in s.get("tool_calls") or ()]
    assert called == [c["name"] for call in truth.calls for c in call.tool_calls]
    assert corpus.compare(document, truth, call_ids=True) == []


def test_the_retrievers_span_is_read_whole() -> None:
    for span in _retriever_spans():
        reader = SpanReader(span)
        execution = openinference.map_span(reader, ())
        assert isinstance(execution, ToolExecution) and execution.retrieval
        assert [d["id"] for d in execution.result] == [d["id"] for d in _serialised_documents(span)]
        assert reader.unused() - {"session.id", "input.mime_type", "output.mime_type"} == set(), span.name
    assert "retrieval.documents.*.document.content" not in _document()["extra"].get("unmapped_attributes", [])


def test_a_retrieval_inside_another_is_listed_on_the_same_call() -> None:
    """A retriever combining others (an EnsembleRetriever, a MultiQueryRetriever) runs them inside its own run: each
    inner RETRIEVER span is listed on the same call's result, after the outer one, and is no step either."""
    spans = capture_spans(CAPTURE)
    outer = _retriever_spans()[0]
    inner = replace(outer, span_id="00000000000000aa", parent_span_id=outer.span_id,
                    start_time_unix_nano=outer.start_time_unix_nano + 1, name="InnerRetriever")
    document = _document([*spans, inner])
    _call, result = _retriever_calls(document)[0]
    assert [(r["retriever"], r["span_id"]) for r in result["extra"]["retrievals"]] == [
        ("VectorStoreRetriever", outer.span_id), ("InnerRetriever", inner.span_id)]
    assert len(document["steps"]) == len(_document()["steps"])
