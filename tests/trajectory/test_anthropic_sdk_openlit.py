"""OpenLIT's Anthropic instrumentation (the `anthropic-sdk_openlit` capture: a hand-written tool loop, a system prompt
marked for caching, two turns of one session, the second streamed through `messages.stream` and
`messages.create(stream=True)`).

What is its own (`trajectory/mappers/openlit_anthropic.py`): Anthropic's `input_tokens` leave the cache tokens out,
the `system` blocks are copied as they were passed, the tool calls' arguments are restated once more. Checked
against the fake LLM's log, the capture's ground truth.
"""

from __future__ import annotations

from typing import Any

from span_fixtures import capture_document, capture_spans

from evalkit.ingest import attribution
from evalkit.trajectory.mappers import openlit, openlit_anthropic, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURE = "anthropic-sdk_openlit"
SESSION = "openlit-anthropic-trip-1"


def _calls() -> list[tuple[SpanReader, LlmCall]]:
    """The instrumentation's call spans, in the order they were made, each mapped as OpenLIT's mapper maps it."""
    found = []
    for span in sorted(capture_spans(CAPTURE), key=lambda s: s.start_time_unix_nano):
        if openlit_anthropic.is_anthropic(span):
            reader = SpanReader(span)
            call = openlit.map_span(reader, ())
            assert isinstance(call, LlmCall)
            found.append((reader, call))
    return found


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def test_prompt_tokens_count_the_cache_even_where_the_uncached_part_outnumbers_it() -> None:
    """OpenLIT records Anthropic's `input_tokens` (the uncached part): the cache reads and writes are added to it,
    also on the streamed turn's calls, whose 1126 and 1376 uncached tokens outnumber the 1024 read."""
    calls, log = _calls(), _log()
    assert len(calls) == len(log) == 5
    for (reader, call), entry in zip(calls, log, strict=True):
        usage = entry["response"]["usage"]
        cached = usage["cache_read_tokens"] + usage["cache_write_tokens"]
        assert reader.span.attributes["gen_ai.usage.input_tokens"] == usage["input_tokens"] - cached
        assert (call.usage.input_tokens, call.usage.cache_read_tokens, call.usage.cache_write_tokens) == (
            usage["input_tokens"], usage["cache_read_tokens"], usage["cache_write_tokens"])
    assert [reader.span.attributes["gen_ai.usage.input_tokens"] > 1024 for reader, _ in calls] == [
        False, False, False, True, True]
    final = capture_document(CAPTURE, SESSION)["final_metrics"]
    assert final["total_prompt_tokens"] == sum(e["response"]["usage"]["input_tokens"] for e in log) == 9500
    assert final["total_cached_tokens"] == 4 * 1024
    assert final["extra"]["total_cache_creation_input_tokens"] == 1024


def test_the_list_adds_the_cache_tokens_for_the_same_scope() -> None:
    """Ingest's `input_tokens` column adds them by scope too (ingest imports nothing of trajectory/)."""
    assert attribution.OPENLIT_ANTHROPIC_SCOPE == openlit_anthropic.SCOPE


def test_the_system_prompt_is_the_text_of_its_blocks() -> None:
    """`system` was a list of text blocks (one marked `cache_control`): OpenLIT copies the list into one part's
    content; the system prompt is the blocks' text, not their JSON."""
    sent = _log()[0]["request"]["system"]
    assert [block["type"] for block in sent] == ["text"] and "cache_control" in sent[0]
    for _, call in _calls():
        assert call.system_instructions == [sent[0]["text"]]
        assert [(m.role, m.text) for m in call.input_messages[:1]] == [("system", sent[0]["text"])]
    document = capture_document(CAPTURE, SESSION)
    assert [s["message"] for s in document["steps"] if s["source"] == "system"] == [sent[0]["text"]]


def test_every_attribute_of_a_call_span_is_read() -> None:
    """The tool calls' arguments restated as `gen_ai.tool.call.arguments` (besides OpenLIT's comma-joined
    restatement) are the output message's, read there."""
    for reader, _ in _calls():
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()
    document = capture_document(CAPTURE, SESSION)
    assert document["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]


def test_the_session_is_the_conversation_that_happened() -> None:
    """Each question once, one step per call with its text and tool calls, each result on its call, the raising
    tool flagged (OpenLIT drops the `is_error` of the tool_result it was sent as; the tool's own span says it)."""
    document = capture_document(CAPTURE, SESSION)
    steps = document["steps"]
    assert [s["source"] for s in steps] == ["system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert [steps[1]["message"], steps[5]["message"]] == [
        "What is the weather in Lisbon and in Porto?", "And how many US dollars is 100 EUR today?"]
    log = _log()
    agent_steps = [s for s in steps if s["source"] == "agent"]
    for step, entry in zip(agent_steps, log, strict=True):
        answer = entry["response"]
        assert step["message"] == answer["text"]
        assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()] == [
            (c["id"], c["name"], c["arguments"]) for c in answer["tool_calls"]]
    first = agent_steps[0]["observation"]["results"]
    assert [(r["source_call_id"], r["content"]) for r in first] == [
        ("toolu_0_0", "sunny, 24°C"), ("toolu_0_1", "TimeoutError: weather service timed out for Porto")]
    assert first[1]["extra"]["is_error"] is True and "is_error" not in first[0]["extra"]
    sent = log[1]["request"]["messages"][-1]["content"]
    assert [block.get("is_error", False) for block in sent] == [False, True]
    assert agent_steps[1]["observation"]["results"][0]["content"] == "cloudy, 18°C"
    assert agent_steps[3]["observation"]["results"][0]["content"] == "108.00 USD"
    assert [s["extra"]["request"]["stream"] for s in agent_steps] == [False, False, False, True, True]
    assert not [s for s in steps if s.get("llm_call_count") == 0]
