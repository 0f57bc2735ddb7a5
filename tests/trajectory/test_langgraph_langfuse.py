"""LangGraph traced by Langfuse's LangChain integration (capture langgraph_langfuse):
`langfuse.langchain.CallbackHandler` writes every LangChain run as a Langfuse observation
(trajectory/mappers/langfuse.py), with its own ways (trajectory/mappers/langfuse_langchain.py): the tools offered
appended to a generation's input as `tool` messages, a tool run's call id in its metadata, chain runs (graph nodes)
carrying the graph's state."""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import langfuse, langfuse_langchain
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import AgentRun, LlmCall, Operation, ToolExecution
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_spans, results_by_call

CAPTURE = "langgraph_langfuse"
QUESTIONS = ["What's the weather in Oslo and Bergen, and how much is 300 NOK in EUR?", "And in SEK?"]


def _spans(name: str) -> list[Span]:
    return sorted((s for s in capture_spans(CAPTURE) if s.name == name), key=lambda s: s.start_time_unix_nano)


def _map(span: Span) -> tuple[Operation | None, SpanReader]:
    reader = SpanReader(span)
    assert langfuse.detect(span)
    return langfuse.map_span(reader, []), reader


def _document() -> dict[str, Any]:
    capture = corpus.load(CAPTURE)
    return trajectory_from_spans(capture_spans(CAPTURE), session_id=capture.session_id).document()


def test_the_tools_offered_are_the_calls_definitions_not_tool_results() -> None:
    first, retry = (_map(span)[0] for span in _spans("ChatOpenAI")[:2])
    assert isinstance(first, LlmCall) and isinstance(retry, LlmCall)
    # The handler appends `{"role": "tool", "content": <definition>}` for each tool offered, after the question.
    assert [(m.role, m.text) for m in first.input_messages] == [
        ("system", "You are a travel assistant. Use the tools; retry a tool that fails."), ("user", QUESTIONS[0])]
    offered = corpus.load(CAPTURE).llm_log[0]["request"]["tools"]
    assert first.tool_definitions == offered
    # The results of the tools the model called stay: they answer call ids.
    assert [(p.call_id, p.text) for m in retry.input_messages for p in m.tool_results] == [
        ("call_0_0", "clear, 12°C"), ("call_0_1", "rainy, 9°C"),
        ("call_0_2", "Tool error: rate service timed out. Try again.")]
    assert [d["function"]["name"] for d in retry.tool_definitions] == ["get_weather", "convert_currency"]


def test_only_trailing_definitions_are_split_off() -> None:
    definition = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
    # A tool's output shaped like a definition is still a result when it answers a call id.
    result = {"role": "tool", "content": definition, "tool_call_id": "call_1"}
    messages = [{"role": "user", "content": "Hi"}, result, {"role": "tool", "content": definition}]
    kept, definitions = langfuse_langchain.split_offered_tools(messages)
    assert (kept, definitions) == (messages[:2], [definition])
    assert langfuse_langchain.split_offered_tools(messages[:2]) == (messages[:2], [])
    assert langfuse_langchain.split_offered_tools("Hi") == ("Hi", [])


def test_a_tool_run_answers_the_call_id_in_its_metadata_even_when_it_raised() -> None:
    failed, retried, streamed = (_map(span)[0] for span in _spans("convert_currency"))
    assert isinstance(failed, ToolExecution)
    # It raised: no output (no ToolMessage naming the call), the span an ERROR observation.
    assert (failed.call_id, failed.result, failed.arguments) == (
        "call_0_2", None, {"amount": 300, "source": "NOK", "target": "EUR"})
    assert failed.error is not None and failed.error.status_message == "rate service timed out"
    assert isinstance(retried, ToolExecution) and isinstance(streamed, ToolExecution)
    assert (retried.call_id, streamed.call_id) == ("call_1_0", "call_3_0")


def test_graph_nodes_are_no_steps_and_their_state_is_read() -> None:
    for name in ("model", "tools"):
        for span in _spans(name):
            operation, reader = _map(span)
            assert operation is None
            assert not reader.unused(), reader.unused()


def test_the_agents_run_is_its_question_and_answer_not_its_state() -> None:
    turns = [_map(span)[0] for span in _spans("fjord_agent")]
    assert all(isinstance(run, AgentRun) for run in turns)
    assert [(run.name, run.input_text, run.output_text) for run in turns if isinstance(run, AgentRun)] == [
        ("fjord_agent", QUESTIONS[0], "Oslo is clear at 12°C and Bergen rainy at 9°C; 300 NOK is 25.80 EUR."),
        ("fjord_agent", QUESTIONS[1], "300 NOK is 294.60 SEK.")]
    # An `@observe`d function's arguments (no messages state) are rendered whole, as before.
    assert langfuse_langchain.run_text({"args": ["Paris"]}) == json.dumps({"args": ["Paris"]})


def test_no_request_parameters_is_no_request() -> None:
    call, _ = _map(_spans("ChatOpenAI")[0])
    assert isinstance(call, LlmCall)
    assert "request" not in call.extra  # the handler wrote `{}`: ChatOpenAI was given no parameters


def test_capture_is_the_conversation_that_happened() -> None:
    capture = corpus.load(CAPTURE)
    document = _document()
    truth = corpus.GroundTruth.of(capture.llm_log)
    assert corpus.compare(document, truth, call_ids=True) == []
    assert questions.missing_questions(document, capture.llm_log) == []
    assert document["session_id"] == "lf-lc-fjord-trip-1"
    assert document["agent"]["name"] == "fjord_agent"
    assert document["agent"]["tool_definitions"] == capture.llm_log[0]["request"]["tools"]
    steps = document["steps"]
    # The system prompt once, each question once as a user step of its own turn (not re-sent history), then one
    # agent step per LLM call: turn 1 three, turn 2 (streamed) two.
    assert [(s["source"], s.get("is_copied_context")) for s in steps] == [
        ("system", None), ("user", None), ("agent", None), ("agent", None), ("agent", None),
        ("user", None), ("agent", None), ("agent", None)]
    assert [s["message"] for s in steps if s["source"] == "user"] == QUESTIONS
    calls = [s for s in steps if s["source"] == "agent"]
    assert [(s["metrics"]["prompt_tokens"], s["metrics"]["completion_tokens"]) for s in calls] == [
        (c.input_tokens, c.output_tokens) for c in truth.calls]
    assert all(s["metrics"]["cost_usd"] > 0 for s in calls)
    # The parallel calls' results on the call that asked for them; the one that raised flagged, with what the model
    # was shown (the middleware's error ToolMessage, read from the next call's input).
    results = results_by_call(calls[0])
    assert {call_id: r["content"] for call_id, r in results.items()} == {
        "call_0_0": "clear, 12°C", "call_0_1": "rainy, 9°C",
        "call_0_2": "Tool error: rate service timed out. Try again."}
    flagged = [r["source_call_id"] for s in steps for r in (s.get("observation") or {}).get("results") or ()
               if (r.get("extra") or {}).get("is_error")]
    assert flagged == ["call_0_2"]
    assert results["call_0_2"]["extra"]["error"]["message"] == "rate service timed out"
    assert results_by_call(calls[3])["call_3_0"]["content"] == "294.60 SEK"
    assert document["extra"]["unmapped_attributes"] == []
