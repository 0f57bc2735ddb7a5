"""A run's model: the task's (or the experiment's), else the model its session's trajectory names. Before, a run
whose task reported no model was recorded with none although its trajectory knew it: the CSV's model column was
empty, the experiment page said "–", and the SDK's budget said "N run(s) used a model which has no price" without
naming the model to price."""

from __future__ import annotations

import asyncio
import uuid

from tests.scoring_service.conftest import Scoring, call


async def test_a_run_without_a_model_takes_its_trajectorys(scoring: Scoring) -> None:
    s = scoring
    agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
    cases = ("settled", "pending", "told", "pushed", "refetched")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [{"id": c, "input": "x", "expected": "y"} for c in cases]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme",
                                                            "lease": {"holder": "h", "ttl_seconds": 60}})
    assert status == 201, exp
    eid = exp["experiment_id"]
    status, made = await call(s, "POST", f"/api/agents/{agent}/keys", {})
    key = str(made["key"])

    def body(case: str, **more: object) -> dict[str, object]:
        return {"lease_holder": "h", "case_id": case, "repetition": 0, "session_id": f"{case}-{uuid.uuid4().hex}",
                "status": "completed", "answer": "y", **more}

    runs = {case: body(case) for case in ("settled", "pending")}
    told, refetched = body("told", model="my-own-name"), body("refetched")
    # "pending" is recorded as the SDK records a run the moment its task returns, before its session is read;
    # "refetched" too, by a runner that died before its second record.
    for sent in (runs["pending"], refetched):
        status, first = await call(s, "POST", f"/api/experiments/{eid}/runs", {**sent, "trajectory_pending": True})
        assert status == 201 and first["model"] is None, first
    for sent in (runs["settled"], runs["pending"], told, refetched):
        await asyncio.to_thread(s.send_session, key, str(sent["session_id"]), "y")  # a call of gpt-4o
    await asyncio.sleep(0.5)  # the 0.2 s quiet period: the sessions settle
    recorded = {}
    for case, sent in (*runs.items(), ("told", told)):
        status, recorded[case] = await call(s, "POST", f"/api/experiments/{eid}/runs", sent)
        assert status in (200, 201) and recorded[case]["trajectory_status"] == "valid", recorded[case]
    assert {case: run["model"] for case, run in recorded.items()} == {
        "settled": "gpt-4o", "pending": "gpt-4o", "told": "my-own-name"}  # what the task says comes first
    pushed = {"schema_version": "ATIF-v1.6", "session_id": "p", "agent": {"name": "bot", "version": "1",
                                                                          "model_name": "claude-sonnet-4"},
              "steps": [{"step_id": 1, "source": "user", "message": "x"},
                        {"step_id": 2, "source": "agent", "message": "y", "model_name": "claude-sonnet-4"}]}
    status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", body("pushed", trajectory=pushed))
    assert status == 201 and run["model"] == "claude-sonnet-4", run
    status, result = await call(s, "POST", f"/api/experiments/{eid}/trajectories/refetch",
                                {"statuses": ["unavailable"]})
    assert status == 200 and result["refetched"] == 1, result
    status, page = await call(s, "GET", f"/api/experiments/{eid}/runs?case_id=refetched")
    assert [r["model"] for r in page["runs"]] == ["gpt-4o"], page
