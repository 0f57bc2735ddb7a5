"""An Agno Agent searching its `Knowledge` (LanceDB) through Agno's `search_knowledge_base` tool, traced by
OpenInference: the `agno_openinference_knowledge` capture's trace exports.

The model searches the knowledge twice (in parallel with a `get_weather` that raises once, then in the streamed turn
2). The instrumentation records the search as the tool's TOOL span alone, its `output.value` the text Agno returned (the
documents found, `Document.to_dict()` each, as indented JSON), with no RETRIEVER span. Before `agno.tool_execution` and
`agno_knowledge`, the result was that JSON read back and re-serialised compactly (not the text the model was shown: the
corpus comparison failed), and the documents found were listed nowhere. These tests hold what a person expects: each
search's result the text the model was shown, the documents found listed on it as other retrievals are
(`extra.retrievals`), no step of their own.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import yaml
from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "agno_openinference_knowledge"
SESSION = "agno-oi-knowledge-trip-1"
KNOWLEDGE_TOOL = "search_knowledge_base"
Json = dict[str, Any]


def _document() -> Json:
    result = trajectory_from_spans(capture_spans(CAPTURE), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _search_spans() -> list[Span]:
    return sorted((s for s in capture_spans(CAPTURE) if s.name == KNOWLEDGE_TOOL),
                  key=lambda span: span.start_time_unix_nano)


def _calls_of(document: Json, tool: str) -> list[tuple[Json, Json]]:
    """Each call of the tool and its result, in the order they were made."""
    found = []
    for step in document["steps"]:
        results = {r["source_call_id"]: r for r in (step.get("observation") or {}).get("results") or ()}
        found.extend((call, results[call["tool_call_id"]]) for call in step.get("tool_calls") or ()
                     if call["function_name"] == tool)
    return found


def _found(span: Span) -> list[Json]:
    """The documents Agno returned, as the span recorded them (`Document.to_dict()`: name, content, meta_data)."""
    return list(json.loads(span.attributes["output.value"]))


def _searched(span: Span, output: str) -> ToolExecution:
    """The search's span as mapped, had Agno returned `output` instead."""
    returned = replace(span, attributes={**span.attributes, "output.value": output})
    execution = openinference.map_span(SpanReader(returned), ())
    assert isinstance(execution, ToolExecution)
    return execution


def test_each_search_result_is_the_text_the_model_was_shown() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    calls = _calls_of(document, KNOWLEDGE_TOOL)
    assert len(calls) == 2
    for call, result in calls:
        shown = truth.tool_results[call["tool_call_id"]]
        assert shown.startswith("[\n  {\n")  # Agno's indented JSON, not a compact re-serialisation of it
        assert result["content"] == shown
    assert corpus.compare(document, truth, call_ids=True) == []


def test_each_search_lists_the_documents_found_on_its_result() -> None:
    calls = _calls_of(_document(), KNOWLEDGE_TOOL)
    spans = _search_spans()
    assert len(calls) == len(spans) == 2
    for (call, result), span in zip(calls, spans, strict=True):
        (retrieval,) = result["extra"]["retrievals"]
        # The knowledge, named as its documents name it (`linked_to`: the Knowledge's name), the model's query, the
        # tool's span (the search has none of its own).
        assert retrieval["retriever"] == "airline-policies"
        assert retrieval["query"] == call["arguments"]["query"]
        assert retrieval["span_id"] == span.span_id == result["extra"]["span_id"]
        assert "error" not in retrieval
        # Each document's name, text and metadata, in the order found (Agno records no id and no score).
        assert retrieval["documents"] == [{"name": d["name"], "content": d["content"], "metadata": d["meta_data"]}
                                          for d in _found(span)]
    names = [[d["name"] for d in result["extra"]["retrievals"][0]["documents"]] for _call, result in calls]
    assert names == [["baggage-allowance", "cabin-baggage"], ["pets-in-cabin", "cabin-baggage"]]


def test_a_search_is_no_step_of_its_own_and_other_tools_list_none() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    steps = document["steps"]
    assert [s["source"] for s in steps if s["source"] != "agent"] == ["system", "user", "user"]
    assert [s.get("llm_call_count") for s in steps if s["source"] == "agent"] == [1] * len(truth.calls)
    weather = _calls_of(document, "get_weather")
    assert [r["content"] for _c, r in weather] == ["the weather service did not answer in time", "rainy, 9°C"]
    assert weather[0][1]["extra"]["is_error"] is True
    assert not any("retrievals" in r.get("extra", {}) for _c, r in weather)


def test_a_search_dumped_as_yaml_lists_the_same_documents() -> None:
    """An agent of `references_format="yaml"`: Agno dumps the documents with `yaml.dump` (keys sorted)."""
    span = _search_spans()[0]
    as_json = openinference.map_span(SpanReader(span), ())
    assert isinstance(as_json, ToolExecution)
    dumped = yaml.dump(_found(span), default_flow_style=False, allow_unicode=True)
    as_yaml = _searched(span, dumped)
    assert as_yaml.result == dumped  # the text the model was shown
    (retrieval,) = as_yaml.retrievals
    assert retrieval.result == as_json.retrievals[0].result
    assert retrieval.name == "airline-policies" and retrieval.arguments == {"query": "checked bag allowance economy"}


def test_a_search_finding_nothing_or_failing_is_listed_so() -> None:
    span = _search_spans()[0]
    (none_found,) = _searched(span, "No documents found").retrievals
    assert none_found.result == [] and none_found.error is None
    # The search raised: Agno tells the model the exception's class, the tool itself succeeding.
    failed = _searched(span, "Error searching knowledge base: ConnectionError")
    assert failed.error is None
    (retrieval,) = failed.retrievals
    assert retrieval.result == [] and retrieval.error is not None and retrieval.error.error_type == "ConnectionError"
    # Documents naming no knowledge (a Knowledge given no name): the knowledge named by Agno's class.
    unnamed = [{**d, "meta_data": {k: v for k, v in d["meta_data"].items() if k != "linked_to"}} for d in _found(span)]
    assert _searched(span, json.dumps(unnamed, indent=2)).retrievals[0].name == "Knowledge"
    # A result of no shape Agno writes is listed as no retrieval.
    assert _searched(span, "the knowledge base is being rebuilt").retrievals == []
