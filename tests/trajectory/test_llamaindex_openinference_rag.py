"""A LlamaIndex FunctionAgent with a `QueryEngineTool` over a vector index, traced by OpenInference: the
`llamaindex_openinference_rag` capture's trace exports.

The agent (gpt-4o) calls `travel_guides`, a query engine, twice (in parallel with a get_weather that raises once, then
in the streamed turn 2). Inside the tool's span the engine retrieves the two nearest passages (a RETRIEVER span with
their ids, text and scores) and its synthesizer asks gpt-4o-mini to answer from them (an LLM span): the agent's model
is shown the synthesised answer. Before `llamaindex_query_engines`, the synthesizer's instructions, its prompt (the
passages and the query) and its answer were steps of the agent's conversation, which its model never saw, and the
retrieved documents were nowhere (unmapped attributes). The corpus comparison passes either way (one step per call,
each result on its call, the totals): these tests hold the shape a person expects.
"""

from __future__ import annotations

import json
from typing import Any

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus

CAPTURE = "llamaindex_openinference_rag"
SESSION = "li-oi-rag-1"
QUERY_TOOL = "travel_guides"
Json = dict[str, Any]


def _session_spans() -> list[Span]:
    """The session's traces, as the service reads them: not the trace of the index's building (no session)."""
    spans = capture_spans(CAPTURE)
    traces = {span.trace_id for span in spans if span.attributes.get("session.id") == SESSION}
    return [span for span in spans if span.trace_id in traces]


def _document() -> Json:
    result = trajectory_from_spans(_session_spans(), session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _models() -> tuple[str, str]:
    """The agent's model (the one sent tools) and the synthesizer's (sent none), from the log."""
    (agent,) = {e["model"] for e in _log() if e["request"].get("tools")}
    (synthesizer,) = {e["model"] for e in _log() if not e["request"].get("tools")}
    return agent, synthesizer


def _llm_steps(trajectory: Json) -> list[Json]:
    return [s for s in trajectory["steps"] if s["source"] == "agent" and s.get("llm_call_count") == 1]


def _results(step: Json) -> list[Json]:
    return list((step.get("observation") or {}).get("results") or ())


def _query_calls(document: Json) -> list[tuple[Json, Json]]:
    """Each call of the query engine's tool in the agent's trajectory and its result."""
    found = []
    for step in document["steps"]:
        results = {r["source_call_id"]: r for r in _results(step)}
        found.extend((call, results[call["tool_call_id"]]) for call in step.get("tool_calls") or ()
                     if call["function_name"] == QUERY_TOOL)
    return found


def _subagent(document: Json, result: Json) -> Json:
    (ref,) = result["subagent_trajectory_ref"]
    (sub,) = [s for s in document.get("subagent_trajectories") or () if s["trajectory_id"] == ref["trajectory_id"]]
    return sub


def test_the_agents_conversation_is_its_own_models_calls_alone() -> None:
    document = _document()
    agent_model, synthesizer_model = _models()
    agent_calls = [e for e in _log() if e["model"] == agent_model]
    steps = _llm_steps(document)
    assert [s["model_name"] for s in steps] == [agent_model] * len(agent_calls)
    assert [corpus.message_text(s["message"]) for s in steps] == [e["response"]["text"] for e in agent_calls]
    # Nothing the synthesizer was sent is a step of the agent's: its instructions, nor its prompt of passages.
    synthesis_sent = {m["content"] for e in _log() if e["model"] == synthesizer_model for m in e["request"]["messages"]}
    assert not [s for s in document["steps"] if corpus.message_text(s.get("message")) in synthesis_sent]
    user_steps = [corpus.message_text(s["message"]) for s in document["steps"] if s["source"] == "user"]
    asked = [m["content"] for e in agent_calls for m in e["request"]["messages"][-1:] if m["role"] == "user"]
    assert user_steps == asked


def test_each_query_engine_call_is_a_subagent_synthesising_the_answer_the_agent_was_shown() -> None:
    document = _document()
    truth = corpus.GroundTruth.of(_log())
    _agent_model, synthesizer_model = _models()
    syntheses = [e for e in _log() if e["model"] == synthesizer_model]
    calls = _query_calls(document)
    assert len(calls) == len(syntheses) == 2
    for (call, result), synthesis in zip(calls, syntheses, strict=True):
        # The call's result is what the agent's model was shown, and the run that made it is referenced.
        assert result["content"] == truth.tool_results[call["tool_call_id"]] == synthesis["response"]["text"]
        sub = _subagent(document, result)
        assert sub["agent"]["name"] == QUERY_TOOL
        assert sub["agent"]["model_name"] == synthesizer_model
        (step,) = _llm_steps(sub)
        assert corpus.message_text(step["message"]) == synthesis["response"]["text"]
        assert step["metrics"]["prompt_tokens"] == synthesis["response"]["usage"]["input_tokens"]
        # Its instructions and prompt (the passages, then the query the agent's model wrote) as the synthesizer was
        # sent them, before its answer.
        sent = [(m["role"], m["content"]) for m in synthesis["request"]["messages"]]
        before = [(s["source"], corpus.message_text(s["message"])) for s in sub["steps"]
                  if s["source"] in ("system", "user")]
        assert before == sent
        assert call["arguments"]["input"] in sent[-1][1]
    # Every call's tokens are the session's, the synthesizer's with the agent's.
    final = document["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (truth.input_tokens,
                                                                                truth.output_tokens)


def test_the_retrieval_is_the_query_engines_first_step_with_the_documents_found() -> None:
    document = _document()
    _agent_model, synthesizer_model = _models()
    syntheses = [e for e in _log() if e["model"] == synthesizer_model]
    retrievers = sorted((s for s in _session_spans() if s.name.endswith(".aretrieve")),
                        key=lambda span: span.start_time_unix_nano)
    for (call, result), synthesis, span in zip(_query_calls(document), syntheses, retrievers, strict=True):
        sub = _subagent(document, result)
        first = sub["steps"][0]
        assert first["source"] == "agent" and first["llm_call_count"] == 0
        (retrieve,) = first["tool_calls"]
        assert retrieve["function_name"] == "VectorIndexRetriever"
        assert retrieve["arguments"] == {"query": call["arguments"]["input"]}
        (found,) = _results(first)
        documents = json.loads(found["content"])
        # As the retriever span recorded them, nearest first; each passage's text the synthesizer was sent, in order.
        recorded = span.attributes
        assert [d["id"] for d in documents] == [recorded[f"retrieval.documents.{i}.document.id"]
                                                for i in range(len(documents))]
        assert [d["score"] for d in documents] == sorted((d["score"] for d in documents), reverse=True)
        assert all(d["metadata"] == {"source": "norway-guide"} for d in documents)
        prompt = synthesis["request"]["messages"][-1]["content"]
        positions = [prompt.index(d["content"]) for d in documents]
        assert positions == sorted(positions) and len(documents) == 2


def test_a_retrievers_private_span_is_the_same_retrieval_and_embeddings_are_read() -> None:
    for span in _session_spans():
        kind = span.attributes.get("openinference.span.kind")
        if kind not in ("RETRIEVER", "EMBEDDING"):
            continue
        reader = SpanReader(span)
        operation = openinference.map_span(reader, ())
        if span.name.endswith(".aretrieve"):
            assert isinstance(operation, ToolExecution) and operation.result
        else:  # `VectorIndexRetriever._aretrieve`, `OpenAIEmbedding.aget_query_embedding` and its private span
            assert operation is None
        assert reader.unused() - {"session.id", "input.mime_type", "output.mime_type"} == set(), span.name
    # The query engine's tool runs it inside its span (a subagent named as the model calls the tool), a function
    # tool runs none.
    runs: dict[str, set[str | None]] = {}
    for span in _session_spans():
        if span.attributes.get("openinference.span.kind") == "TOOL":
            execution = openinference.map_span(SpanReader(span), ())
            assert isinstance(execution, ToolExecution)
            runs.setdefault(span.name, set()).add(execution.runs_agent)
    assert runs == {"QueryEngineTool.acall": {QUERY_TOOL}, "FunctionTool.acall": {None}}
