"""A session-list page's figures, summed in Python (trajectory/page_figures.py), are those the engine gives by the
list's SQL: the counted LLM calls of `_LLM_CALLS` (which prices every session of an agent) and each trace's
figures over `spans FINAL`, for calls sent twice, wrapping LLM spans, reported costs, cached tokens, re-sent
exports and every capture (two instrumentations reporting one call, streamed calls, steps preparing a call)."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.trajectory import session_list
from evalkit.trajectory.page_figures import page_figures
from tests.captures import corpus
from tests.trajectory_service.conftest import Service, chat, root, span
from tests.trajectory_service.test_session_list_cost import _send_costly

# Each trace's figures over each span's latest version, as the engine sums them.
_TRACE_FIGURES = """
SELECT trace_id, count(), toUnixTimestamp64Nano(min(start_time)), toUnixTimestamp64Nano(max(end_time)),
       toUnixTimestamp64Milli(max(received_at)), countIf(failed), countIf(parent_span_id = ''),
       length(arrayDistinct(arrayFilter(p -> p != '' AND NOT has(groupArray(span_id), p), groupArray(parent_span_id)))),
       arraySort(groupUniqArrayIf(model, model != '' AND is_llm_call))
FROM spans FINAL WHERE agent_id = {agent:String} GROUP BY trace_id
"""


def _same_calls(python: dict[tuple[str, str, str], Any], engine: list[tuple[Any, ...]]) -> None:
    by_key = {(str(t), str(m), str(p)): tuple(figures) for t, m, p, *figures in engine if figures[0]}
    assert python.keys() == by_key.keys()
    for key, figures in python.items():
        expected = by_key[key]
        assert figures[:2] == expected[:2] and figures[3:] == expected[3:], key
        assert math.isclose(figures[2], expected[2] or 0.0, rel_tol=1e-12), key  # floats summed in another order


async def test_a_pages_figures_are_the_engines_for_every_kind_of_trace_and_every_capture(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent("figures")
    await _send_costly(svc, key, 11)
    # Each rule at its edge: a failing tool and a call with no usage whose parent never came; an OpenInference
    # step preparing a call; a call stored again with other figures (the latest counts); a second report of a
    # call starting as the first ends; calls without usage that failed or reported a cost, before a sibling
    # that answers with usage (the failed one an attempt at the sibling's request, the other no streamed call's
    # request).
    failed = chat(9400, 940001, 940000, 1.0, inputs=0, outputs=0)
    failed.status.code = trace_pb2.Status.STATUS_CODE_ERROR
    longer = chat(9700, 970002, 970000, 2.0, inputs=13, **{"gen_ai.response.id": "r-2"})
    longer.end_time_unix_nano += 10**9
    await svc.send(key, [
        root(9000, 900000, "s-odd", 1.0, 9.0), span(9000, 900001, 900000, "execute_tool search", 2.0, 3.0, error=True),
        chat(9000, 900002, 900099, 4.0, inputs=0, outputs=0),
        root(9100, 910000, "s-prepare", 1.0, 9.0),
        span(9100, 910001, 910000, "llm", 2.0, 3.0, openinference__span__kind="LLM", llm__model_name="test-model"),
        root(9200, 920000, "s-again", 1.0, 9.0), chat(9200, 920001, 920000, 2.0, inputs=100),
        root(9300, 930000, "s-twice", 1.0, 9.0), chat(9300, 930001, 930000, 2.0, **{"gen_ai.response.id": "r-1"}),
        chat(9300, 930002, 930000, 2.5, **{"gen_ai.response.id": "r-1"}),
        root(9400, 940000, "s-failed", 1.0, 9.0), failed, chat(9400, 940002, 940000, 2.0),
        root(9500, 950000, "s-reported", 1.0, 9.0), chat(9500, 950001, 950000, 1.0, inputs=0, outputs=0,
                                                         **{"llm.cost.total": 0.25}),
        chat(9500, 950002, 950000, 2.0),
        # Prompt tokens said without the cached ones (fewer than those); output with no input; a cost that is
        # not a number, which prices the call from its tokens.
        root(9600, 960000, "s-cached", 1.0, 9.0),
        chat(9600, 960001, 960000, 2.0, inputs=5, **{"gen_ai.usage.cache_read.input_tokens": 70,
                                                     "gen_ai.usage.cache_creation.input_tokens": 20}),
        chat(9600, 960002, 960000, 3.0, inputs=0, outputs=7),
        chat(9600, 960003, 960000, 4.0, **{"llm.cost.total": math.inf}),
        # Two reports of a call starting together: the longer one is dropped. A streamed call's request span
        # answered by a sibling starting at the same moment.
        root(9700, 970000, "s-together", 1.0, 9.0),
        chat(9700, 970001, 970000, 2.0, inputs=11, **{"gen_ai.response.id": "r-2"}),
        longer, chat(9700, 970003, 970000, 5.0, inputs=0, outputs=0), chat(9700, 970004, 970000, 5.0)])
    await svc.send(key, [chat(9200, 920001, 920000, 2.0, inputs=777)])
    await asyncio.to_thread(corpus.replay_every, svc.running.otlp_http, key)
    # Every export flattened (a list request waits at the store's read barrier).
    await svc.get(f"/api/agents/{agent}/sessions?limit=1")
    store = svc.running.store
    traces = sorted(str(t) for (t,) in store.query(
        "SELECT DISTINCT trace_id FROM spans WHERE agent_id = {agent:String}", {"agent": agent}))
    per_trace, calls = page_figures(session_list._page_spans(store, agent, {t: (0, 2**63 - 1) for t in traces}))

    engine_calls = store.query(session_list._LLM_CALLS.replace("__TRACES__", "{traces:Array(String)}"),
                               {"agent": agent, "traces": traces})
    _same_calls(calls, engine_calls)
    # What makes this comparison worth having: calls of every rule.
    counted = sum(figures[0] for figures in calls.values())
    llm_spans = store.query("SELECT count() FROM spans FINAL WHERE agent_id = {agent:String} AND is_llm_call",
                            {"agent": agent})[0][0]
    assert 100 < counted < llm_spans
    assert any(figures[1] for figures in calls.values())  # some reported a cost
    assert any(figures[11] for figures in calls.values())  # some reported no usage
    assert store.query("SELECT count() FROM spans WHERE agent_id = {agent:String} AND prepares_call",
                       {"agent": agent})[0][0] > 0

    engine_traces = {str(row[0]): (*map(int, row[1:8]), sorted(map(str, row[8])))
                     for row in store.query(_TRACE_FIGURES, {"agent": agent})}
    assert {trace: (*figures[:7], figures[7]) for trace, figures in per_trace.items()} == engine_traces
    assert any(figures.missing_parents for figures in per_trace.values())
    assert any(figures.errors for figures in per_trace.values())
