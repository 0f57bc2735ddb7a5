"""Settling over HTTP: partial while a root is open or the quiet period runs, valid after; `?wait=`."""

from __future__ import annotations

import asyncio
import time

from evalkit.trajectory.settle import TraceShape, assess, status_of_pushed
from tests.trajectory_service.conftest import ServiceFactory, chat, root, span


def workflow_root(trace: int, span_id: int, session: str, start_s: float, end_s: float):  # type: ignore[no-untyped-def]
    """A root that gives no sign the agent is done (a chain or workflow span): the quiet period applies."""
    return span(trace, span_id, None, "workflow", start_s, end_s, session__id=session)


def test_assess_rules() -> None:
    complete = [TraceShape("t1", 3, 1, 0, 10_000)]
    assert assess(complete, now=20.0, quiet_period=5).status == "valid"
    assert assess(complete, now=12.0, quiet_period=5).status == "partial"
    assert assess([TraceShape("t1", 3, 0, 1, 10_000)], now=100.0, quiet_period=5).traces_without_root == ("t1",)
    assert assess([TraceShape("t1", 3, 1, 2, 10_000)], now=100.0, quiet_period=5).status == "partial"
    assert assess([], now=0.0, quiet_period=5).status == "unavailable"
    # A root saying the agent is done shortens the quiet period, only once nothing is missing.
    finished = [TraceShape("t1", 3, 1, 0, 10_000, finished_roots=1)]
    assert assess(finished, now=10.6, quiet_period=5).status == "valid"
    assert assess(finished, now=10.2, quiet_period=5).status == "partial"
    assert assess([TraceShape("t1", 3, 1, 1, 10_000, finished_roots=1)], now=10.6, quiet_period=5).status == "partial"
    two = [*finished, TraceShape("t2", 2, 1, 0, 10_000)]
    assert assess(two, now=10.6, quiet_period=5).status == "partial"  # t2's root gives no such sign


def test_a_pushed_trajectory_is_valid_or_invalid_by_validation() -> None:
    good = {"schema_version": "ATIF-v1.5", "session_id": "s", "agent": {"name": "a", "version": "1"},
            "steps": [{"step_id": 1, "source": "user", "message": "hi"}]}
    assert status_of_pushed(good) == ("valid", [])
    status, errors = status_of_pushed({**good, "steps": [{"step_id": 2, "source": "user", "message": "hi"}]})
    assert status == "invalid" and errors


async def test_open_root_is_partial_until_it_arrives_and_wait_says_which(start_service: ServiceFactory) -> None:
    svc = await start_service(settle_quiet_seconds=0.6)
    agent, key = await svc.new_agent()
    # The LLM call arrives first and names the session; its root (span 10) is still running.
    await svc.send(key, [chat(1, 11, 10, 1.0, **{"session.id": "s-open"})])
    reply = await svc.trajectory(agent, "s-open")
    assert reply.status == 200
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "partial"
    assert reply.headers["X-Evalkit-Trajectory-Settled"] == "false"
    assert reply.body["extra"]["settlement"]["traces_without_root"] == [f"{1:032x}"]

    started = time.monotonic()
    reply = await svc.trajectory(agent, "s-open", "?wait=0.8")
    assert 0.75 <= time.monotonic() - started < 3
    assert reply.body["extra"]["status"] == "partial"
    assert reply.body["extra"]["settled"] is False and reply.body["extra"]["wait_ran_out"] is True
    assert reply.body["extra"]["waited_seconds"] >= 0.75

    async def root_ends_later() -> None:
        await asyncio.sleep(0.3)
        await svc.send(key, [workflow_root(1, 10, "s-open", 0.5, 2.0)])

    sender = asyncio.create_task(root_ends_later())
    started = time.monotonic()
    reply = await svc.trajectory(agent, "s-open", "?wait=10")
    elapsed = time.monotonic() - started
    await sender
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid"
    assert reply.body["extra"]["settled"] is True and reply.body["extra"]["wait_ran_out"] is False
    # Root after 0.3 s, then the 0.6 s quiet period: settled well before the 10 s wait ran out.
    assert 0.85 <= elapsed < 5, elapsed


async def test_quiet_period_then_valid(start_service: ServiceFactory) -> None:
    # Long enough that the reads below still fall inside the quiet period on a loaded machine.
    svc = await start_service(settle_quiet_seconds=3.0)
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0), workflow_root(1, 10, "s-quiet", 0.5, 2.0)])
    reply = await svc.trajectory(agent, "s-quiet")
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "partial"
    assert any("quiet period" in r for r in reply.body["extra"]["settlement"]["reasons"])
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert listed[0]["status"] == "partial"
    reply = await svc.trajectory(agent, "s-quiet", "?wait=10")
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid"
    assert reply.body["extra"]["waited_seconds"] < 4.5
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert listed[0]["status"] == "valid"


async def test_wait_for_a_session_that_has_not_arrived_yet(start_service: ServiceFactory) -> None:
    svc = await start_service(settle_quiet_seconds=0.2)
    agent, key = await svc.new_agent()

    async def later() -> None:
        await asyncio.sleep(0.4)
        await svc.send(key, [chat(1, 11, 10, 1.0), root(1, 10, "s-later", 0.5, 2.0)])

    sender = asyncio.create_task(later())
    reply = await svc.trajectory(agent, "s-later", "?wait=5")
    await sender
    assert reply.status == 200 and reply.body["extra"]["status"] == "valid"
    late = await svc.trajectory(agent, "never", "?wait=0.3")
    assert late.status == 404 and "waited" in late.body["error"]["message"]
    assert (await svc.trajectory(agent, "s-later", "?wait=-1")).status == 400


async def test_a_finished_agent_run_settles_without_the_quiet_period(start_service: ServiceFactory) -> None:
    svc = await start_service(settle_quiet_seconds=30.0)
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0), root(1, 10, "s-done", 0.5, 2.0)])
    reply = await svc.trajectory(agent, "s-done", "?wait=10")
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid", reply.body["extra"]
    assert reply.body["extra"]["waited_seconds"] < 5  # not the 30 s quiet period
    # A workflow's run (GenAI `invoke_workflow`: OpenLIT's crew, graph and openai-agents roots), a Strands
    # swarm's or graph's, OpenLIT's pydantic-ai `Agent.run` (`execute_task`) say so too.
    for trace, operation in enumerate(("invoke_workflow", "invoke_swarm", "invoke_graph", "execute_task"), start=3):
        session = f"s-{operation}"
        await svc.send(key, [chat(trace, trace * 10 + 1, trace * 10, 1.0, **{"session.id": session}),
                             span(trace, trace * 10, None, f"{operation} crew", 0.5, 2.0, session__id=session,
                                  gen_ai__operation__name=operation)])
        reply = await svc.trajectory(agent, session, "?wait=10")
        assert reply.headers["X-Evalkit-Trajectory-Status"] == "valid", (operation, reply.body["extra"])
        assert reply.body["extra"]["waited_seconds"] < 5
    # A second turn (a new trace) still running: partial again until its root arrives.
    await svc.send(key, [chat(2, 21, 20, 3.0, **{"session.id": "s-done"})])
    reply = await svc.trajectory(agent, "s-done")
    assert reply.headers["X-Evalkit-Trajectory-Status"] == "partial"
