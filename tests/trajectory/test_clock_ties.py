"""Spans whose millisecond clocks tie (OTel JS) keep the order they ran in: a parent before its
children, a call re-sending less history before one re-sending more."""

from __future__ import annotations

import json
from typing import Any

from evalkit.trajectory.build import build_trajectory
from tests.trajectory.span_fixtures import BASE_NS, span_from_dict

MS = 1_000_000


def _chat(span_id: str, parent: str, history: list[dict[str, Any]], answer: str) -> dict[str, Any]:
    return {"span_id": span_id, "parent_span_id": parent, "name": "chat",
            # One millisecond for everything: the clocks tie, start and end.
            "start_time_unix_nano": BASE_NS + 5 * MS, "end_time_unix_nano": BASE_NS + 5 * MS,
            "attributes": {
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 2,
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([{"role": "assistant",
                                                       "parts": [{"type": "text", "content": answer}]}])}}


def _text(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def test_calls_whose_clocks_tie_keep_the_conversation_s_order() -> None:
    agent = {"span_id": "ff00000000000000", "name": "invoke_agent bot", "start_time_unix_nano": BASE_NS + 5 * MS,
             "end_time_unix_nano": BASE_NS + 5 * MS,
             "attributes": {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "bot"}}
    first = _chat("bb00000000000000", agent["span_id"], [_text("user", "one?")], "1")
    # The second call's id sorts first, and everything else ties.
    second = _chat("aa00000000000000", agent["span_id"],
                   [_text("user", "one?"), _text("assistant", "1"), _text("user", "two?")], "2")
    spans = [span_from_dict(raw, i) for i, raw in enumerate([second, agent, first])]
    document = build_trajectory(spans).document
    steps = [(s["source"], s["message"], s.get("is_copied_context", False)) for s in document["steps"]]
    assert steps == [("user", "one?", False), ("agent", "1", False), ("user", "two?", False), ("agent", "2", False)]
    assert document["agent"]["name"] == "bot"
