"""Strands Agents on Amazon Bedrock, its default model provider (the `strands_native_bedrock` capture).

`BedrockModel` speaks Bedrock's Converse API to a Claude inference profile (`us.anthropic.claude-sonnet-4-5-…-v1:0`)
with extended thinking and prompt caching (`cachePoint` blocks): turn 1 streamed (`ConverseStream`), two parallel
lookups, one raising, a retry, the answer; turn 2 not (`streaming=False`, `Converse`), one lookup, the answer. Each step
is its call: text, signed reasoning, tool calls by the `toolUseId` the model gave, each `toolResult` on the call that
asked for it (the failing one flagged), the system prompt and each question once, the cache's tokens as Bedrock counted
them; and each call priced as Bedrock prices its inference profile (genai-prices' `aws` provider), which no span names:
Strands' spans say only `gen_ai.system: strands-agents` (trajectory/prices.py reads the provider from the model id).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import boto3
import genai_prices
import pytest
from span_fixtures import capture_document, capture_truth, results_by_call

from evalkit.trajectory.prices import PriceBook, TokenCounts
from tests.captures import corpus, questions
from tests.captures.recording.fake_llm import FakeLLM

CAPTURE = "strands_native_bedrock"
SESSION = "strands-bedrock-1"
MODEL = "us.anthropic.claude-sonnet-4-5-20250929-v1:0"


def _document() -> dict[str, Any]:
    return capture_document(CAPTURE, SESSION)


def _log() -> list[dict[str, Any]]:
    return corpus.load(CAPTURE).llm_log


def test_each_call_is_a_step_with_its_text_reasoning_and_tool_calls_and_each_result_on_its_call() -> None:
    document = _document()
    truth = capture_truth(CAPTURE)
    steps = corpus.llm_steps(document)
    assert [step["source"] for step in document["steps"]] == [
        "system", "user", "agent", "agent", "agent", "user", "agent", "agent"]
    assert len(steps) == len(truth.calls) == 5
    for step, call in zip(steps, truth.calls, strict=True):
        assert corpus.message_text(step.get("message")) == call.text
        assert step.get("reasoning_content") == call.reasoning
        assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in step.get("tool_calls") or ()] == [
            (c["id"], c["name"], c["arguments"]) for c in call.tool_calls]
        assert step["model_name"] == MODEL
        # Each result the next call was sent (its `toolResult` block) is on the call that asked for it.
        results = results_by_call(step)
        assert set(results) == {c["id"] for c in call.tool_calls}
        for call_id, result in results.items():
            assert result["content"] == truth.tool_results[call_id]
    # The Lyon lookup raised (Strands sent the model a `toolResult` with `status: "error"`): flagged, and no other.
    failed = {call_id for step in steps for call_id, result in results_by_call(step).items()
              if (result.get("extra") or {}).get("is_error")}
    assert failed == {"tooluse_0_1"}
    assert corpus.compare(document, truth, call_ids=True) == []


def test_the_system_prompt_and_each_question_once() -> None:
    document = _document()
    first = _log()[0]["request"]
    # Bedrock's `system` blocks: the prompt's text, then the cache point Strands placed after it.
    system_text = "".join(block["text"] for block in first["system"] if "text" in block)
    assert [block for block in first["system"] if "text" not in block] == [{"cachePoint": {"type": "default"}}]
    system = [step for step in document["steps"] if step["source"] == "system"]
    assert [corpus.message_text(step["message"]) for step in system] == [system_text]
    users = [corpus.message_text(step["message"]) for step in document["steps"] if step["source"] == "user"]
    assert users == ["Which is warmer right now, Paris or Lyon?", "And Nice?"]
    assert questions.missing_questions(document, _log()) == []


def test_the_converse_requests_questions_and_results_are_read_as_the_model_was_sent_them() -> None:
    """The ground truth reads Converse's shapes: each `toolResult` block is the result of the `toolUseId` it names (as
    the model was sent it), a user message of them or a `cachePoint` block no question; no call but each turn's first
    asks anything anew."""
    asked = [(asking.seq, asking.text) for asking in questions.asked_anew(_log())]
    assert asked == [(0, "Which is warmer right now, Paris or Lyon?"), (3, "And Nice?")]
    assert capture_truth(CAPTURE).tool_results == {
        "tooluse_0_0": "sunny, 21°C", "tooluse_0_1": "Error: TimeoutError - weather service timed out for Lyon",
        "tooluse_1_0": "cloudy, 17°C", "tooluse_3_0": "sunny, 24°C"}


def test_tokens_count_the_cache_as_bedrock_reported_it() -> None:
    steps = corpus.llm_steps(_document())
    calls = capture_truth(CAPTURE).calls
    # Bedrock's `inputTokens` leave out the cache's reads and writes; Strands' spans add them back, and a step's prompt
    # tokens count every prompt token, of them the cached and the cache-written ones.
    assert [(s["metrics"]["prompt_tokens"], s["metrics"]["cached_tokens"],
             s["metrics"]["extra"]["cache_creation_input_tokens"], s["metrics"]["completion_tokens"]) for s in steps] \
        == [(c.input_tokens, c.cache_read_tokens, c.cache_write_tokens, c.output_tokens) for c in calls]
    assert all(c.cache_read_tokens or c.cache_write_tokens for c in calls)


def test_each_call_is_priced_as_bedrock_prices_its_inference_profile() -> None:
    document = _document()
    steps = corpus.llm_steps(document)
    calls = capture_truth(CAPTURE).calls
    for step, call in zip(steps, calls, strict=True):
        usage = genai_prices.Usage(input_tokens=call.input_tokens, output_tokens=call.output_tokens,
                                   cache_read_tokens=call.cache_read_tokens or None,
                                   cache_write_tokens=call.cache_write_tokens or None)
        price = genai_prices.calc_price(usage, MODEL, provider_id="aws")
        assert price.model.id == "regional.anthropic.claude-sonnet-4-5-20250929-v1:0"
        assert step["metrics"]["extra"]["price_source"].startswith("genai-prices@")
        assert abs(Decimal(str(step["metrics"]["cost_usd"])) - Decimal(str(price.total_price))) < Decimal("1e-12")
    total = document["final_metrics"]["total_cost_usd"]
    assert abs(total - sum(step["metrics"]["cost_usd"] for step in steps)) < 1e-12


@pytest.mark.parametrize(("model", "provider", "priced_as"), [
    # An inference profile in a geography: Bedrock's regional price (Sonnet 4.5's is a tenth over Anthropic's).
    (MODEL, "aws", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("anthropic.claude-3-5-sonnet-20241022-v2:0", "aws", "regional.anthropic.claude-3-5-sonnet-20241022-v2:0"),
    ("global.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", "global.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    ("amazon.nova-pro-v1:0", "aws", "amazon.nova-pro-v1:0"),
    # LiteLLM's route prefix names no provider genai-prices knows: the id is Bedrock's all the same.
    ("bedrock/converse/" + MODEL, "aws", "regional.anthropic.claude-sonnet-4-5-20250929-v1:0"),
    # A profile genai-prices has no Bedrock price for: the vendor's price for the vendor's model.
    ("global.anthropic.claude-opus-4-1-20250805-v1:0", "anthropic", "claude-opus-4-1"),
])
def test_a_bedrock_model_id_is_priced_as_bedrock_prices_it_else_as_its_vendor_does(
        model: str, provider: str, priced_as: str) -> None:
    tokens = TokenCounts(prompt_tokens=2350, completion_tokens=64, cached_tokens=1900, cache_write_tokens=380)
    book = PriceBook()
    for named in (None, "strands-agents"):  # no provider named, or only the framework (Strands' `gen_ai.system`)
        priced = book.cost(tokens, model, named)
        assert priced is not None and priced.provider == provider
        expected = genai_prices.calc_price(
            genai_prices.Usage(input_tokens=2350, output_tokens=64, cache_read_tokens=1900, cache_write_tokens=380),
            priced.model, provider_id=provider)
        assert expected.model.id == priced_as
        assert priced.usd == Decimal(str(expected.total_price))
        # The session list orders by a bound of the same price.
        bound = book.rate_bound(model, named)
        assert bound is not None and bound.at_most(2350, 64) >= priced.usd > 0


def test_the_fake_llm_answers_converse_as_boto3_reads_it() -> None:
    """Bedrock Runtime's `converse-stream` (AWS's binary event stream: botocore checks each message's prelude and CRCs)
    and `converse`, as boto3's own client parses them."""
    replies = [{"reasoning": "Look it up.", "text": "Checking Paris.",
                "tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                "input_tokens": 900, "cache_read_tokens": 600, "cache_write_tokens": 200, "output_tokens": 30},
               {"text": "Sunny in Paris.", "input_tokens": 950, "output_tokens": 8}]
    with FakeLLM(replies) as llm:
        client = boto3.client("bedrock-runtime", endpoint_url=llm.base_url.removesuffix("/v1"), region_name="us-east-1",
                              aws_access_key_id="AKIAFAKE", aws_secret_access_key="fake")
        asked = [{"role": "user", "content": [{"text": "Weather in Paris?"}]}]
        events = list(client.converse_stream(modelId=MODEL, messages=asked)["stream"])
        answered = client.converse(modelId=MODEL, messages=asked)
        log = llm.log
    assert [next(iter(event)) for event in events] == [
        "messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
        "contentBlockDelta", "contentBlockStop", "contentBlockStart", "contentBlockDelta", "contentBlockStop",
        "messageStop", "metadata"]
    assert events[6]["contentBlockStart"]["start"]["toolUse"] == {"toolUseId": "tooluse_0_0", "name": "get_weather"}
    assert json.loads(events[7]["contentBlockDelta"]["delta"]["toolUse"]["input"]) == {"city": "Paris"}
    assert events[2]["contentBlockDelta"]["delta"]["reasoningContent"] == {"signature": "sig"}
    assert events[-1]["metadata"]["usage"] == {"inputTokens": 100, "outputTokens": 30, "totalTokens": 930,
                                               "cacheReadInputTokens": 600, "cacheWriteInputTokens": 200}
    assert answered["output"]["message"]["content"] == [{"text": "Sunny in Paris."}]
    assert (answered["stopReason"], answered["usage"]) == (
        "end_turn", {"inputTokens": 950, "outputTokens": 8, "totalTokens": 958})
    assert [(entry["api"], entry["model"], entry["stream"]) for entry in log] == [
        ("bedrock.converse", MODEL, True), ("bedrock.converse", MODEL, False)]
