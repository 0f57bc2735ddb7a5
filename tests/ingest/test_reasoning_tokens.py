"""Ingest's `reasoning_tokens` column (ingest/attribution.py) reads every flat key a mapper reads a call's reasoning
tokens from, so that the session list counts what the trajectory does (migration 222 added the later ones)."""

from __future__ import annotations

import asyncio
import os

from evalkit.ingest import attribution
from evalkit.trajectory.mappers import ag2, otel_genai, pydantic_ai, vercel_ai_otel_genai
from tests.conftest import Running
from tests.ingest.test_span_columns import request, send, span, typed_by_name

# Each mapper's reasoning-token keys, in the order it prefers them (`vercel_ai` reads the two AI SDK keys in this one).
_MAPPERS_KEYS = (
    otel_genai._REASONING_TOKENS,
    ("ai.usage.reasoningTokens", "ai.usage.outputTokenDetails.reasoningTokens"),
    (vercel_ai_otel_genai._REASONING_TOKENS,),
    pydantic_ai._REASONING_DETAILS,
    (ag2._THINKING_TOKENS,),
    ("llm.token_count.completion_details.reasoning",),
)


def test_every_key_a_mapper_reads_reasoning_tokens_from_is_read_by_ingest_after_the_others() -> None:
    keys = attribution.REASONING_KEYS
    for mapper_keys in _MAPPERS_KEYS:
        assert set(mapper_keys) <= set(keys), mapper_keys
    # Those a mapper reads only where the GenAI conventions' keys are missing (pydantic-ai's details, AI SDK 7's
    # breakdown, AG2's) come after every key ranked before them, in the mappers' order; 222 added only them.
    added = attribution.REASONING_KEYS_ADDED_222
    assert keys[-len(added):] == added
    assert [k for k in keys if k in pydantic_ai._REASONING_DETAILS] == list(pydantic_ai._REASONING_DETAILS)
    assert set(keys) <= set(attribution.COUNT_KEYS)


async def test_the_reasoning_tokens_column_reads_the_added_keys_after_the_others(running: Running) -> None:
    agent_id, key = await asyncio.to_thread(running.new_agent)
    trace = os.urandom(16)
    spans = {f"only {k}": {k: 7, "gen_ai.operation.name": "chat"} for k in attribution.REASONING_KEYS_ADDED_222}
    spans |= {
        # A key ranked before them wins; so does the first added one; a double is truncated, a string read.
        "ranked first": {"gen_ai.usage.reasoning_tokens": 5, "gen_ai.usage.details.thinking_tokens": 9},
        "added in order": {"gen_ai.usage.details.reasoning_tokens": 4, "gen_ai.usage.details.thinking_tokens": 3},
        "double": {"ai.usage.outputTokenDetails.reasoningTokens": 12.9},
        "string": {"gen_ai.usage.details.thoughts_tokens": " 21 "},
        # An unusable value falls through to the next key.
        "unusable": {"ai.usage.outputTokenDetails.reasoningTokens": "n/a", "gen_ai.usage.thinking_tokens": 6},
        # pydantic-ai's run span sums its calls' as `gen_ai.aggregated_usage.*`: not a call's count.
        "aggregate": {"gen_ai.aggregated_usage.details.thinking_tokens": 102},
    }
    await send(running, key, request([span(trace, name, attributes) for name, attributes in spans.items()]))
    typed = await asyncio.to_thread(typed_by_name, running, agent_id)
    assert {name: row["reasoning_tokens"] for name, row in typed.items()} == {
        **{f"only {k}": 7 for k in attribution.REASONING_KEYS_ADDED_222},
        "ranked first": 5, "added in order": 3, "double": 12, "string": 21, "unusable": 6, "aggregate": 0}
