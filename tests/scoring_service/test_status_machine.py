"""The status machine against a runner: retried attempts after every slot has one, when running is over,
and what blocks scoring (runs not yet run) and what does not (failed and timed-out runs)."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

from tests.scoring_service.conftest import Scoring, call


async def _experiment(s: Scoring, cases: list[str], evaluators: list[str], lease: dict[str, Any]) -> int:
    name = f"d{uuid.uuid4().hex[:6]}"
    await call(s, "POST", f"/api/datasets/{name}@acme", {"cases": [
        {"id": c, "input": "x", "expected": "y", "evaluators": evaluators} for c in cases]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": "bot@acme", "dataset": f"{name}@acme",
                                                             "lease": lease})
    assert status == 201 and exp["status"] == "running", exp
    return int(exp["experiment_id"])


async def _record(s: Scoring, eid: int, holder: str, case: str, attempt: int = 1, status: str = "completed"
                  ) -> tuple[int, Any]:
    return await call(s, "POST", f"/api/experiments/{eid}/runs", {
        "lease_holder": holder, "case_id": case, "repetition": 0, "attempt": attempt,
        "session_id": uuid.uuid4().hex, "status": status, "answer": "y" if status == "completed" else None,
        "error": None if status == "completed" else f"{status} on purpose"})


async def _status(s: Scoring, eid: int) -> dict[str, Any]:
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert status == 200, got
    return dict(got)


async def test_a_lease_holder_records_retries_after_every_slot_has_an_attempt(scoring: Scoring) -> None:
    s = scoring
    await asyncio.to_thread(s.new_agent, "bot", "acme")
    # Nothing to score: the service used to go straight to completed and refuse the retry.
    eid = await _experiment(s, ["a", "b"], [], {"holder": "h", "ttl_seconds": 60})
    assert (await _record(s, eid, "h", "a", 1, "failed"))[0] == 201
    assert (await _record(s, eid, "h", "b", 1))[0] == 201
    got = await _status(s, eid)
    assert got["status"] == "running" and got["lease"]["holder"] == "h"  # the runner says when it is done
    status, run = await _record(s, eid, "h", "a", 2)
    assert status == 201, run
    status, err = await _record(s, eid, "other", "a", 3)
    assert status == 409 and "lease" in err["error"]["message"]
    status, runs = await call(s, "GET", f"/api/experiments/{eid}/runs?attempts=all")
    assert sorted((r["case_id"], r["attempt"], r["status"], r["final"]) for r in runs["runs"]) == [
        ("a", 1, "failed", False), ("a", 2, "completed", True), ("b", 1, "completed", True)]
    status, done = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "evaluating", "lease_holder": "h"})
    assert status == 200 and done["status"] == "completed" and done["lease"] is None, done
    status, err = await _record(s, eid, "h", "b", 2)
    assert status == 409 and "completed" in err["error"]["message"]


async def test_without_a_live_lease_the_service_moves_on_by_itself(scoring: Scoring) -> None:
    s = scoring
    await asyncio.to_thread(s.new_agent, "bot", "acme")
    # The runner's lease expires before its last run (nobody took it over, so it may still record).
    # Leases of 2 s: a loaded machine took more than 0.5 s between a record and the next status.
    eid = await _experiment(s, ["a", "b"], ["exact"], {"holder": "h", "ttl_seconds": 2})
    assert (await _record(s, eid, "h", "a"))[0] == 201
    assert (await _status(s, eid))["status"] == "running"
    await asyncio.sleep(2.1)
    assert (await _record(s, eid, "h", "b"))[0] == 201
    assert (await _status(s, eid))["status"] == "evaluating"
    # A runner killed after its last run leaves the experiment running; scoring it moves it on.
    killed = await _experiment(s, ["a"], ["exact"], {"holder": "k", "ttl_seconds": 2})
    assert (await _record(s, killed, "k", "a"))[0] == 201
    assert (await _status(s, killed))["status"] == "running"
    await asyncio.sleep(2.1)
    status, result = await call(s, "POST", f"/api/experiments/{killed}/evaluate", {})
    assert status == 200 and result["scored"] == 1 and result["status"] == "completed", result


async def test_failed_runs_are_results_and_only_runs_not_yet_run_block_scoring(scoring: Scoring) -> None:
    s = scoring
    await asyncio.to_thread(s.new_agent, "bot", "acme")
    eid = await _experiment(s, ["a", "b", "c"], ["exact"], {"holder": "h", "ttl_seconds": 60})
    assert (await _record(s, eid, "h", "a", status="failed"))[0] == 201
    assert (await _record(s, eid, "h", "b", status="timeout"))[0] == 201
    got = await _status(s, eid)
    assert got["progress"]["recorded"] == 2 and got["progress"]["pending"] == 1, got["progress"]
    status, err = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
    message = err["error"]["message"]
    assert status == 409 and f"experiment {eid} has 1 run(s) not yet run" in message, message
    assert f"resume={eid}" in message and "partial" in message
    status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {"partial": True})
    assert status == 200 and result["scored"] == 0, result
    assert (await _record(s, eid, "h", "c"))[0] == 201
    # Every slot has a final attempt; two of them failed: scoring needs no "partial".
    status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
    assert status == 200 and result["scored"] == 1 and result["status"] == "running", result
    status, done = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "evaluating", "lease_holder": "h"})
    assert status == 200 and done["status"] == "completed", done
    assert done["progress"]["pending"] == 0 and done["progress"]["failed"] == 1
    status, card = await call(s, "GET", f"/api/experiments/{eid}/scorecard")
    (exact,) = card["scorecard"]["evaluators"]
    assert (exact["n"], exact["passed"], exact["imputed_failures"]) == (3, 1, 2)
