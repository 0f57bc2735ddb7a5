"""Strands' prompt-cache usage (`trajectory/mappers/strands.py`, `_usage`): which releases and providers leave the
cache tokens out of `gen_ai.usage.input_tokens` (capture strands_native_anthropic-prompt-cache-1.53)."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span


def _call(model: str, usage: dict[str, int], resource: dict[str, Any] | None = None) -> tuple[LlmCall, SpanReader]:
    attributes: dict[str, Any] = {"gen_ai.operation.name": "chat", "gen_ai.system": "strands-agents",
                                  "gen_ai.request.model": model, **usage}
    span = Span("0" * 31 + "1", "0" * 15 + "2", "", "chat", 1, 0, 1, 1, attributes=attributes,
                resource_attributes=resource or {}, scope_name=strands.SCOPE)
    reader = SpanReader(span)
    call = strands.map_span(reader, [])
    assert isinstance(call, LlmCall)
    return call, reader


def _usage(prompt: int, output: int, total: int, *, read: int = 0, write: int = 0,
           dotted: bool = False) -> dict[str, int]:
    """As Strands' tracer writes a call's usage: up to 1.53 the cache tokens under their legacy names only."""
    usage = {"gen_ai.usage.input_tokens": prompt, "gen_ai.usage.prompt_tokens": prompt,
             "gen_ai.usage.output_tokens": output, "gen_ai.usage.completion_tokens": output,
             "gen_ai.usage.total_tokens": total}
    if read:
        usage["gen_ai.usage.cache_read_input_tokens"] = read
        if dotted:
            usage["gen_ai.usage.cache_read.input_tokens"] = read
    if write:
        usage["gen_ai.usage.cache_write_input_tokens"] = write
        if dotted:
            usage["gen_ai.usage.cache_creation.input_tokens"] = write
    return usage


def test_strands_1_53_anthropic_prompt_tokens_leave_the_cache_out_even_when_they_outnumber_it() -> None:
    # The capture's third call: 3500 uncached prompt tokens, 1500 read from the cache.
    call, reader = _call("claude-sonnet-4-5", _usage(3500, 25, 3525, read=1500))
    assert (call.usage.input_tokens, call.usage.cache_read_tokens) == (5000, 1500)
    assert call.usage.normalisation == "cache tokens added to prompt tokens"
    assert not {k for k in reader.unused() if k.startswith("gen_ai.usage.")}


def test_strands_1_53_cache_writes_are_read_from_their_legacy_name() -> None:
    call, reader = _call("claude-sonnet-4-5", _usage(300, 42, 342, write=1500))
    assert (call.usage.input_tokens, call.usage.cache_write_tokens) == (1800, 1500)
    assert "gen_ai.usage.cache_write_input_tokens" not in reader.unused()


@pytest.mark.parametrize(("model", "resource"), [
    ("gpt-4o-mini", None),  # OpenAIModel up to 1.53: `prompt_tokens` count the cached ones
    ("anthropic/claude-sonnet-4-5", None),  # LiteLLMModel: so do LiteLLM's
])
def test_prompt_tokens_that_count_the_cache_are_left_as_they_are(model: str, resource: dict[str, Any] | None) -> None:
    call, _ = _call(model, _usage(5000, 25, 5025, read=1500), resource)
    assert call.usage.input_tokens == 5000


def test_strands_1_57_2_and_later_anthropic_prompt_tokens_count_the_cache() -> None:
    resource = {"service.name": "strands-agents", "service.version": "1.62.0"}
    call, _ = _call("claude-sonnet-4-5", _usage(5000, 25, 5025, read=1500, dotted=True), resource)
    assert call.usage.input_tokens == 5000


def test_strands_1_54_to_1_57_1_anthropic_is_told_by_the_strands_telemetry_resource() -> None:
    usage = _usage(3500, 25, 3525, read=1500, dotted=True)
    resource = {"service.name": "strands-agents", "service.version": "1.57.1"}
    assert _call("claude-sonnet-4-5", usage, resource)[0].usage.input_tokens == 5000
    # With an application's own resource the release is unknown: the shared rule decides (3500 >= 1500).
    assert _call("claude-sonnet-4-5", usage, {"service.name": "shop", "service.version": "1.2.0"})[0] \
        .usage.input_tokens == 3500
