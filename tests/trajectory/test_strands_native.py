"""The provider of a Strands Agents call (the `strands_native*` captures and `strands_openinference`).

Strands' tracer writes `gen_ai.system` (`gen_ai.provider.name` under the latest conventions) "strands-agents" on
every span, its chat spans included: the SDK, not the model's provider (the fake LLM was asked through OpenAI's
chat API, Anthropic's messages API or Bedrock's Converse API). Nothing else on a chat span names the provider, so its
step has none rather than a wrong one, and is priced by its model as before (a Bedrock model id as Bedrock prices it).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from span_fixtures import capture_document, capture_spans, capture_truth

from evalkit.trajectory.mappers import strands
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from tests.captures import corpus

CAPTURES = [name for name in corpus.names() if name.startswith("strands_")]
# Where each capture's calls went (the fake LLM log's `api`), which no span says.
APIS = {"openai.chat", "anthropic.messages", "bedrock.converse"}
# Calls no span records: SummarizingConversationManager's summary calls with no summarization agent, made with the
# agent's model outside Strands' tracing (the corpus's UNRECORDED_CALLS).
UNRECORDED_CALLS = {"strands_native_summarizing_default": 2}


def _calls(trajectory: dict[str, Any]) -> list[dict[str, Any]]:
    """A trajectory's LLM call steps, its subagents' included."""
    own = [step for step in trajectory["steps"] if step.get("llm_call_count") == 1]
    return own + [call for sub in trajectory.get("subagent_trajectories") or () for call in _calls(sub)]


def test_the_captures_are_strands_calls_of_openai_anthropic_and_bedrock() -> None:
    assert len(CAPTURES) >= 8
    assert {call.api for name in CAPTURES for call in capture_truth(name).calls} == APIS


@pytest.mark.parametrize("capture", CAPTURES)
def test_a_call_has_no_provider_rather_than_the_sdks_name_and_is_still_priced(capture: str) -> None:
    chats = [span for span in capture_spans(capture)
             if span.scope_name == strands.SCOPE and span.attributes.get("gen_ai.operation.name") == "chat"]
    assert chats
    for span in chats:
        # The SDK's name is all the span says of a provider, under either convention.
        assert strands.SDK_NAME in (span.attributes.get("gen_ai.system"), span.attributes.get("gen_ai.provider.name"))
        call = strands.map_span(SpanReader(span), ())
        assert isinstance(call, LlmCall) and call.provider is None

    calls = _calls(capture_document(capture, corpus.load(capture).session_id or ""))
    assert len(calls) == len(capture_truth(capture).calls) - UNRECORDED_CALLS.get(capture, 0)
    for step in calls:
        assert "provider" not in step["extra"]
        assert step["metrics"]["cost_usd"] > 0  # priced by its model (gpt-4o, claude-sonnet-4-5, a Bedrock id)


def test_a_provider_the_application_names_is_kept() -> None:
    # `start_model_invoke_span` writes the agent's `trace_attributes` over the common ones: an application may name
    # the provider itself.
    span = next(span for span in capture_spans("strands_native") if span.name == "chat")
    named = replace(span, attributes={**span.attributes, "gen_ai.system": "openai"})
    call = strands.map_span(SpanReader(named), ())
    assert isinstance(call, LlmCall) and call.provider == "openai"
