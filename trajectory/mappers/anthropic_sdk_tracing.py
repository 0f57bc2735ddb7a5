"""The Anthropic Python SDK's own tracing (`anthropic.Anthropic(open_telemetry=…)`, scope `com.anthropic.sdk.python`).

Its `anthropic.messages.create` spans are the GenAI conventions, read by `otel_genai` (the effort a call asked for,
`output_config.effort`, as the conventions' `gen_ai.request.reasoning.level`: the step's `reasoning_effort`), plus
the SDK's own request attributes. Of those, the extended-thinking configuration the call asked for,
`anthropic.thinking.type` (`enabled`, `adaptive`, `disabled`) and `anthropic.thinking.budget_tokens`, is read here:
a request parameter of the call, shown with the others (`extra.request.thinking`, beside `max_tokens`).
"""

from __future__ import annotations

from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall

SCOPE = "com.anthropic.sdk.python"
_THINKING = "anthropic.thinking."


def read_request(reader: SpanReader, call: LlmCall) -> None:
    """The call's thinking configuration among its request parameters, as the request named it."""
    thinking = reader.prefixed(_THINKING)
    if thinking:
        call.extra.setdefault("request", {})["thinking"] = thinking
