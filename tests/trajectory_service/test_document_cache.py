"""Settled sessions' documents are built once and served again until anything that shapes them changes."""

from __future__ import annotations

from typing import Any

import pytest

from evalkit.trajectory.assemble import Built, BuiltCache
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.read import SessionWindow
from evalkit.trajectory.routes import _EXTRA_SLOT, CACHE_EXTRA, _as_text, _dumps
from evalkit.trajectory.settle import Settlement
from tests.trajectory_service.conftest import ServiceFactory, chat, root, span


def _cache(svc: Any) -> BuiltCache:
    cache = svc.running.service.context.extras[CACHE_EXTRA]
    assert isinstance(cache, BuiltCache)
    return cache


def _without_times(document: dict[str, Any]) -> dict[str, Any]:
    extra = dict(document["extra"])
    extra["settlement"] = {k: v for k, v in extra["settlement"].items() if k != "quiet_seconds"}
    extra.pop("waited_seconds", None)
    return {**document, "extra": extra}


async def test_a_settled_session_is_built_once_and_served_the_same(start_service: ServiceFactory) -> None:
    svc = await start_service(settle_quiet_seconds=0.0)
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0), root(1, 10, "s-c", 0.5, 2.0)])
    first = await svc.trajectory(agent, "s-c")
    assert first.headers["X-Evalkit-Trajectory-Status"] == "valid"
    cache = _cache(svc)
    assert len(cache) == 1
    cached = next(iter(cache._entries.values()))[1]
    second = await svc.trajectory(agent, "s-c")
    assert _without_times(second.body) == _without_times(first.body)
    assert next(iter(cache._entries.values()))[1] is cached  # served from the cache, not rebuilt
    # What a request adds is per request, never written into the cached document.
    assert "status" not in cached.built.document["extra"]

    # A late span: new last arrival and span count, so the session is built again, with it.
    await svc.send(key, [chat(1, 12, 10, 1.5, text="late")])
    third = await svc.trajectory(agent, "s-c")
    assert third.body["extra"]["span_count"] == 3
    assert [s["message"] for s in third.body["steps"] if s["source"] == "agent"] == ["ok", "late"]

    # A mapping change rebuilds too.
    assert (await svc.put(f"/api/agents/{agent}/mapping", {"version": "m2"})).status == 200
    fourth = await svc.trajectory(agent, "s-c")
    assert fourth.body["extra"]["mapping_version"] == "m2"


async def test_a_session_holding_the_slot_marker_is_served_whole_and_not_cached(
    start_service: ServiceFactory,
) -> None:
    svc = await start_service(settle_quiet_seconds=0.0)
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0, text=_EXTRA_SLOT), root(1, 10, "s-m", 0.5, 2.0)])
    reply = await svc.trajectory(agent, "s-m")
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid"
    assert reply.body["steps"][-1]["message"] == _EXTRA_SLOT
    assert reply.body["extra"]["status"] == "valid"
    assert len(_cache(svc)) == 0


@pytest.mark.parametrize("extra_first", [False, True])
def test_text_around_the_extra_is_the_whole_document_byte_for_byte(extra_first: bool) -> None:
    document: dict[str, Any] = {"schema_version": "ATIF-v1.7", "steps": [{"step_id": 1, "message": "é \u2028 \""}],
                                "extra": {"span_count": 1}, "subagent_trajectories": [{"extra": {"a": [1.5, None]}}]}
    if extra_first:
        document = {"extra": document.pop("extra"), **document}
    cached = _as_text(Built(document, [], "rules", "built-in"))
    assert cached is not None
    extra = {**document["extra"], "status": "valid", "waited_seconds": 0.25}
    assert cached.head + _dumps(extra) + cached.tail == _dumps({**document, "extra": extra})


async def test_an_unsettled_session_is_not_cached(start_service: ServiceFactory) -> None:
    svc = await start_service(settle_quiet_seconds=30.0)
    agent, key = await svc.new_agent()
    # A root that is not an agent run gives no sign the session is done: only 30 s of quiet
    # would settle it (an agent root settles after 0.5 s, which a loaded machine can pass).
    await svc.send(key, [chat(1, 11, 10, 1.0), span(1, 10, None, "workflow", 0.5, 2.0, **{"session.id": "s-p"})])
    reply = await svc.trajectory(agent, "s-p")
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "partial"
    assert len(_cache(svc)) == 0


def _key(session: str, spans: int) -> tuple[Any, ...]:
    window = SessionWindow(trace_ids=("t",), first_start_ns=0, last_end_ns=1, last_received_ms=5)
    settlement = Settlement(status="valid", span_count=spans, trace_count=1)
    return BuiltCache.key("a", "bot", session, window, settlement, None, PriceBook(), False)


def _built() -> Built:
    return Built({"steps": []}, [], "rules", "built-in")


def test_least_recently_used_go_first_within_entry_and_span_budgets() -> None:
    cache = BuiltCache(limit=2, max_spans=100)
    prices = PriceBook()
    a, b, c = _key("a", 10), _key("b", 10), _key("c", 10)
    cache.put(a, prices, _built())
    cache.put(b, prices, _built())
    assert cache.get(a) is not None  # a is now the most recent
    cache.put(c, prices, _built())
    assert cache.get(b) is None and cache.get(a) is not None and cache.get(c) is not None
    big = _key("big", 95)
    cache.put(big, prices, _built())  # over the span budget with the others: they go
    assert cache.get(big) is not None and len(cache) == 1
    cache.put(_key("huge", 101), prices, _built())  # larger than the whole budget: not kept
    assert len(cache) == 1 and cache.get(big) is not None
