"""OpenTelemetry's own openai-agents instrumentation (openai-agents-v2 0.1.0) on a reasoning model, read from its
capture (`openai-agents_otel-genai_reasoning`): o4-mini with `Reasoning(effort="medium", summary="auto")`, every
answer a reasoning item before its function calls or text, two parallel tool calls, one raising once and called
again, two turns of one session, the second streamed.

Before `otel_openai_agents._reasoning`, each answer with function calls was a step whose message was its reasoning
item's repr (`ResponseReasoningItem(id='rs_…', summary=[Summary(text=…)], …)`), with no reasoning_content: 0.1.0
writes every item of an answer with no text as a text part holding `str(item)`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evalkit.trajectory.mappers import otel_openai_agents
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus
from tests.trajectory.span_fixtures import capture_document, capture_spans

CAPTURE = "openai-agents_otel-genai_reasoning"
SESSION = "oa-otel-genai-reasoning-1"
Json = dict[str, Any]


def _document() -> Json:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[Json]:
    return corpus.load(CAPTURE).llm_log


def test_a_reasoning_item_s_repr_is_the_reasoning_its_summary_shows() -> None:
    chat = next(s for s in capture_spans(CAPTURE) if s.attributes.get("gen_ai.response.id") == "openai-resp-0")
    assert "ResponseReasoningItem(id='rs_openai-resp-0'" in chat.attributes["gen_ai.output.messages"]
    call = otel_openai_agents.map_span(SpanReader(chat), ())
    assert isinstance(call, LlmCall)
    (answer,) = call.output_messages
    assert answer.reasoning == _log()[0]["response"]["reasoning"]
    assert answer.text == ""
    # Each function call under its `call_id` (`call_…`, which its output names), not the item's own `id` (`fc_…`)
    # the repr holds too.
    booking, weather = _log()[0]["response"]["tool_calls"]
    assert f"id='{booking['item_id']}'" in chat.attributes["gen_ai.output.messages"]
    assert [(p.call_id, p.name) for p in answer.tool_calls] == [(booking["id"], "book_hotel"),
                                                                (weather["id"], "get_weather")]


def test_a_reasoning_item_with_no_summary_shows_its_reasoning_text_or_nothing() -> None:
    """The same span as a model answering with its reasoning text (`content`, no summary asked for) and as one
    showing neither: never the item's repr as the answer's text."""
    chat = next(s for s in capture_spans(CAPTURE) if s.attributes.get("gen_ai.response.id") == "openai-resp-0")
    summary = "[Summary(text='The guest wants a room and the forecast: both are independent, so book_hotel and " \
              "get_weather for Oslo can run at once.', type='summary_text')]"
    recorded = chat.attributes["gen_ai.output.messages"]
    assert recorded.count(summary) == 1
    raw_text = "[Content(text='Two independent lookups.', type='reasoning_text')]"
    for items, shown in ((f"summary=[], type='reasoning', content={raw_text}", "Two independent lookups."),
                         ("summary=[], type='reasoning', content=None", "")):
        variant = recorded.replace(f"summary={summary}, type='reasoning', content=None", items)
        assert variant != recorded
        call = otel_openai_agents.map_span(SpanReader(replace(chat, attributes={
            **chat.attributes, "gen_ai.output.messages": variant})), ())
        assert isinstance(call, LlmCall)
        (answer,) = call.output_messages
        assert (answer.reasoning, answer.text, len(answer.tool_calls)) == (shown, "", 2)


def test_each_step_s_reasoning_is_its_own_call_s_and_never_its_message() -> None:
    document = _document()
    log = _log()
    steps = corpus.llm_steps(document)
    assert len(steps) == len(log) == 5
    # 0.1.0 records no reasoning of a text answer, nor any reasoning tokens (below): compared as the spans say.
    text_answers = [entry["seq"] for entry in log if not entry["response"]["tool_calls"]]
    truth = corpus.GroundTruth.of(log).without_reasoning_tokens().without_reasoning_recorded(text_answers)
    assert corpus.compare(document, truth) == []
    # An answer with function calls keeps its reasoning item on the span: each such step shows its own call's.
    # An answer with text is written as its `output_text` alone: its reasoning is in no span, so none is shown.
    recorded = [entry["response"]["reasoning"] if entry["response"]["tool_calls"] else None for entry in log]
    assert [s.get("reasoning_content") for s in steps] == recorded
    assert len({r for r in recorded if r}) == 3
    for trajectory in corpus.all_trajectories(document):
        for step in trajectory["steps"]:
            assert "ResponseReasoningItem" not in str(step.get("message"))
            assert step["source"] != "agent" or step.get("llm_call_count") == 1  # no step of reasoning alone
    # The re-sent reasoning items (dropped by 0.1.0 from the input it records) are no copied context.
    assert [(s["source"], bool(s.get("is_copied_context"))) for s in document["steps"]] == [
        ("user", False), ("agent", False), ("agent", False), ("agent", False),
        ("user", False), ("agent", False), ("agent", False)]


def test_the_output_tokens_count_the_reasoning_the_spans_do_not_break_out() -> None:
    """0.1.0 records `usage.output_tokens` (reasoning tokens included), not their reasoning share, nor the effort."""
    document = _document()
    log = _log()
    steps = corpus.llm_steps(document)
    assert [s["metrics"]["completion_tokens"] for s in steps] == [e["response"]["usage"]["output_tokens"] for e in log]
    assert all(e["response"]["usage"]["reasoning_tokens"] > 0 for e in log)
    chats = [s for s in capture_spans(CAPTURE) if s.name == "chat o4-mini"]
    assert len(chats) == 5
    assert not [key for s in chats for key in s.attributes if "reasoning" in key]
    assert all("reasoning_tokens" not in (s["metrics"].get("extra") or {}) for s in steps)
    assert all("reasoning_effort" not in s for s in steps)
