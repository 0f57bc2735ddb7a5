"""LiteLLM's "otel" callback (`trajectory/mappers/litellm.py`): its call span read, its raw-request span no step."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from evalkit.ingest.attribution import LLM_OPERATIONS, PYTHON_USAGE_KEY
from evalkit.trajectory.mappers import litellm
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.mappers.registry import detect
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

_ASKED = [
    {"role": "user", "parts": [{"type": "text", "content": "Weather in Paris?"}]},
    {"role": "assistant", "parts": [{"type": "text", "content": ""}],
     "tool_calls": [{"id": "call_1", "type": "function",
                     "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "parts": [{"type": "text", "content": "sunny"}], "tool_call_id": "call_1"},
]


def _span(attributes: dict[str, Any], name: str = "litellm_request") -> Span:
    return Span("0" * 31 + "1", "0" * 15 + "2", "", name, 1, 0, 1, 1, attributes=attributes, scope_name="litellm")


def _call(**more: Any) -> Span:
    return _span({
        "litellm.call_id": "c1", "llm.request.type": "acompletion", "gen_ai.operation.name": "acompletion",
        "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 10,
        "gen_ai.usage.output_tokens": 2, "gen_ai.cost.total_cost": 0.000045, "metadata.user_api_key_hash": "",
        "hidden_params": "{}", "llm.request.functions.0.name": "get_weather",
        "llm.request.functions.0.parameters": "{\"type\": \"object\"}",
        "gen_ai.input.messages": json.dumps(_ASKED),
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [], "finish_reason": "tool_calls"}]),
        "gen_ai.completion.0.function_call.name": "get_weather",
        "gen_ai.completion.0.function_call.arguments": "{\"city\": \"Oslo\"}", **more})


def test_the_call_span_is_litellm_s_and_read_whole() -> None:
    span = _call()
    assert detect(span)[0].name == litellm.NAME  # first: OpenLLMetry and the GenAI mapper detect it too
    reader = SpanReader(span)
    call = litellm.map_span(reader, [])
    assert isinstance(call, LlmCall) and call.emitter == litellm.NAME
    (answer,) = call.output_messages
    assert [(p.name, p.arguments, p.call_id) for p in answer.tool_calls] == [("get_weather", {"city": "Oslo"}, None)]
    assert call.reported_cost == Decimal("0.000045")
    assert [d["function"]["name"] for d in call.tool_definitions] == ["get_weather"]
    assert reader.unused() == set()


def test_a_resent_answer_keeps_the_ids_the_provider_gave_its_calls() -> None:
    # The answer they re-send is given them where it was produced (`litellm_call_ids`, over the session's spans).
    call = litellm.map_span(SpanReader(_call()), [])
    assert isinstance(call, LlmCall)
    resent, result = call.input_messages[1], call.input_messages[2]
    assert [(p.name, p.call_id) for p in resent.tool_calls] == [("get_weather", "call_1")]
    assert [(p.call_id, p.text) for p in result.tool_results] == [("call_1", "sunny")]


def test_the_raw_request_span_and_other_call_types_are_no_steps() -> None:
    raw = _span({"llm.openai.messages": "[{'role': 'user', 'content': 'hi'}]", "llm.openai.model": "gpt-4o"},
                "raw_gen_ai_request")
    assert [e.name for e in detect(raw)] == [litellm.NAME]
    reader = SpanReader(raw)
    assert litellm.map_span(reader, []) is None and reader.unused() == set()
    embedding = _call(**{"gen_ai.operation.name": "aembedding"})
    assert litellm.map_span(SpanReader(embedding), []) is None


def test_ingest_counts_every_call_type_the_mapper_reads_as_a_call() -> None:
    # The session list counts a span as a call by its operation (ingest); the trajectory by this mapper's list.
    assert litellm._LLM_CALL_TYPES <= set(LLM_OPERATIONS)


def test_cache_counts_come_from_the_usage_object_litellm_writes_as_a_python_repr() -> None:
    # As LiteLLM 1.110 records an Anthropic call that read 1,500 of its 1,900 prompt tokens from the cache.
    usage = ("{'completion_tokens': 12, 'prompt_tokens': 1900, 'total_tokens': 1912, 'prompt_tokens_details': "
             "{'audio_tokens': None, 'cache_write_tokens': 0, 'cached_tokens': 1500, 'cache_creation_tokens': 0}, "
             "'cache_creation_input_tokens': 0, 'cache_read_input_tokens': 1500, 'service_tier': None}")
    call = litellm.map_span(SpanReader(_call(**{"gen_ai.usage.input_tokens": 1900, litellm.USAGE_OBJECT_KEY: usage})),
                            [])
    assert isinstance(call, LlmCall)
    assert (call.usage.input_tokens, call.usage.cache_read_tokens, call.usage.cache_write_tokens) == (1900, 1500, 0)
    # Not a Python literal (cut, or anyone's text): no cache counts, and nothing raised.
    cut = litellm.map_span(SpanReader(_call(**{litellm.USAGE_OBJECT_KEY: usage[:40]})), [])
    assert isinstance(cut, LlmCall) and cut.usage.cache_read_tokens is None
    # The session list reads the same attribute in SQL.
    assert litellm.USAGE_OBJECT_KEY == PYTHON_USAGE_KEY
