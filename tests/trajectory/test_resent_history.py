"""Message lists that re-send the previous call's messages: decoded by what is new, nothing lost or doubled."""

from __future__ import annotations

import json
import random
from typing import Any

import orjson
import pytest

from evalkit.trajectory.build import _Fingerprints, build_trajectory
from evalkit.trajectory.mappers import resent_history
from evalkit.trajectory.mappers.messages import MessageMemo
from evalkit.trajectory.mappers.reader import parse_json
from evalkit.trajectory.mappers.resent_history import Resent, ResentLists
from evalkit.trajectory.operations import Message
from evalkit.trajectory.span import Span

TRACE = "cd" * 16
BASE_NS = 1_760_000_000_000_000_000


def _same(got: Any, want: Any) -> bool:
    # orjson tells 1 from 1.0 and keeps key order: equal output is equal JSON data, types included.
    return orjson.dumps(got) == orjson.dumps(want)


def _message(i: int, size: int = 1) -> dict[str, Any]:
    return {"role": "user" if i % 2 else "assistant", "parts": [{"type": "text", "content": f"message {i} é" * size}],
            "n": i, "f": 1.0}


def test_a_growing_history_takes_the_messages_decoded_before() -> None:
    lists = ResentLists()
    first = [_message(i, 100) for i in range(3)]
    assert _same(lists.decode(json.dumps(first)), first)
    decoded = lists.decode(json.dumps([*first, _message(3, 100)]))
    assert decoded is not None and _same(decoded, [*first, _message(3, 100)])
    again = lists.decode(json.dumps([*first, _message(3, 100), _message(4, 100)]))
    assert again is not None and _same(again, [*first, _message(3, 100), _message(4, 100)])
    # The same objects: a re-sent message is neither parsed nor serialised again.
    assert all(a is b for a, b in zip(again, decoded, strict=False))


@pytest.mark.parametrize("task", [{"role": "user", "content": "the task " * 50}, {"role": "user", "content": "task"}])
def test_a_window_of_the_last_messages_drops_the_oldest_and_keeps_the_task(task: dict[str, Any]) -> None:
    # A long task: the lists start alike; a short one: they do not, and are long enough to look further.
    lists = ResentLists()
    conversation = [_message(i, 100) for i in range(40)]
    previous: list[Any] | None = None
    for end in range(4, 40, 2):
        messages = [task, *conversation[max(0, end - 10):end]]
        decoded = lists.decode(json.dumps(messages))
        assert decoded is not None and _same(decoded, messages)
        if previous is not None:
            assert decoded[0] is previous[0]
            assert decoded[-3] is previous[-1]  # two new at the end, the rest as decoded before
        previous = decoded


def test_a_list_tells_which_of_its_elements_are_the_list_befores() -> None:
    lists = ResentLists()
    task = {"role": "user", "content": "the task " * 50}
    conversation = [_message(i, 100) for i in range(30)]
    before = lists.decode(json.dumps([task, *conversation[0:10]]))
    assert lists.resent is None  # nothing before it
    assert before is not None
    items = lists.decode(json.dumps([task, *conversation[3:12]]))  # three dropped, two new
    resent = lists.resent
    assert items is not None and resent is not None and resent.items is items and resent.before is before
    assert resent.runs == [(0, 0, 1), (1, 4, 11)]
    assert resent.rest() == [8, 9]
    carried = resent.carry(before)
    assert [i for i, item in enumerate(carried) if item is None] == [8, 9]
    assert all(item is items[i] for i, item in enumerate(carried) if item is not None)
    # A list that takes nothing from the one before says so.
    lists.decode(json.dumps([_message(i, 100) for i in range(50, 60)]))
    assert lists.resent is None


def test_carrying_values_from_the_list_before() -> None:
    resent = Resent(items=list("abcdefg"), before=list("xbcdyfz"), runs=[(1, 1, 4), (5, 5, 6)])
    assert resent.rest() == [0, 4, 6]
    assert resent.carry([10, 11, 12, 13, 14, 15, 16]) == [None, 11, 12, 13, None, 15, None]
    assert Resent(items=[1, 2], before=[1, 2], runs=[(0, 0, 2)]).rest() == []


def test_the_memo_reads_a_re_sent_list_as_it_reads_it_whole() -> None:
    memo, whole = MessageMemo(), MessageMemo()
    task = {"role": "user", "content": "the task " * 50}
    conversation = [_message(i, 100) for i in range(40)]
    previous: list[Any] | None = None
    for end in range(10, 40, 3):
        text = json.dumps([task, *conversation[max(0, end - 12):end]])
        items = memo.decode(text)
        messages = memo.parse_all(items, "user")
        assert messages == whole.parse_all(json.loads(text), "user")
        resent = memo.resent(messages)
        if previous is None:
            assert resent is None
        else:
            # The messages re-sent are the ones read from the list before, the same objects.
            assert resent is not None and resent.before is previous
            assert resent.rest() == [len(messages) - 3, len(messages) - 2, len(messages) - 1]
            assert all(m is messages[i] for i, m in enumerate(resent.carry(previous)) if m is not None)
        previous = messages


def test_the_fingerprints_of_a_re_sent_list_are_those_of_its_messages() -> None:
    memo = MessageMemo()
    carrying, looking_up = _Fingerprints(memo.resent), _Fingerprints()
    system = {"role": "system", "content": "be brief " * 50}
    conversation = [_message(i, 100) for i in range(40)]
    carried = 0
    for end in range(10, 40, 3):
        messages = memo.parse_all(memo.decode(json.dumps([system, *conversation[max(0, end - 12):end]])), "user")
        carried += memo.resent(messages) is not None
        keys, want = carrying.of_inputs(messages), looking_up.of_inputs(messages)
        assert [carrying.fields[k] if k >= 0 else k for k in keys] == [
            looking_up.fields[k] if k >= 0 else k for k in want]
        assert keys[0] == want[0] == -1  # the system message
    assert carried == 9  # every list but the first took its keys from the list before


@pytest.mark.parametrize("text", [
    '[{"a": 1}, {"a": 12}]',  # `{"a": 1` of the list before is a prefix of the new element's text
    '[{"a": 1}, NaN]',  # not strict JSON: parsed whole, as before (NaN through the standard library)
    '[{"a": 1}, {"a": 2}] trailing',
    '[{"a": 1}, {"a": 2}',
    '[{"a": 1} {"a": 2}]',
    '[ {"a": 1} ,\n {"a": 2}\t]',
    '[]',
    '[1, 2.0, "x", null, true, [1, {"b": 2}]]',
    '["\\ud800"]',
    '{"messages": [{"a": 1}]}',
])
def test_every_text_reads_as_parsing_it_whole_gives(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resent_history, "_SHORT", 0)
    lists = ResentLists()
    lists.decode('[{"a": 1}, {"a": 1}, 1]')
    decoded = lists.decode(text)
    want = parse_json(text)
    if decoded is None:
        return  # handed back to be parsed whole (`MessageMemo.decode` does)
    assert type(want) is list and _same(decoded, want)


def test_strict_arrays_after_a_hint_are_decoded_not_handed_back(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(resent_history, "_SHORT", 0)
    lists = ResentLists()
    lists.decode('[{"a": 1}, {"a": 2}]')
    for text in ('[{"a": 1}, {"a": 2}, {"a": 3}]', '[ {"a": 1} ,\n {"a": 2}\t, 4]', '[{"a": 1}, 12]'):
        assert lists.decode(text) is not None, text


def _span(index: int, attributes: dict[str, Any], parent: str = "r" * 16) -> Span:
    start = BASE_NS + index * 1_000_000_000
    return Span(
        trace_id=TRACE, span_id=f"{index:016x}", parent_span_id=parent if index else "", name="span", kind=1,
        start_time_unix_nano=start, end_time_unix_nano=start + 500_000_000, status_code=0, status_message="",
        attributes=attributes, resource_attributes={}, scope_name="", scope_version="", events=(), links=(),
        truncated={}, session_id="",
    )


def _agent_loop(calls: int, window: int | None, separators: tuple[str, str] = (", ", ": ")) -> list[Span]:
    """An agent loop: each chat call re-sends the task and the conversation (its last `window` messages)."""
    task = {"role": "user", "parts": [{"type": "text", "content": "the task"}]}
    spans = [_span(0, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot", "session.id": "s"})]
    spans[0] = Span(**{**spans[0].__dict__, "span_id": "r" * 16})
    conversation: list[dict[str, Any]] = []
    for call in range(calls):
        history = conversation if window is None else conversation[-window:] if window else []
        answer = {"role": "assistant", "parts": [
            {"type": "text", "content": f"thinking {call}"},
            {"type": "tool_call", "id": f"call_{call}", "name": "search", "arguments": {"q": call}}]}
        spans.append(_span(2 * call + 1, {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 1,
            "gen_ai.input.messages": json.dumps([task, *history], separators=separators),
            "gen_ai.output.messages": json.dumps([answer]),
        }))
        result = f"result {call}"
        spans.append(_span(2 * call + 2, {
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search",
            "gen_ai.tool.call.id": f"call_{call}", "gen_ai.tool.call.result": result,
        }))
        conversation += [answer, {"role": "tool", "parts": [
            {"type": "tool_call_response", "id": f"call_{call}", "response": result}]}]
    return spans


@pytest.mark.parametrize("window", [None, 6, 0, 11])
@pytest.mark.parametrize("separators", [(", ", ": "), (",", ":")])
def test_re_sent_history_is_neither_doubled_nor_lost(
    window: int | None, separators: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(resent_history, "_SHORT", 0)
    spans = _agent_loop(30, window, separators)
    decoded: list[bool] = []
    decode = ResentLists.decode

    def counted(self: ResentLists, text: str) -> list[Any] | None:
        items = decode(self, text)
        decoded.append(items is not None)
        return items

    monkeypatch.setattr(ResentLists, "decode", counted)
    document = build_trajectory(spans, session_id="s").document
    assert all(decoded) and len(decoded) == 30  # every call's list read against the one before
    steps = document["steps"]
    assert [s["message"] for s in steps if s["source"] == "user"] == ["the task"]
    agent_steps = [s for s in steps if s["source"] == "agent"]
    assert [s["message"] for s in agent_steps] == [f"thinking {call}" for call in range(30)]
    assert not any(s.get("is_copied_context") for s in agent_steps)
    assert [[r["content"] for r in s["observation"]["results"]] for s in agent_steps] == [
        [f"result {call}"] for call in range(30)]
    # What parsing every list whole gives.
    monkeypatch.setattr(ResentLists, "decode", lambda self, text: None)
    assert orjson.dumps(build_trajectory(spans, session_id="s").document) == orjson.dumps(document)


@pytest.mark.parametrize("seed", range(6))
def test_lists_that_drop_repeat_and_mix_messages_read_as_parsed_whole(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each call re-sends a window of the conversation that moves by a random step, sometimes with a
    # message twice, a system message or a bare string among them: whatever runs are carried from
    # the list before, the trajectory is the one parsing every list whole gives.
    monkeypatch.setattr(resent_history, "_SHORT", 0)
    monkeypatch.setattr(resent_history, "_LONG", 0)  # a list that starts otherwise is read against the one before
    chance = random.Random(seed)
    carried: list[bool] = []
    parse_all = MessageMemo.parse_all

    def counted(self: MessageMemo, items: list[Any], default_role: str) -> list[Message]:
        messages = parse_all(self, items, default_role)
        carried.append(self.resent(messages) is not None)
        return messages

    monkeypatch.setattr(MessageMemo, "parse_all", counted)
    system = {"role": "system", "content": "be brief"}
    conversation = [_message(i, 3) for i in range(200)]
    spans = [_span(0, {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot", "session.id": "s"})]
    spans[0] = Span(**{**spans[0].__dict__, "span_id": "r" * 16})
    start = 0
    for call in range(40):
        start += chance.choice([0, 0, 1, 2, 3])
        window: list[Any] = conversation[start:start + 12 + call]
        if chance.random() < 0.2:
            window.insert(chance.randrange(len(window)), chance.choice(window))
        if chance.random() < 0.2:
            window.insert(chance.randrange(len(window)), system)
        if chance.random() < 0.1:
            window.insert(chance.randrange(len(window)), "a bare string")
        spans.append(_span(call + 1, {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-4o",
            "gen_ai.input.messages": json.dumps([{"role": "user", "content": "the task"}, *window]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "content": f"answer {call}"}]),
        }))
    document = build_trajectory(spans, session_id="s").document
    assert sum(carried) >= 20  # most lists took runs from the list before
    monkeypatch.setattr(ResentLists, "decode", lambda self, text: None)
    assert orjson.dumps(build_trajectory(spans, session_id="s").document) == orjson.dumps(document)


def test_two_loops_interleaved_in_one_trace_read_as_parsed_whole(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each list's hint is the other loop's: found in neither, decoded element by element or whole.
    monkeypatch.setattr(resent_history, "_UNHINTED_LIMIT", 200)
    monkeypatch.setattr(resent_history, "_SHORT", 0)
    one, other = _agent_loop(12, None), _agent_loop(12, 4)
    other = [Span(**{**s.__dict__, "span_id": "f" + s.span_id[1:], "start_time_unix_nano": s.start_time_unix_nano + 1,
                     "parent_span_id": s.parent_span_id and "r" * 16}) for s in other[1:]]
    spans = [*one, *other]
    document = build_trajectory(spans, session_id="s").document
    monkeypatch.setattr(ResentLists, "decode", lambda self, text: None)
    assert orjson.dumps(build_trajectory(spans, session_id="s").document) == orjson.dumps(document)
