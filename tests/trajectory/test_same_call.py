"""One LLM call reported by several instrumentations is one call: by response id, else by parent,
model, time and input (`trajectory/same_call.py`)."""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.build import build_trajectory
from tests.trajectory.span_fixtures import BASE_NS, span_from_dict

S = 1_000_000_000


def _chat(span_id: str, start_s: float, end_s: float, text: str, user: str = "hi", outputs: int = 10,
          **more: Any) -> dict[str, Any]:
    return {"span_id": span_id, "parent_span_id": "00000000000000aa", "name": "chat",
            "start_time_unix_nano": BASE_NS + int(start_s * S), "end_time_unix_nano": BASE_NS + int(end_s * S),
            "attributes": {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
                "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": outputs,
                "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": user}]}]),
                "gen_ai.output.messages": json.dumps([{"role": "assistant",
                                                       "parts": [{"type": "text", "content": text}]}]),
                **more}}


def _agent_steps(*raw: dict[str, Any]) -> list[dict[str, Any]]:
    root = {"span_id": "00000000000000aa", "name": "app", "start_time_unix_nano": BASE_NS,
            "end_time_unix_nano": BASE_NS + 60 * S}
    spans = [span_from_dict(r, i) for i, r in enumerate([root, *raw])]
    document = build_trajectory(spans).document
    return [s for s in document["steps"] if s["source"] == "agent"]


def test_siblings_with_one_response_id_are_one_call_the_inner_one_kept() -> None:
    steps = _agent_steps(_chat("01", 1.0, 2.0, "hello", outputs=7, **{"gen_ai.response.id": "r1"}),
                         _chat("02", 1.1, 1.9, "hello", outputs=6, **{"gen_ai.response.id": "r1"}))
    assert [(s["extra"]["span_id"], s["metrics"]["completion_tokens"]) for s in steps] == [("02", 6)]


def test_overlapping_siblings_without_an_id_given_the_same_input_by_two_instrumentations_are_one_call() -> None:
    steps = _agent_steps({**_chat("01", 1.0, 2.0, "hello"), "scope": "framework"},
                         {**_chat("02", 1.1, 1.9, "hello"), "scope": "client-sdk"})
    assert len(steps) == 1
    # One instrumentation reporting two such calls: an agent asking the same thing twice at once.
    assert len(_agent_steps(_chat("01", 1.0, 2.0, "hello"), _chat("02", 1.1, 1.9, "hello"))) == 2


def test_distinct_calls_stay_distinct() -> None:
    # Different response ids, though overlapping with the same input (two samples asked in parallel).
    assert len(_agent_steps(_chat("01", 1.0, 2.0, "a", **{"gen_ai.response.id": "r1"}),
                            _chat("02", 1.1, 1.9, "b", **{"gen_ai.response.id": "r2"}))) == 2
    # One id on two calls one after the other (a test double's fixed id): two calls.
    assert len(_agent_steps(_chat("01", 1.0, 2.0, "a", **{"gen_ai.response.id": "r1"}),
                            _chat("02", 3.0, 4.0, "b", **{"gen_ai.response.id": "r1"}))) == 2
    # The same question asked twice, one call after the other.
    assert len(_agent_steps(_chat("01", 1.0, 2.0, "a"), _chat("02", 3.0, 4.0, "a"))) == 2
    # Overlapping, but asked different things.
    assert len(_agent_steps(_chat("01", 1.0, 2.0, "a", user="x"), _chat("02", 1.1, 1.9, "b", user="y"))) == 2


def test_a_wrapper_with_the_response_id_of_the_span_inside_is_that_call_the_report_with_messages_kept() -> None:
    # OpenInference's `messages.create` span around the Anthropic SDK's own, which records no messages.
    inner = {"span_id": "02", "parent_span_id": "01", "name": "anthropic.messages.create", "scope": "client-sdk",
             "start_time_unix_nano": BASE_NS + int(1.1 * S), "end_time_unix_nano": BASE_NS + int(1.9 * S),
             "attributes": {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                            "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
                            "gen_ai.response.id": "r1"}}
    outer = {**_chat("01", 1.0, 2.0, "hello", **{"gen_ai.response.id": "r1"}), "scope": "framework"}
    steps = _agent_steps(outer, inner)
    assert [(s["extra"]["span_id"], s["message"]) for s in steps] == [("01", "hello")]
    # Another response inside: a framework's span around the client's call, the inner one kept (the wrapper rule).
    other = {**inner, "attributes": {**inner["attributes"], "gen_ai.response.id": "r2"}}
    assert [s["extra"]["span_id"] for s in _agent_steps(outer, other)] == ["02"]


def test_a_wrapper_of_another_instrumentation_given_the_same_input_names_the_results_the_span_inside_does_not() -> None:
    # openai-agents' `generation` span around LiteLLM's `acompletion` (OpenInference's, both): LiteLLM's, kept, records
    # the tool messages without the call ids the SDK's report of the same request names them by.
    asked = [{"role": "user", "parts": [{"type": "text", "content": "weather?"}]},
             {"role": "assistant", "parts": [
                 {"type": "tool_call", "id": "c1", "name": "get_weather", "arguments": {"city": "Paris"}},
                 {"type": "tool_call", "id": "c2", "name": "get_weather", "arguments": {"city": "Oslo"}}]}]
    shown = [("c2", "rainy"), ("c1", "sunny")]  # the results in another order than the calls

    def results(named: bool) -> str:
        return json.dumps([*asked, *({"role": "tool", "parts": [
            {"type": "tool_call_response", **({"id": call_id} if named else {}), "response": text}]}
            for call_id, text in shown)])

    first = _chat("01", 1.0, 2.0, "", **{"gen_ai.input.messages": json.dumps(asked[:1]),
                                         "gen_ai.output.messages": json.dumps(asked[1:])})
    outer = {**_chat("02", 3.0, 4.0, "Sunny in Paris, rainy in Oslo.",
                     **{"gen_ai.input.messages": results(named=True)}), "scope": "framework"}
    inner = {**_chat("03", 3.1, 3.9, "Sunny in Paris, rainy in Oslo.",
                     **{"gen_ai.input.messages": results(named=False)}), "parent_span_id": "02",
             "scope": "client-library"}
    steps = _agent_steps(first, outer, inner)
    assert [s["extra"]["span_id"] for s in steps] == ["01", "03"]
    assert sorted((r["source_call_id"], r["content"]) for r in steps[0]["observation"]["results"]) == [
        ("c1", "sunny"), ("c2", "rainy")]
