"""OpenLLMetry's Bedrock instrumentation (the `bedrock-runtime_openllmetry` capture: a hand-written boto3 Converse
tool loop on a Claude inference profile, thinking on, cache points after the system prompt, the tools and each turn's
question; turn 1 by `converse_stream`, turn 2 by `converse`).

What is its own (`trajectory/mappers/openllmetry_bedrock.py`): the Converse blocks it does not read it writes as text
parts of their JSON (`reasoningContent`, `cachePoint`), and its prompt tokens are Bedrock's `inputTokens`, the cache's
left out. Checked against the fake LLM's log, the capture's ground truth.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import genai_prices
from span_fixtures import capture_document, capture_spans, capture_truth, results_by_call

from evalkit.ingest import attribution
from evalkit.trajectory.mappers import openllmetry, openllmetry_bedrock
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall, Message, Part
from tests.captures import corpus, questions

CAPTURE = "bedrock-runtime_openllmetry"
SESSION = "bedrock-weather-1"
# The model as the instrumentation names it: the inference profile's id without its geography and vendor
# (`_cross_region_check` of `us.anthropic.claude-sonnet-4-5-20250929-v1:0`).
RECORDED_MODEL = "claude-sonnet-4-5-20250929-v1:0"


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def _calls() -> list[tuple[SpanReader, LlmCall]]:
    """The instrumentation's call spans, in the order they were made, each mapped as OpenLLMetry's mapper maps it."""
    found = []
    for span in sorted(capture_spans(CAPTURE), key=lambda s: s.start_time_unix_nano):
        if span.scope_name == openllmetry_bedrock.SCOPE:
            reader = SpanReader(span)
            call = openllmetry.map_span(reader, ())
            assert isinstance(call, LlmCall)
            found.append((reader, call))
    return found


def test_each_call_is_a_step_with_its_text_reasoning_and_tool_calls_and_each_result_on_its_call() -> None:
    document = capture_document(CAPTURE, SESSION)
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(document)
    # No step copied from a re-sent history: each answer re-sent is the step it was (its reasoning read, not text).
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert not any(step.get("is_copied_context") for step in document["steps"])
    assert [entry["stream"] for entry in _log()] == [True, True, True, False, False]
    for step, call in zip(steps, truth.calls, strict=True):
        assert corpus.message_text(step.get("message")) == call.text
        assert step.get("reasoning_content") == call.reasoning
        assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()] == [
            (c["id"], c["name"], c["arguments"]) for c in call.tool_calls]
        assert step["model_name"] == RECORDED_MODEL
        results = results_by_call(step)
        assert set(results) == {c["id"] for c in call.tool_calls}
        for call_id, result in results.items():
            assert result["content"] == truth.tool_results[call_id]
    assert corpus.compare(document, truth, call_ids=True) == []


def test_a_converse_answers_reasoning_is_its_reasoning_not_its_text() -> None:
    """A non-streamed answer's `reasoningContent` block, and every answer's re-sent in the history, is written as a text
    part of the block's JSON: read as the reasoning it is (a streamed answer's is a reasoning part already)."""
    calls = _calls()
    truth = capture_truth(CAPTURE).calls
    for (_, call), logged in zip(calls, truth, strict=True):
        (answer,) = call.output_messages
        assert (answer.reasoning, answer.text) == (logged.reasoning, logged.text)
        sent = [message for message in call.input_messages if message.role == "assistant"]
        assert [message.reasoning for message in sent] == [c.reasoning for c in truth[:logged.seq]]
        assert not any("reasoningContent" in (part.text or "") for message in (*call.input_messages, answer)
                       for part in message.parts)
    # The non-streamed answers were written as the block's JSON, the streamed ones as a reasoning part.
    written = [json.loads(reader.span.attributes["gen_ai.output.messages"])[0]["parts"][0] for reader, _ in calls]
    assert [part["type"] for part in written] == ["reasoning", "reasoning", "reasoning", "text", "text"]
    assert json.loads(written[3]["content"])["reasoningContent"]["reasoningText"]["text"] == truth[3].reasoning


def test_a_cache_point_is_no_words_of_a_question_nor_a_question() -> None:
    document = capture_document(CAPTURE, SESSION)
    users = [corpus.message_text(step["message"]) for step in document["steps"] if step["source"] == "user"]
    assert users == ["Which is warmer right now, Paris or Lyon?", "And Nice? How does its week look?"]
    assert questions.missing_questions(document, _log()) == []
    for _, call in _calls():
        assert not any("cachePoint" in (part.text or "") for message in call.input_messages for part in message.parts)
    # The spans wrote it as a text part after the question.
    first = json.loads(_calls()[0][0].span.attributes["gen_ai.input.messages"])
    assert [part["content"] for part in first[0]["parts"]] == [
        "Which is warmer right now, Paris or Lyon?", '{"cachePoint": {"type": "default"}}']


def test_prompt_tokens_count_the_cache_even_where_the_uncached_part_outnumbers_it() -> None:
    """Bedrock's `inputTokens` leave the cache reads and writes out: they are added to every call's, also the last
    one's, whose 2,650 uncached tokens (the week's forecast, after the question's cache point) outnumber the 2,550 read
    (the shared rule alone adds them only where they outnumber the rest)."""
    calls, log = _calls(), _log()
    for (reader, call), entry in zip(calls, log, strict=True):
        usage = entry["response"]["usage"]
        cached = usage["cache_read_tokens"] + usage["cache_write_tokens"]
        assert reader.span.attributes["gen_ai.usage.input_tokens"] == usage["input_tokens"] - cached
        assert (call.usage.input_tokens, call.usage.cache_read_tokens, call.usage.cache_write_tokens) == (
            usage["input_tokens"], usage["cache_read_tokens"], usage["cache_write_tokens"])
    last = calls[-1][0].span.attributes
    assert last["gen_ai.usage.input_tokens"] > last["gen_ai.usage.cache_read.input_tokens"]
    final = capture_document(CAPTURE, SESSION)["final_metrics"]
    assert final["total_prompt_tokens"] == sum(e["response"]["usage"]["input_tokens"] for e in log) == 14670


def test_each_call_is_priced_as_bedrock_prices_the_model() -> None:
    steps = corpus.llm_steps(capture_document(CAPTURE, SESSION))
    for step, call in zip(steps, capture_truth(CAPTURE).calls, strict=True):
        usage = genai_prices.Usage(input_tokens=call.input_tokens, output_tokens=call.output_tokens,
                                   cache_read_tokens=call.cache_read_tokens or None,
                                   cache_write_tokens=call.cache_write_tokens or None)
        price = genai_prices.calc_price(usage, RECORDED_MODEL, provider_id="aws")
        assert price.model.id == "regional.anthropic.claude-sonnet-4-5-20250929-v1:0"
        assert abs(Decimal(str(step["metrics"]["cost_usd"])) - Decimal(str(price.total_price))) < Decimal("1e-12")


def test_the_list_adds_the_cache_tokens_for_the_same_scope() -> None:
    """Ingest's `input_tokens` column adds them by scope too (ingest imports nothing of trajectory/)."""
    assert attribution.OPENLLMETRY_BEDROCK_SCOPE == openllmetry_bedrock.SCOPE


def test_the_failed_tools_status_is_in_no_span() -> None:
    """The loop sent the Lyon timeout as a `toolResult` with `status: "error"`; the instrumentation keeps a result's id
    and text only (`_converse_content_to_parts`), and no tool span was made: the trajectory cannot flag it. The day the
    span keeps the status, this fails until it is read."""
    sent = _log()[1]["request"]["messages"][2]["content"]
    assert [block["toolResult"].get("status") for block in sent if "toolResult" in block] == [None, "error"]
    recorded = json.loads(_calls()[1][0].span.attributes["gen_ai.input.messages"])[2]["parts"]
    assert [set(part) for part in recorded] == [{"type", "id", "response"}] * 2
    document = capture_document(CAPTURE, SESSION)
    assert not any((result.get("extra") or {}).get("is_error") for step in corpus.llm_steps(document)
                   for result in results_by_call(step).values())


def test_text_that_only_opens_like_a_block_is_kept_as_written() -> None:
    call = LlmCall(span=_calls()[0][0].span, emitter=openllmetry.NAME)
    kept = '{"cachePoint": is how Bedrock names it'
    call.input_messages = [Message("user", [Part("text", text=kept), Part("text", text='{"cachePoint": {}}')])]
    call.output_messages = [Message("assistant", [Part("text", text='{"reasoningContent": {"reasoningText": '
                                                                    '{"text": "Hm."}}, "extra": 1}')])]
    openllmetry_bedrock.read_call(SpanReader(call.span), call)
    assert [part.text for part in call.input_messages[0].parts] == [kept]
    assert [part.kind for part in call.output_messages[0].parts] == ["text"]  # two keys: no block
