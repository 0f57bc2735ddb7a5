"""A Haystack Agent traced by OpenLIT (the `haystack_openlit` capture's exports).

OpenLIT's Haystack instrumentation records each `OpenAIChatGenerator.run` (`chat openai_chat_generator`), its OpenAI
instrumentation the client's call inside it (`chat gpt-4o-mini`); nothing records the Agent's run or its tools, so
each call is a trace of its own, joined to the session by `openlit.using_attributes`' session id
(`trajectory/mappers/openlit_haystack.py`).
"""

from __future__ import annotations

from span_fixtures import capture_spans

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import openlit, openlit_haystack, otel_genai
from evalkit.trajectory.mappers.reader import SpanReader
from evalkit.trajectory.operations import LlmCall
from evalkit.trajectory.span import Span

CAPTURE = "haystack_openlit"
SESSION = "haystack-openlit-weather-1"
CLIENT_SCOPE = "openlit.instrumentation.openai"


def _document(spans: list[Span]) -> dict:
    result = trajectory_from_spans(spans, session_id=SESSION)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def test_a_call_re_sending_its_runs_tool_results_carries_on_the_run() -> None:
    """The Agent's second call is a trace of its own whose recorded input has no answer (OpenLIT's OpenAI
    instrumentation leaves out an assistant message of tool calls alone), only the first call's tool results: the
    run carried on, not a run starting afresh, so its question is not asked a second time."""
    spans = capture_spans(CAPTURE)
    calls = sorted((s for s in spans if s.scope_name == CLIENT_SCOPE), key=lambda s: s.start_time_unix_nano)
    assert len({s.trace_id for s in calls}) == 4  # every call a trace of its own
    second = calls[1].attributes["gen_ai.input.messages"]
    assert '"role": "assistant"' not in second and '"tool_call_response"' in second

    document = _document(spans)
    assert [s["source"] for s in document["steps"]] == ["system", "user", "agent", "agent", "user", "agent", "agent"]
    assert [s["message"] for s in document["steps"] if s["source"] == "user"] == [
        "Weather in Paris and Atlantis?", "And the next two days in Paris?"]
    # The parallel calls' results on the first call, the raising tool's what the ToolInvoker sent the model.
    first = document["steps"][2]
    assert [c["tool_call_id"] for c in first["tool_calls"]] == ["call_0_0", "call_0_1"]
    assert [r["content"] for r in first["observation"]["results"]] == [
        "sunny, 21°C",
        "Failed to invoke Tool `get_weather` with parameters {'city': 'Atlantis'}. Error: unknown city: Atlantis"]
    assert document["steps"][5]["observation"]["results"][0]["content"] == "sunny, then light rain"


def _generator_spans() -> list[Span]:
    return [s for s in capture_spans(CAPTURE) if s.scope_name == openlit_haystack.SCOPE]


def test_the_generators_run_is_the_call_to_the_provider_its_class_calls() -> None:
    """`chat openai_chat_generator` names Haystack as the provider and holds Haystack's bookkeeping: read as the call
    OpenAIChatGenerator makes to OpenAI, every attribute read, and not counted again over the client's span."""
    generators = _generator_spans()
    assert len(generators) == 4
    for span in generators:
        assert span.attributes["gen_ai.provider.name"] == "haystack"
        reader = SpanReader(span)
        call = openlit.map_span(reader, ())
        assert isinstance(call, LlmCall)
        assert (call.provider, call.extra, call.model, call.input_messages) == (
            "openai", {"component": "OpenAIChatGenerator"}, None, [])
        assert reader.unused() - set(otel_genai.IDENTITY_KEYS) == set()
    document = _document(capture_spans(CAPTURE))
    assert len([s for s in document["steps"] if s.get("llm_call_count") == 1]) == 4
    # Left unmapped: only the httpx client spans' attributes.
    assert document["extra"]["unmapped_attributes"] == ["http.method", "http.status_code", "http.url"]


def test_without_the_clients_spans_each_generator_run_is_still_a_call() -> None:
    """OpenLIT's OpenAI instrumentation disabled: the generators' spans are all that says a call was made, to OpenAI
    (their `server.*` are OpenLIT's made-up localhost:8080, not read as the provider)."""
    alone = _generator_spans()  # each the root of its trace
    assert {s.parent_span_id for s in alone} == {""}
    steps = [s for s in _document(alone)["steps"] if s.get("llm_call_count") == 1]
    assert len(steps) == 4
    assert {s["extra"]["provider"] for s in steps} == {"openai"}
