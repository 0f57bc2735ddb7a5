"""A session's first request settles it from the spans it reads: the same settlement as the settle check."""

from __future__ import annotations

import time

from evalkit.trajectory.assemble import assemble
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.read import read_spans_to_map, read_spans_to_map_settling, session_window
from evalkit.trajectory.settle import settle_session, shapes_of, trace_shapes
from tests.trajectory_service.conftest import ServiceFactory, chat, root, span


async def test_shapes_from_the_spans_read_are_the_settle_checks(start_service: ServiceFactory) -> None:
    svc = await start_service(settle_quiet_seconds=0.0)
    agent, key = await svc.new_agent()
    await svc.send(key, [
        # Trace 1: complete, an agent root (a finished sign), two children.
        root(1, 10, "s-mixed", 0.0, 3.0), chat(1, 11, 10, 1.0), span(1, 12, 10, "tool", 1.6, 1.8),
        # Trace 2: its root not arrived, a child of a missing parent too.
        chat(2, 21, 20, 4.0, **{"session.id": "s-mixed"}), span(2, 22, 99, "orphan", 4.1, 4.2),
        # Trace 3: a workflow root, no sign the work is done.
        span(3, 30, None, "workflow", 5.0, 6.0, session__id="s-mixed"), chat(3, 31, 30, 5.1),
    ])
    store = svc.running.store
    window = session_window(store, agent, "s-mixed")
    assert window is not None and len(window.trace_ids) == 3

    spans, facts, log_records = read_spans_to_map_settling(store, agent, window.trace_ids)
    checked, counted = trace_shapes(store, agent, window.trace_ids)
    assert shapes_of(facts) == checked
    assert log_records == counted == 0
    by_trace = {shape.trace_id[-1]: shape for shape in checked}
    assert (by_trace["1"].roots, by_trace["1"].finished_roots, by_trace["1"].missing_parents) == (1, 1, 0)
    assert (by_trace["2"].roots, by_trace["2"].missing_parents) == (0, 2)
    assert (by_trace["3"].roots, by_trace["3"].finished_roots) == (1, 0)
    # The spans are the builder's read, span for span.
    assert [s.__dict__ for s in spans] == [s.__dict__ for s in read_spans_to_map(store, agent, window.trace_ids)]

    # Settled by the build's read or by the check first: the same settlement, the same document.
    now = time.time()
    first = assemble(store, agent, "bot", "s-mixed", now=now, quiet_period=0.0, overrides=None, prices=PriceBook())
    settlement, _ = settle_session(store, agent, "s-mixed", now=now, quiet_period=0.0)
    after_check = assemble(store, agent, "bot", "s-mixed", now=now, quiet_period=0.0, overrides=None,
                           prices=PriceBook(), settlement=settlement, window=window)
    assert first.settlement == settlement
    assert first.status == "partial" and first.settlement.traces_without_root == (f"{2:032x}",)
    assert first.built is not None and after_check.built is not None
    assert first.document() == after_check.document()


async def test_the_first_request_reads_one_span_past_the_cap_and_counts_for_the_message(
    start_service: ServiceFactory,
) -> None:
    svc = await start_service(session_span_limit=3, settle_quiet_seconds=0.0)
    agent, key = await svc.new_agent()
    await svc.send(key, [root(1, 10, "s-big", 0.0, 9.0), *(chat(1, 11 + i, 10, 1.0 + i) for i in range(6))])
    store = svc.running.store
    window = session_window(store, agent, "s-big")
    assert window is not None
    spans, facts, _ = read_spans_to_map_settling(store, agent, window.trace_ids, limit=4)
    assert spans == [] and len(facts) == 4  # refused: no spans made of what was read
    # One trace (the usual session): its shape from whole columns, as the settle check counts it.
    _, facts, _ = read_spans_to_map_settling(store, agent, window.trace_ids)
    assert shapes_of(facts) == trace_shapes(store, agent, window.trace_ids)[0]
    assert shapes_of(facts)[0].spans == 7 and shapes_of(facts)[0].finished_roots == 1
    reply = await svc.trajectory(agent, "s-big")
    assert reply.status == 413
    message = str(reply.body["error"])
    assert "has 7 spans" in message and "limit=1000&offset=0" in message


async def test_first_then_cached_requests_serve_the_same_document(start_service: ServiceFactory) -> None:
    svc = await start_service(settle_quiet_seconds=0.0)
    agent, key = await svc.new_agent()
    await svc.send(key, [root(1, 10, "s-twice", 0.0, 3.0), chat(1, 11, 10, 1.0), chat(1, 12, 10, 2.0)])
    first = await svc.trajectory(agent, "s-twice")
    second = await svc.trajectory(agent, "s-twice")  # from the cache of settled sessions' documents
    assert first.status == second.status == 200
    assert first.headers["X-Evalkit-Trajectory-Status"] == second.headers["X-Evalkit-Trajectory-Status"] == "valid"

    def without_times(body: dict) -> dict:  # type: ignore[type-arg]
        extra = dict(body["extra"])
        extra.pop("waited_seconds")
        extra["settlement"] = {k: v for k, v in extra["settlement"].items() if k != "quiet_seconds"}
        return {**body, "extra": extra}

    assert without_times(first.body) == without_times(second.body)
    assert (await svc.trajectory(agent, "s-unknown")).status == 404
