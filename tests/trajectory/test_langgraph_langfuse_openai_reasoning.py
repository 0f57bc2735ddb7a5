"""A reasoning model on the Responses API under LangGraph, traced by Langfuse's LangChain CallbackHandler inside the
application's own Langfuse span (capture langgraph_langfuse_openai-reasoning): the answer's Responses items kept as
LangChain content blocks, and Langfuse's usage keys, `output` without the reasoning tokens
(trajectory/mappers/langfuse_langchain.py, trajectory/mappers/langfuse.py)."""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import langfuse, langfuse_langchain
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Operation
from evalkit.trajectory.span import Span
from tests.captures import corpus, questions
from tests.trajectory.span_fixtures import capture_spans, results_by_call

CAPTURE = "langgraph_langfuse_openai-reasoning"
QUESTIONS = ["Book me a hotel in Oslo for 2 nights, and what's the weather there?",
             "How much is that in euros, at 1500 NOK a night?"]


def _spans(name: str) -> list[Span]:
    return sorted((s for s in capture_spans(CAPTURE) if s.name == name), key=lambda s: s.start_time_unix_nano)


def _map(span: Span) -> tuple[Operation | None, SpanReader]:
    reader = SpanReader(span)
    assert langfuse.detect(span)
    return langfuse.map_span(reader, []), reader


def _calls() -> list[LlmCall]:
    calls = [_map(span)[0] for span in _spans("ChatOpenAI")]
    assert all(isinstance(call, LlmCall) for call in calls)
    return calls  # type: ignore[return-value]


def test_a_responses_answer_is_its_tool_calls_once_and_its_reasoning_summary() -> None:
    first, retry = _calls()[:2]
    (answer,) = first.output_messages
    # langchain-openai keeps each `function_call` item as a content block beside the same call in `tool_calls`.
    assert [(p.call_id, p.name, p.arguments) for p in answer.tool_calls] == [
        ("call_c39be6fb304892545048371e", "book_hotel", {"city": "Oslo", "nights": 2}),
        ("call_116f633abeacdcbfb74336c8", "get_weather", {"city": "Oslo"})]
    assert answer.text == "I'll book the hotel and check the weather in Oslo."
    assert answer.reasoning == corpus.load(CAPTURE).llm_log[0]["response"]["reasoning"]
    # The answer re-sent in the next call's input: its calls once too.
    (resent,) = [m for m in retry.input_messages if m.role == "assistant"]
    assert [p.call_id for p in resent.tool_calls] == [p.call_id for p in answer.tool_calls]


def test_responses_blocks_leave_other_messages_as_they_are() -> None:
    plain = {"role": "user", "content": [{"type": "text", "text": "Hi"}]}
    # A function_call item no `tool_calls` entry names is kept: it is the only record of that call.
    orphan = {"role": "assistant", "content": [{"type": "function_call", "call_id": "c1", "name": "f"}]}
    text = '"function_call"'
    kept = langfuse_langchain.responses_blocks([plain, orphan], text)
    assert kept[0] is plain and kept[1] is orphan
    # Without either key in the text, nothing is looked at.
    assert langfuse_langchain.responses_blocks(orphan, "{}") is orphan


def test_langfuses_output_key_leaves_the_reasoning_tokens_out() -> None:
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    usages = [call.usage for call in _calls()]
    # usage_details {"input": 234, "output": 44, "total": 406, "input_cache_read": 0, "output_reasoning": 128}: the
    # handler took every detail's count off `input` and `output`; the model answered 172 tokens, 128 of them reasoning.
    assert [(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.reasoning_tokens) for u in usages] == [
        (c.input_tokens, c.output_tokens, c.cache_read_tokens, c.reasoning_tokens) for c in truth.calls]
    assert usages[0].output_tokens == 172 and usages[0].reasoning_tokens == 128


def test_the_applications_span_is_no_step_and_its_input_is_read() -> None:
    for span in _spans("trip-request"):
        operation, reader = _map(span)
        assert operation is None
        assert not reader.unused(), reader.unused()


def test_capture_is_the_conversation_that_happened() -> None:
    capture = corpus.load(CAPTURE)
    document: dict[str, Any] = trajectory_from_spans(capture_spans(CAPTURE), session_id=capture.session_id).document()
    truth = corpus.GroundTruth.of(capture.llm_log)
    # Each step's own reasoning, its reasoning tokens, cache reads and token totals are held to the log too.
    assert corpus.compare(document, truth, call_ids=True) == []
    assert questions.missing_questions(document, capture.llm_log) == []
    assert document["session_id"] == "lf-lc-reasoning-trip-1"
    assert document["agent"]["name"] == "travel_agent"
    steps = document["steps"]
    assert [(s["source"], s.get("is_copied_context")) for s in steps] == [
        ("system", None), ("user", None), ("agent", None), ("agent", None), ("agent", None),
        ("user", None), ("agent", None), ("agent", None)]
    assert [s["message"] for s in steps if s["source"] == "user"] == QUESTIONS
    calls = [s for s in steps if s["source"] == "agent"]
    assert [len(s.get("tool_calls") or ()) for s in calls] == [2, 1, 0, 1, 0]
    assert (document["final_metrics"]["total_completion_tokens"], document["final_metrics"]["total_cached_tokens"]) == (
        truth.output_tokens, truth.cache_read_tokens)
    # The handled ToolException: flagged, with the text the model was shown.
    booking = results_by_call(calls[0])["call_c39be6fb304892545048371e"]
    assert booking["content"] == "the booking service did not answer in time"
    assert booking["extra"]["is_error"] is True
    assert document["extra"]["unmapped_attributes"] == []
