"""pydantic-ai's own spans converted by openinference-instrumentation-pydantic-ai (capture pydantic-ai_openinference).

Its `OpenInferenceSpanProcessor` adds OpenInference attributes to each span as it ends and keeps every GenAI one,
so each span carries both conventions. pydantic-ai's reading comes first (`registry.py`) and OpenInference's only
fills what it lacks: each call is counted once, and the converter's lossy restatements (the parallel calls' two
results as one `tool` message under the last call's id, a tool's compact JSON result re-dumped with spaces) are
not what the trajectory shows. The ModelRetry's result is shown as the OpenAI adapter sent it, `{"error": …}`, from
the tool span's retry (`pydantic_ai_tool_errors.py`, tested in test_pydantic_ai_tool_errors.py).
"""

from __future__ import annotations

from typing import Any

from evalkit.trajectory.mappers import openinference, pydantic_ai, registry
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "pydantic-ai_openinference"
SESSION = "pai-oi-trip-1"
# What OpenInference's processor adds (its `get_attributes`): none of it may be left unread.
_OPENINFERENCE_KEYS = ("openinference.", "llm.", "input.", "output.", "tool.", "tool_call.", "session.id")


def _chat_spans() -> list[Span]:
    return [span for span in capture_spans(CAPTURE) if span.attributes.get("gen_ai.operation.name") == "chat"]


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def test_each_call_carries_both_conventions_and_is_counted_once() -> None:
    spans = _chat_spans()
    assert len(spans) == 5
    for span in spans:  # the processor kept pydantic-ai's usage and restated it
        assert span.attributes["llm.token_count.prompt"] == span.attributes["gen_ai.usage.input_tokens"]
        assert [emitter.name for emitter in registry.detect(span)][:2] == [pydantic_ai.NAME, openinference.NAME]
    document = _document()
    steps = corpus.llm_steps(document)
    assert [(s["metrics"]["prompt_tokens"], s["metrics"]["completion_tokens"]) for s in steps] == [
        (span.attributes["gen_ai.usage.input_tokens"], span.attributes["gen_ai.usage.output_tokens"]) for span in spans]
    assert (document["final_metrics"]["total_prompt_tokens"], document["final_metrics"]["total_completion_tokens"]) == (
        1738, 123)
    assert {s["extra"]["emitter"] for s in steps} == {pydantic_ai.NAME}
    assert document["agent"]["name"] == "travel_desk"
    unread = [key for key in document["extra"]["unmapped_attributes"] if key.startswith(_OPENINFERENCE_KEYS)]
    assert unread == []


def test_the_conversation_is_what_happened() -> None:
    truth = corpus.GroundTruth.of(corpus.load(CAPTURE).llm_log)
    assert corpus.compare(_document(), truth) == []


def test_results_are_pydantic_ais_not_the_converters_restatement() -> None:
    """The converter writes the parallel calls' results as one `tool` message whose only call id is the last one's,
    and re-dumps a tool's JSON result with spaces; the trajectory's results are the tool spans' as pydantic-ai
    recorded them, each on its call, the retry flagged (and shown as the model was sent it)."""
    second_call = _chat_spans()[1]
    restated = openinference.map_span(SpanReader(second_call), ())
    assert isinstance(restated, LlmCall)
    merged = [part for message in restated.input_messages for part in message.parts if part.kind == "tool_result"]
    assert [(part.call_id, part.text) for part in merged] == [
        ("call_0_1", "sunny, 24°C\nNo weather station in Atlantis; ask about another city.")]

    steps = corpus.llm_steps(_document())
    first = steps[0]["observation"]["results"]
    assert [(r["source_call_id"], r["content"], r["extra"].get("is_error")) for r in first] == [
        ("call_0_0", "sunny, 24°C", None),
        ("call_0_1", '{"error":"No weather station in Atlantis; ask about another city."}', True)]
    (hotels,) = steps[3]["observation"]["results"]
    assert hotels["content"] == '[{"name":"Casa Alfama","per_night_eur":110}]'  # as the model was shown it
    assert hotels["extra"]["emitter"] == pydantic_ai.NAME
