"""The whole life of an experiment over HTTP, against the real engine, with hand-checked numbers."""

from __future__ import annotations

import asyncio
import math
import time
import uuid

from tests.scoring_service.conftest import Scoring, call, sha

CASES = [
    {"id": "c1", "input": {"q": "6*7"}, "expected": "42", "evaluators": ["exact", "py_len"], "tags": ["smoke"]},
    {"id": "c2", "input": {"q": "6*7 again"}, "expected": "42", "evaluators": ["exact", "py_len"]},
    {"id": "c3", "input": {"q": "with a file"}, "expected": "42", "evaluators": ["exact", "py_len"],
     "files": [{"name": "notes.txt", "sha256": sha(b"fixture bytes")}]},
    {"id": "c4", "input": {"q": "missing file"}, "expected": "42",
     "files": [{"name": "gone.bin", "sha256": sha(b"never uploaded")}]},
]


async def test_experiment_life(scoring: Scoring) -> None:
    s = scoring
    agent, key = await asyncio.to_thread(s.new_agent, "bot", "acme")
    status, blob = await asyncio.to_thread(s.raw, "PUT", f"/api/workspaces/acme/blobs/{sha(b'fixture bytes')}",
                                           b"fixture bytes")
    assert status == 201, blob
    status, body = await call(s, "POST", "/api/datasets/qa@acme", {"cases": CASES, "git_revision": "abc123"})
    assert status == 201, body
    assert body["cases"] == 4 and body["missing_files"][0]["case_id"] == "c4"
    version = body["version"]
    status, again = await call(s, "POST", "/api/datasets/qa@acme", {"cases": CASES, "git_revision": "abc123"})
    assert status == 200 and again["version"] == version and not again["created"]

    holder = "sdk:test:" + uuid.uuid4().hex
    status, exp = await call(s, "POST", "/api/experiments", {
        "agent": agent, "dataset": "qa@acme", "repetitions": 2, "model": "gpt-4o", "evaluators": ["py_len"],
        "lease": {"holder": holder, "ttl_seconds": 60}})
    assert status == 201, exp
    eid = exp["experiment_id"]
    assert exp["cases"] == ["c1", "c2", "c3"] and exp["runs_planned"] == 6 and exp["status"] == "running"
    assert [d["case_id"] for d in exp["dropped"]] == ["c4"] and "gone.bin" in exp["dropped"][0]["reason"]
    assert exp["config"]["dataset_version"] == version and exp["config"]["git_revision"] == "abc123"
    assert exp["config"]["code_evaluators"] == ["py_len"]

    # Runs: c1 passes twice; c2 fails then passes; c3 times out, then fails and is retried into a pass.
    plan: list[tuple[str, int, int, str, str | None]] = [
        ("c1", 0, 1, "completed", "42"), ("c1", 1, 1, "completed", "42"),
        ("c2", 0, 1, "completed", "41"), ("c2", 1, 1, "completed", "42"),
        ("c3", 0, 1, "timeout", None), ("c3", 1, 1, "failed", None), ("c3", 1, 2, "completed", "42"),
    ]
    sessions: dict[tuple[str, int, int], str] = {}
    for case, rep, attempt, st, answer in plan:
        sid = uuid.uuid4().hex
        sessions[(case, rep, attempt)] = sid
        if st == "completed":
            await asyncio.to_thread(s.send_session, key, sid, answer or "", "calculator")
    await asyncio.sleep(0.5)  # past the quiet period: sessions settle
    for case, rep, attempt, st, answer in plan:
        body = {"lease_holder": holder, "case_id": case, "repetition": rep, "attempt": attempt,
                "session_id": sessions[(case, rep, attempt)], "status": st, "answer": answer,
                "error": None if st == "completed" else f"{st} on purpose",
                "started_at": time.time() - 2, "ended_at": time.time()}
        status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", body)
        assert status == 201, run
        if st == "completed":
            assert run["trajectory_status"] == "valid", run
            assert run["metrics"]["input_tokens"] == 100 and run["metrics"]["tool_calls"] >= 0
        else:
            assert run["trajectory_status"] == "unavailable"
        if (case, rep, attempt) == ("c1", 0, 1):
            status, dup = await call(s, "POST", f"/api/experiments/{eid}/runs", body)
            assert status == 200 and dup["duplicate"] and dup["run_id"] == run["run_id"]

    status, used = await call(s, "GET", f"/api/experiments/{eid}/sessions/{sessions[('c2', 0, 1)]}")
    assert used["used"] and used["run"]["case_id"] == "c2"
    status, pending = await call(s, "GET", f"/api/experiments/{eid}/runs/pending")
    assert pending["runs"] == [{"case_id": "c3", "repetition": 0, "attempt": 2}]  # the timeout is not finished
    status, all_runs = await call(s, "GET", f"/api/experiments/{eid}/runs?attempts=all")
    assert len(all_runs["runs"]) == 7 and sum(r["final"] for r in all_runs["runs"]) == 6

    # A run's trajectory, as stored.
    c1 = next(r for r in all_runs["runs"] if r["case_id"] == "c1")
    status, traj = await call(s, "GET", f"/api/experiments/{eid}/runs/{c1['run_id']}/trajectory")
    assert status == 200 and traj["trajectory_status"] == "valid" and traj["trajectory"]["steps"]

    # Every slot has a final attempt (the timeout counts as a failure), but the runner holds the lease: the
    # experiment runs until the runner says it is done.
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] == "running" and not got["can_resume"]
    status, got = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "evaluating", "lease_holder": holder})
    assert status == 200 and got["status"] == "evaluating" and got["can_resume"], got
    status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
    assert status == 200, result
    assert result["scored"] == 5 and result["errors"] == 0 and result["pending_code_evaluators"] == ["py_len"]

    # Python evaluators, published by the SDK: length of the answer == 2.
    status, todo = await call(s, "GET", f"/api/experiments/{eid}/runs/to-score?evaluator=py_len")
    assert len(todo["runs"]) == 5 and all(r["evaluators"] == ["py_len"] for r in todo["runs"])
    evaluations = [{"run_id": r["run_id"], "evaluator": "py_len", "score": float(len(r["answer"]) == 2),
                    "passed": len(r["answer"]) == 2} for r in todo["runs"]]
    status, pub = await call(s, "POST", f"/api/experiments/{eid}/evaluations",
                             {"lease_holder": holder, "evaluations": evaluations})
    assert status == 201 and pub["recorded"] == 5
    status, bad = await call(s, "POST", f"/api/experiments/{eid}/evaluations",
                             {"lease_holder": holder, "evaluations": [{**evaluations[0], "evaluator": "nope"}]})
    assert status == 400 and "declare" in bad["error"]["message"]

    status, card = await call(s, "GET", f"/api/experiments/{eid}/scorecard")
    sc = card["scorecard"]
    exact = next(e for e in sc["evaluators"] if e["evaluator"] == "exact")
    # Hand-checked: c1 [1,1], c2 [0,1], c3 [0 (timeout, imputed), 1] → 4 of 6.
    assert exact["kind"] == "pass_fail" and exact["n"] == 6 and exact["passed"] == 4
    assert math.isclose(exact["mean"], 4 / 6)
    assert exact["imputed_failures"] == 1 and exact["unscored"] == 0
    assert math.isclose(exact["pass_at_k"]["1"], (1 + 0.5 + 0.5) / 3)
    assert math.isclose(exact["pass_at_k"]["2"], 1.0)
    assert math.isclose(exact["pass_hat_k"]["2"], 1 / 3)
    assert exact["ci_low"] < 4 / 6 < exact["ci_high"]
    assert sc["status_counts"]["completed"] == 5 and sc["status_counts"]["timeout"] == 1
    assert sc["trajectory_status_counts"]["valid"] == 5 and sc["trajectory_status_counts"]["unavailable"] == 1
    assert sc["input_tokens"]["total"] is None and sc["input_tokens"]["known_total"] == 500  # the timeout has none

    # Scored: complete, with a timed-out run that may be run again by resuming.
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["status"] == "completed" and got["can_resume"]
    status, resumed = await call(s, "POST", f"/api/experiments/{eid}/resume", {"holder": holder})
    assert status == 200 and resumed["pending"] == [{"case_id": "c3", "repetition": 0, "attempt": 2}]
    sid = uuid.uuid4().hex
    await asyncio.to_thread(s.send_session, key, sid, "42")
    await asyncio.sleep(0.5)
    status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", {
        "lease_holder": holder, "case_id": "c3", "repetition": 0, "attempt": 2, "session_id": sid,
        "status": "completed", "answer": "42"})
    assert status == 201
    status, got = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "evaluating", "lease_holder": holder})
    assert got["status"] == "evaluating" and got["scoring"]["unscored"] == {"exact": 1, "py_len": 1}
    status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
    assert result["scored"] == 1 and result["status"] == "evaluating"
    status, pub = await call(s, "POST", f"/api/experiments/{eid}/evaluations", {"lease_holder": holder, "evaluations": [
        {"run_id": run["run_id"], "evaluator": "py_len", "score": 1.0, "passed": True}]})
    assert pub["status"] == "completed"
    status, got = await call(s, "GET", f"/api/experiments/{eid}")
    assert got["progress"] == {"planned": 6, "recorded": 6, "completed": 6, "failed": 0, "timeout": 0,
                               "cancelled": 0, "pending": 0}
    assert math.isclose(got["scores"]["exact"], 5 / 6) and not got["can_resume"]

    # Re-score: a new version of every service evaluation; the scorecard stays the same.
    before = s.store.query(f"SELECT count(), uniqExact(version) FROM evaluations WHERE experiment_id = {eid} "
                           "AND evaluator = 'exact'")[0]
    status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {"rescore": True})
    assert result["scored"] == 6
    after = s.store.query(f"SELECT count(), uniqExact(version) FROM evaluations WHERE experiment_id = {eid} "
                          "AND evaluator = 'exact'")[0]
    assert after[0] == before[0] + 6 and after[1] == before[1] + 1

    # Compared with itself: no difference. Gated against itself: refused (it would pass whatever changed); a gate's
    # floors and pair counts against another baseline: tests/scoring/test_scoring_compare.py, test_experiment_truths.py.
    status, comparison = await call(s, "GET", f"/api/experiments/{eid}/compare?baseline_id={eid}")
    assert status == 200 and comparison["evaluators"][0]["verdict"] == "no significant difference"
    status, gate = await call(s, "POST", f"/api/experiments/{eid}/gate", {"baseline_id": eid, "min_score": 0.9})
    assert status == 400 and "gated against itself" in gate["error"]["message"], gate
    status, text = await asyncio.to_thread(s.raw, "GET", f"/api/experiments/{eid}/scorecard?format=markdown", None)
    assert status == 200 and b"exact" in text

    status, listing = await call(s, "GET", "/api/experiments?agent=bot@acme")
    assert [e["experiment_id"] for e in listing["experiments"]] == [eid]


async def test_incomplete_experiment_refuses_comparison(scoring: Scoring) -> None:
    s = scoring
    agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [{"id": "a", "input": "x", "expected": "y",
                                                              "evaluators": ["exact"]}]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme"})
    eid = exp["experiment_id"]
    status, err = await call(s, "GET", f"/api/experiments/{eid}/compare?baseline_id={eid}")
    message = err["error"]["message"]
    assert status == 409 and f"--resume {eid}" in message and "0 of 1 planned" in message
    status, err = await call(s, "POST", f"/api/experiments/{eid}/runs", {
        "case_id": "a", "repetition": 0, "session_id": "s", "status": "completed", "answer": "y"})
    assert status == 409 and "lease" in err["error"]["message"]


async def test_re_reading_trajectories_leaves_a_run_whose_session_another_run_claimed_without_one(
        scoring: Scoring) -> None:
    """A run recorded with a session id another run of the experiment already had fails; reading the
    experiment's trajectories again must not then give it that other run's session."""
    s = scoring
    agent, key = await asyncio.to_thread(s.new_agent, "bot", "acme")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [
        {"id": "a", "input": "x", "expected": "y", "evaluators": ["exact"]},
        {"id": "b", "input": "x", "expected": "y", "evaluators": ["exact"]}]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme",
                                                              "lease": {"holder": "runner", "ttl_seconds": 60}})
    assert status == 201, exp
    eid = exp["experiment_id"]
    shared = uuid.uuid4().hex
    for case in ("a", "b"):  # recorded before the session's spans came: no trajectory yet
        status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", {
            "lease_holder": "runner", "case_id": case, "repetition": 0, "attempt": 1, "session_id": shared,
            "status": "completed", "answer": "y"})
        assert status == 201, run
    await asyncio.to_thread(s.send_session, key, shared, "y")
    await asyncio.sleep(0.5)  # the service's quiet period is 0.2 s
    status, result = await call(s, "POST", f"/api/experiments/{eid}/trajectories/refetch", {})
    assert status == 200, result
    status, listed = await call(s, "GET", f"/api/experiments/{eid}/runs")
    runs = {r["case_id"]: r for r in listed["runs"]}
    assert runs["a"]["trajectory_status"] == "valid", runs["a"]
    assert runs["b"]["status"] == "failed" and runs["b"]["trajectory_status"] == "unavailable", runs["b"]
    assert result["changed"] == {"unavailable->valid": 1}
