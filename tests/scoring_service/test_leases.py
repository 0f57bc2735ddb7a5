"""Leases: an expired lease taken by another runner refuses the old one, which is told how to resume."""

from __future__ import annotations

import asyncio
import uuid

from tests.scoring_service.conftest import Scoring, call


async def _experiment(s: Scoring, lease: dict[str, object] | None = None) -> int:
    agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [
        {"id": "a", "input": "x", "expected": "y", "evaluators": ["exact"]},
        {"id": "b", "input": "x", "expected": "y", "evaluators": ["exact"]}]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme", "lease": lease})
    assert status == 201, exp
    return int(exp["experiment_id"])


def _run(holder: str, case: str, attempt: int = 1, status: str = "completed") -> dict[str, object]:
    return {"lease_holder": holder, "case_id": case, "repetition": 0, "attempt": attempt,
            "session_id": uuid.uuid4().hex, "status": status, "answer": "y"}


async def test_lost_lease_and_resume(scoring: Scoring) -> None:
    s = scoring
    # A lease long enough to outlast two requests on a loaded host (the suite runs in two processes).
    eid = await _experiment(s, {"holder": "old", "ttl_seconds": 1.5})
    status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("old", "a"))
    assert status == 201, run
    # While the lease is live, another runner is refused.
    status, err = await call(s, "POST", f"/api/experiments/{eid}/lease", {"holder": "new", "ttl_seconds": 60})
    assert status == 409 and "being run by old" in err["error"]["message"]
    await asyncio.sleep(1.6)
    status, lease = await call(s, "POST", f"/api/experiments/{eid}/lease", {"holder": "new", "ttl_seconds": 60})
    assert status == 200 and lease["acquired"] and lease["holder"] == "new"
    status, err = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("old", "b"))
    assert status == 409
    assert "lost the lease" in err["error"]["message"] and f"resume={eid}" in err["error"]["message"]
    assert f"--resume {eid}" in err["error"]["message"]
    # Renewal keeps it; the new holder records.
    status, lease = await call(s, "POST", f"/api/experiments/{eid}/lease", {"holder": "new", "ttl_seconds": 60})
    assert lease["renewed"]
    status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("new", "b", status="failed"))
    assert status == 201

    # The runner stops; the experiment is marked failed and resumed later: only b is left.
    status, got = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "failed", "lease_holder": "new"})
    assert status == 200 and got["status"] == "failed" and got["can_resume"]
    status, err = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("new", "b", 2))
    assert status == 409 and "failed" in err["error"]["message"]
    status, resumed = await call(s, "POST", f"/api/experiments/{eid}/resume", {"holder": "third"})
    assert status == 200, resumed
    assert resumed["status"] == "running" and resumed["pending"] == [{"case_id": "b", "repetition": 0, "attempt": 2}]
    status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("third", "b", 2))
    assert status == 201
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] == "running" and got["cases"][1]["runs"][0]["attempts"] == 2
    status, got = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "evaluating", "lease_holder": "third"})
    assert status == 200 and got["status"] == "evaluating", got
    status, err = await call(s, "POST", f"/api/experiments/{eid}/resume", {"holder": "third"})
    assert status == 409 and f"evalkit evaluate {eid}" in err["error"]["message"]
    status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
    assert result["status"] == "completed"
    status, err = await call(s, "POST", f"/api/experiments/{eid}/lease", {"holder": "x"})
    assert status == 409 and "completed" in err["error"]["message"]


async def test_cancel_releases_and_refuses_runs(scoring: Scoring) -> None:
    s = scoring
    eid = await _experiment(s, {"holder": "h", "ttl_seconds": 60})
    status, err = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "completed", "lease_holder": "h"})
    assert status == 409 and "can move to" in err["error"]["message"]
    status, got = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "cancelled", "model": "m2"})
    assert status == 200 and got["status"] == "cancelled" and got["model"] == "m2" and got["lease"] is None
    status, err = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("h", "a"))
    assert status == 409 and "cancelled" in err["error"]["message"]


async def test_runs_recorded_before_settling_are_refreshed_then_or_when_scored(scoring: Scoring) -> None:
    """The SDK records a run as its task returns (`trajectory_pending`: the session is not read then) and
    again once it settled; a run whose second record never came (its runner was killed) is read when scored."""
    s = scoring
    eid = await _experiment(s, {"holder": "h", "ttl_seconds": 60})
    status, made = await call(s, "POST", "/api/agents/bot@acme/keys", {})
    assert status == 201, made
    key = str(made["key"])
    a, b = _run("h", "a"), _run("h", "b")
    for body in (a, b):
        status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", {**body, "trajectory_pending": True})
        assert status == 201 and run["trajectory_status"] == "unavailable", run
    for body in (a, b):
        await asyncio.to_thread(s.send_session, key, str(body["session_id"]), "y")
    await asyncio.sleep(0.5)  # the 0.2 s quiet period: the sessions settle
    # a: the second record (settled) reads its session now.
    status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", a)
    assert status == 200 and run["duplicate"] and run["trajectory_status"] == "valid", run
    # b's runner died before its second record: scoring reads it.
    status, _ = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "evaluating", "lease_holder": "h"})
    assert status == 200
    status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
    assert status == 200, result
    status, runs = await call(s, "GET", f"/api/experiments/{eid}/runs")
    assert {r["case_id"]: r["trajectory_status"] for r in runs["runs"]} == {"a": "valid", "b": "valid"}


async def test_a_lease_given_back_with_runs_left_stops_the_experiment_and_says_why(scoring: Scoring) -> None:
    """Before, the reason stayed "lease taken by <holder>" after the runner had gone (Ctrl-C), as if it still ran;
    then the experiment stayed `running`, which every list showed as at work. It is `stopped`, as a budget stops it."""
    s = scoring
    eid = await _experiment(s, {"holder": "sdk:host:1:ab", "ttl_seconds": 60})
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status_reason"] == "lease taken by sdk:host:1:ab"
    status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("sdk:host:1:ab", "a"))
    assert status == 201, run
    status, out = await call(s, "DELETE", f"/api/experiments/{eid}/lease?holder=sdk:host:1:ab&reason=interrupted")
    assert status == 200 and out == {"released": True}
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] == "stopped" and got["lease"] is None and got["can_resume"]
    assert got["status_reason"] == (
        f"interrupted: sdk:host:1:ab gave its lease back with 1 of 2 planned runs not finished, and nobody runs it "
        f"now; resume with `run_experiment(..., resume={eid})` or `evalkit run … --resume {eid}`")

    # Resumed by another runner, it runs again; given back without a reason, it is stopped again. A runner
    # that is not the holder changes nothing.
    status, resumed = await call(s, "POST", f"/api/experiments/{eid}/resume", {"holder": "other"})
    assert status == 200 and resumed["status"] == "running", resumed
    status, out = await call(s, "DELETE", f"/api/experiments/{eid}/lease?holder=nobody")
    assert out == {"released": False}
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] == "running", got
    status, out = await call(s, "DELETE", f"/api/experiments/{eid}/lease?holder=other")
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] == "stopped", got
    assert got["status_reason"].startswith("stopped: other gave its lease back with 1 of 2"), got["status_reason"]
    status, err = await call(s, "DELETE", f"/api/experiments/{eid}/lease?holder=other&reason={'x' * 301}")
    assert status == 400 and "at most 300" in err["error"]["message"]


async def test_a_lease_given_back_with_every_run_done_moves_on_to_scoring(scoring: Scoring) -> None:
    s = scoring
    eid = await _experiment(s, {"holder": "r", "ttl_seconds": 60})
    for case in ("a", "b"):
        status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", _run("r", case))
        assert status == 201, run
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] == "running"  # the runner holds the lease: it says when running is over
    status, out = await call(s, "DELETE", f"/api/experiments/{eid}/lease?holder=r&reason=interrupted")
    assert status == 200 and out == {"released": True}
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] in ("evaluating", "completed") and "lease taken" not in got["status_reason"], got


async def test_a_lease_that_ran_out_is_not_shown_as_taken(scoring: Scoring) -> None:
    """Before: after kill -9 the runner gives nothing back, and once its lease had run out `experiments show` (and
    the UI, and the list) still said "lease taken by sdk:…", as if it ran. Now the reason says nobody runs it."""
    s = scoring
    # A lease long enough to be read as taken on a loaded host (0.3 s ran out before the first read in CI's two
    # processes), then read until it has run out.
    eid = await _experiment(s, {"holder": "sdk:host:9:cd", "ttl_seconds": 2.0})
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status_reason"] == "lease taken by sdk:host:9:cd"
    for _ in range(100):
        await asyncio.sleep(0.1)
        status, got = await call(s, "GET", f"/api/experiments/{eid}")
        if got["lease"]["expired"]:
            break
    assert got["status"] == "running" and got["lease"]["expired"] and got["can_resume"]
    reason = got["status_reason"]
    assert reason.startswith("nobody runs it now: the lease of sdk:host:9:cd ran out at "), reason
    assert reason.endswith(f"`evalkit run … --resume {eid}`"), reason
    status, listed = await call(s, "GET", "/api/experiments")
    assert [x["status_reason"] for x in listed["experiments"] if x["experiment_id"] == eid] == [reason]
    # Taken over, it names the runner that holds it now.
    status, _ = await call(s, "POST", f"/api/experiments/{eid}/lease", {"holder": "sdk:host:10:ef", "ttl_seconds": 60})
    assert status == 200
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert status == 200 and got["status_reason"] == "lease taken by sdk:host:10:ef" and not got["lease"]["expired"]
