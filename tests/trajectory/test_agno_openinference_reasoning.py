"""Agno on Claude with extended thinking, traced by OpenInference's Agno instrumentation, read from its capture
(`agno_openinference_reasoning`): one Agent on `Claude(id="claude-sonnet-4-6", thinking={"type": "enabled",
"budget_tokens": 2048}, output_config={"effort": "medium"})`, every answer a signed thinking block before its text
and tool uses, which Agno keeps as the message's `reasoning_content` and re-sends as a `thinking` block; two parallel
weather lookups, one timing out once and asked again; two turns of one Agno session, the second streamed.

Before `openinference.llm_call` read `output_config.effort` on Agno's spans too (`trajectory/mappers/agno.py`), no
step had a `reasoning_effort`: the instrumentation records the Claude model's request parameters in
`llm.invocation_parameters`, and the effort was read there only on the Anthropic SDK's instrumentation's spans.
"""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.mappers import agno, openinference
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "agno_openinference_reasoning"
SESSION = "agno-oi-thinking-1"
Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def _model_spans() -> list[Span]:
    spans = [span for span in capture_spans(CAPTURE)
             if span.scope_name == agno.SCOPE and span.attributes.get("openinference.span.kind") == "LLM"]
    return sorted(spans, key=lambda span: span.start_time_unix_nano)


def test_each_step_s_effort_is_the_one_its_request_set() -> None:
    steps = corpus.llm_steps(_document())
    requested = [entry["request"]["output_config"]["effort"] for entry in _log()]
    assert requested == ["medium"] * 5
    assert [step.get("reasoning_effort") for step in steps] == requested
    # The thinking budget is kept as the request recorded it, no effort of its own.
    assert all(step["extra"]["request"]["thinking"] == {"type": "enabled", "budget_tokens": 2048} for step in steps)


def test_each_step_s_reasoning_is_its_own_call_s_thinking_and_never_its_message() -> None:
    document = _document()
    log = _log()
    steps = corpus.llm_steps(document)
    assert len(steps) == len(log) == 5
    thinking = [entry["response"]["reasoning"] for entry in log]
    assert len(set(thinking)) == 5
    assert [step.get("reasoning_content") for step in steps] == thinking
    assert [step.get("message") or None for step in steps] == [entry["response"]["text"] or None for entry in log]
    for step in document["steps"]:
        assert not any(text in str(step.get("message")) for text in thinking)
    # Each request re-sends the session's earlier answers with their thinking: no copied context, each question once.
    assert [(step["source"], bool(step.get("is_copied_context"))) for step in document["steps"]] == [
        ("system", False), ("user", False), ("agent", False), ("agent", False), ("agent", False),
        ("user", False), ("agent", False), ("agent", False)]
    # The timed-out lookup is flagged on its call with the text the model was shown, and the retry answered.
    first, retry = steps[0]["observation"]["results"], steps[1]["observation"]["results"]
    assert [(r["source_call_id"], r["content"], bool((r.get("extra") or {}).get("is_error"))) for r in first] == [
        ("toolu_0_0", "sunny, 21°C", False), ("toolu_0_1", "weather service timed out for Oslo", True)]
    assert [(r["source_call_id"], r["content"]) for r in retry] == [("toolu_1_0", "rainy, 9°C")]


def test_a_streamed_answer_s_thinking_is_its_reasoning_and_the_re_sent_thinking_no_text() -> None:
    """The streamed turn's spans (`Claude.invoke_stream`): the instrumentation accumulates the thinking deltas into the
    output message's `reasoning` content; the history it flattens drops the re-sent thinking blocks (they are in
    `input.value` alone), so no input message carries thinking as text."""
    log = _log()
    streamed = [span for span in _model_spans() if span.name.endswith("invoke_stream")]
    assert len(streamed) == 2 and [entry["stream"] for entry in log[3:]] == [True, True]
    for span, entry in zip(streamed, log[3:], strict=True):
        call = openinference.map_span(SpanReader(span), ())
        assert isinstance(call, LlmCall)
        (answer,) = call.output_messages
        assert [part.text for part in answer.parts if part.kind == "reasoning"] == [entry["response"]["reasoning"]]
        assert "".join(part.text or "" for part in answer.parts if part.kind == "text") == entry["response"]["text"]
        history_text = " ".join(part.text or "" for message in call.input_messages for part in message.parts)
        assert not any(earlier["response"]["reasoning"] in history_text for earlier in log[:entry["seq"]])
    # The thinking Agno re-sent is in the span nonetheless, as the blocks the request carried.
    resent = json.loads(streamed[1].attributes["input.value"])["messages"]
    assert [m.get("reasoning_content") for m in resent if m["role"] == "assistant"] == [
        entry["response"]["reasoning"] for entry in log[:4]]


def test_the_thinking_tokens_are_counted_in_the_output_tokens_and_recorded_nowhere_else() -> None:
    """Agno's Claude drops `output_tokens_details.thinking_tokens` (corpus: UNRECORDED_REASONING_TOKENS): each step's
    completion tokens are the call's output tokens, thinking included, with no breakdown. Once a span records the
    breakdown, this fails until it is read."""
    steps = corpus.llm_steps(_document())
    usage = [entry["response"]["usage"] for entry in _log()]
    assert all(0 < u["reasoning_tokens"] < u["output_tokens"] for u in usage)
    assert [s["metrics"]["completion_tokens"] for s in steps] == [u["output_tokens"] for u in usage]
    assert [s["metrics"]["prompt_tokens"] for s in steps] == [u["input_tokens"] for u in usage]
    assert not any(key.startswith("llm.token_count.completion_details") for span in _model_spans()
                   for key in span.attributes)
    assert not any((s["metrics"].get("extra") or {}).get("reasoning_tokens") for s in steps)
