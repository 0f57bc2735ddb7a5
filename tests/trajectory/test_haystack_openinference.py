"""OpenInference's Haystack instrumentor: an LLM span's messages completed from the `ChatMessage` reprs in its
`input.value` / `output.value` (trajectory/mappers/haystack.py, `openinference_messages`)."""

from __future__ import annotations

import json

from evalkit.trajectory.from_spans import trajectory_from_spans
from evalkit.trajectory.mappers import haystack
from evalkit.trajectory.span import Span
from tests.trajectory.span_fixtures import capture_spans

TRACE = "5bf92f3577b34da6a3ce929d0e0e4736"
T0 = 1_800_000_000_000_000_000


def _generator(span_id: str, at: int, messages: list[str], replies: list[str], flattened: dict[str, object]) -> Span:
    return Span(trace_id=TRACE, span_id=span_id, parent_span_id="", name="OpenAIChatGenerator.run", kind=1,
                start_time_unix_nano=T0 + at * 10**9, end_time_unix_nano=T0 + at * 10**9 + 5 * 10**8,
                status_code=1, scope_name=haystack.OPENINFERENCE_SCOPE,
                attributes={"openinference.span.kind": "LLM", "session.id": "hs-oi",
                            "input.mime_type": "application/json", "output.mime_type": "application/json",
                            "input.value": json.dumps({"messages": messages}),
                            "output.value": json.dumps({"replies": replies}),
                            "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 10,
                            "llm.token_count.completion": 2, **flattened})


USER = ("ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(text='Is <b>it</b> \"on\"?')], "
        "_name=None, _meta={})")
CALLS = ("ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[ToolCall(tool_name='probe', "
         "arguments={'host': 'a'}, id='call_7', extra=None)], _name=None, _meta={'model': 'gpt-4o-mini', "
         "'created': datetime.datetime(2026, 1, 2, 3, 4), 'fn': <function probe at 0x7f00>})")
RESULT = ("ChatMessage(_role=<ChatRole.TOOL: 'tool'>, _content=[ToolCallResult(result=\"Failed: can't reach 'a'\", "
          "origin=ToolCall(tool_name='probe', arguments={'host': 'a'}, id='call_7', extra=None), error=True)], "
          "_name=None, _meta={})")
ANSWER = ("ChatMessage(_role=<ChatRole.ASSISTANT: 'assistant'>, _content=[TextContent(text='It is down.')], "
          "_name=None, _meta={})")


def test_tool_calls_and_results_come_from_the_reprs() -> None:
    first = _generator("1000000000000001", 0, [USER], [CALLS], {
        "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": 'Is <b>it</b> "on"?',
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "probe",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"host": "a"}'})
    # The flattened messages: the re-sent call and the result are bare roles.
    second = _generator("1000000000000002", 1, [USER, CALLS, RESULT], [ANSWER], {
        "llm.input_messages.0.message.role": "user", "llm.input_messages.0.message.content": 'Is <b>it</b> "on"?',
        "llm.input_messages.1.message.role": "assistant", "llm.input_messages.2.message.role": "tool",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "It is down."})
    document = trajectory_from_spans([first, second]).document()
    assert [(s["source"], s["message"]) for s in document["steps"]] == [
        ("user", 'Is <b>it</b> "on"?'), ("agent", ""), ("agent", "It is down.")]
    call = document["steps"][1]
    assert [(c["tool_call_id"], c["function_name"], c["arguments"]) for c in call["tool_calls"]] == [
        ("call_7", "probe", {"host": "a"})]
    assert [(r["source_call_id"], r["content"]) for r in call["observation"]["results"]] == [
        ("call_7", "Failed: can't reach 'a'")]


def test_a_repr_that_does_not_read_leaves_the_flattened_messages() -> None:
    broken = _generator("1000000000000003", 0, ["ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[Text"],
                        ["not a message"], {
                            "llm.input_messages.0.message.role": "user",
                            "llm.input_messages.0.message.content": "Hello?",
                            "llm.output_messages.0.message.role": "assistant",
                            "llm.output_messages.0.message.content": "Hi."})
    document = trajectory_from_spans([broken]).document()
    assert [(s["source"], s["message"]) for s in document["steps"]] == [("user", "Hello?"), ("agent", "Hi.")]


def test_the_capture_has_the_tools_and_their_results() -> None:
    document = trajectory_from_spans(capture_spans("haystack_openinference")).document()
    assert document["session_id"] == "haystack-oi-weather-1"
    first = document["steps"][2]
    results = {r["source_call_id"]: r["content"] for r in first["observation"]["results"]}
    assert results == {"call_0_0": "sunny, 21°C", "call_0_1": "Failed to invoke Tool `get_weather` with parameters "
                                                              "{'city': 'Atlantis'}. Error: unknown city: Atlantis"}
    # No empty step for the re-sent call: its ids are the reply's.
    assert len(document["steps"]) == 7
    assert [t["function"]["name"] for t in document["agent"]["tool_definitions"]] == ["get_weather", "get_forecast"]
