"""The server's default LLM judge against an OpenAI-compatible endpoint served here (malformed verdicts
included), and a harness agent served here: driven with its concurrency, settled, scored; interrupted by
a shutdown and resumed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from aiohttp import web

from tests.scoring_service.conftest import Scoring, call, serve_app, start_service

VERDICTS = {
    "good": ['{"passed": true, "score": 1, "explanation": "right"}'],
    "bad": ['{"passed": false, "score": 0, "explanation": "wrong"}'],
    "flaky": ["I think it is fine!", '{"passed": true, "score": 0.8, "explanation": "fine"}'],
    "garbled": ["nope", "still nope", "```not json```"],
}


class Judge:
    def __init__(self) -> None:
        self.seen: dict[str, int] = {}
        self.keys: set[str] = set()

    async def handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.keys.add(request.headers.get("Authorization", ""))
        text = json.dumps(body["messages"])
        kind = next(k for k in VERDICTS if f"ANSWER-{k}" in text)
        n = self.seen.get(kind, 0)
        self.seen[kind] = n + 1
        replies = VERDICTS[kind]
        return web.json_response({"id": "x", "object": "chat.completion", "model": body["model"], "choices": [
            {"index": 0, "message": {"role": "assistant", "content": replies[min(n, len(replies) - 1)]},
             "finish_reason": "stop"}], "usage": {"prompt_tokens": 50, "completion_tokens": 10}})


async def test_default_judge_with_malformed_verdicts(tmp_path: Path) -> None:
    judge = Judge()
    app = web.Application()
    app.router.add_post("/v1/chat/completions", judge.handle)
    url, runner = await serve_app(app)
    s = await start_service(tmp_path, extra={"judge_base_url": url + "/v1", "judge_model": "judge-model",
                                             "judge_api_key": "server-key"})
    try:
        agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
        cases = [{"id": k, "input": "q", "rubric": "Is it right?"} for k in VERDICTS]
        await call(s, "POST", "/api/datasets/d@acme", {"cases": cases})
        status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme",
                                                                 "lease": {"holder": "h"}})
        assert status == 201 and exp["config"]["judge"]["model"] == "judge-model"
        eid = exp["experiment_id"]
        for k in VERDICTS:
            status, _run = await call(s, "POST", f"/api/experiments/{eid}/runs", {
                "lease_holder": "h", "case_id": k, "repetition": 0, "session_id": k, "status": "completed",
                "answer": f"ANSWER-{k}"})
            assert status == 201
        status, result = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
        assert status == 200 and result["scored"] == 4 and result["errors"] == 1, result
        assert judge.keys == {"Bearer server-key"}
        assert judge.seen == {"good": 1, "bad": 1, "flaky": 2, "garbled": 3}  # resampled, then given up
        status, card = await call(s, "GET", f"/api/experiments/{eid}/scorecard")
        j = card["scorecard"]["evaluators"][0]
        assert j["evaluator"] == "judge" and j["n"] == 3 and j["passed"] == 2 and j["evaluator_errors"] == 1
        assert card["complete"] is False
        status, runs = await call(s, "GET", f"/api/experiments/{eid}/runs")
        garbled = next(r for r in runs["runs"] if r["case_id"] == "garbled")
        rows = s.store.query(f"SELECT error, metadata FROM evaluations WHERE experiment_id = {eid} "
                             f"AND run_id = '{garbled['run_id']}'")
        assert "no usable verdict in 3 attempt(s)" in rows[0][0] and "not json" in rows[0][0]
        assert json.loads(rows[0][1])["usage"] == {"input_tokens": 150, "output_tokens": 30}  # failed tries count
        # A judge the caller brings must build: a bad one is refused at creation.
        status, err = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme",
                                                                 "judge": {"base_url": url}})
        assert status == 400 and "judge" in err["error"]["message"]
    finally:
        await s.service.stop()
        await runner.cleanup()


class Harness:
    def __init__(self, scoring: Scoring | None, key: str) -> None:
        self.scoring = scoring
        self.key = key
        self.active = 0
        self.most = 0
        self.calls: list[dict[str, Any]] = []
        self.hang = asyncio.Event()
        self.hanging = asyncio.Event()

    async def capabilities(self, _request: web.Request) -> web.Response:
        return web.json_response({"name": "test-harness", "tools": ["calculator"], "files": True})

    async def runs(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.calls.append(body)
        self.active += 1
        self.most = max(self.most, self.active)
        try:
            if body["case_id"] == "hangs" and not self.hang.is_set():
                self.hanging.set()
                await self.hang.wait()  # until the test lets it go (after the service was stopped)
            await asyncio.sleep(0.05)
            assert self.scoring is not None
            await asyncio.to_thread(self.scoring.send_session, self.key, body["session_id"], "42")
        finally:
            self.active -= 1
        if body["case_id"] == "broken":
            return web.json_response({"error": "ValueError: no"})
        return web.json_response({"answer": "42"})

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/capabilities", self.capabilities)
        app.router.add_post("/runs", self.runs)
        return app


async def _harness_agent(s: Scoring, url: str) -> str:
    await asyncio.to_thread(s.call, "POST", "/api/workspaces", {"name": "acme"})
    status, agent = await call(s, "POST", "/api/agents", {
        "name": "h", "workspace": "acme", "kind": "harness", "harness_url": url, "max_concurrent_runs": 2,
        "trajectory_wait_seconds": 3})
    assert status == 201, agent
    status, key = await call(s, "POST", "/api/agents/h@acme/keys", {})
    return str(key["key"])


async def _wait_status(s: Scoring, eid: int, wanted: str, seconds: float = 20) -> dict[str, Any]:
    for _ in range(int(seconds / 0.1)):
        _status, got = await call(s, "GET", f"/api/experiments/{eid}")
        if got["status"] == wanted:
            return dict(got)
        await asyncio.sleep(0.1)
    raise AssertionError(f"experiment {eid} stayed {got['status']}: {got}")


async def test_harness_agent_driven_and_scored(scoring: Scoring) -> None:
    s = scoring
    harness = Harness(s, "")
    url, runner = await serve_app(harness.app())
    try:
        harness.key = await _harness_agent(s, url)
        cases = [{"id": f"c{i}", "input": {"n": i}, "expected": "42", "evaluators": ["exact"]} for i in range(5)]
        cases.append({"id": "broken", "input": {}, "expected": "42", "evaluators": ["exact"]})
        await call(s, "POST", "/api/datasets/d@acme", {"cases": cases})
        status, exp = await call(s, "POST", "/api/experiments", {"agent": "h@acme", "dataset": "d@acme",
                                                                 "model": "m1"})
        assert status == 201 and exp["status"] == "running", exp
        assert exp["config"]["capabilities"]["name"] == "test-harness"
        got = await _wait_status(s, exp["experiment_id"], "completed")
        assert got["progress"]["completed"] == 5 and got["progress"]["failed"] == 1
        assert harness.most == 2  # the agent's max_concurrent_runs
        assert {c["model"] for c in harness.calls} == {"m1"} and len({c["session_id"] for c in harness.calls}) == 6
        status, runs = await call(s, "GET", f"/api/experiments/{exp['experiment_id']}/runs")
        by_case = {r["case_id"]: r for r in runs["runs"]}
        assert by_case["c0"]["trajectory_status"] == "valid" and by_case["broken"]["error"] == "ValueError: no"
        assert got["scores"]["exact"] == 5 / 6
        status, _err = await call(s, "POST", f"/api/experiments/{exp['experiment_id']}/lease", {"holder": "sdk"})
        assert status == 409
    finally:
        await runner.cleanup()


async def test_shutdown_marks_runs_in_flight_failed_and_resume_finishes(tmp_path: Path) -> None:
    s = await start_service(tmp_path)
    harness = Harness(s, "")
    url, runner = await serve_app(harness.app())
    try:
        harness.key = await _harness_agent(s, url)
        cases = [{"id": "hangs", "input": 1, "expected": "42", "evaluators": ["exact"]},
                 {"id": "quick", "input": 2, "expected": "42", "evaluators": ["exact"]}]
        await call(s, "POST", "/api/datasets/d@acme", {"cases": cases})
        status, exp = await call(s, "POST", "/api/experiments", {"agent": "h@acme", "dataset": "d@acme"})
        eid = exp["experiment_id"]
        await asyncio.wait_for(harness.hanging.wait(), 10)
        await asyncio.sleep(0.5)
        await s.service.stop()

        s = await start_service(tmp_path, clickhouse_url=s.settings.clickhouse_url)
        # The hung run goes on only now, exporting its session to the server as it runs now: let go while no
        # server listened, it exported to a closed port, its exporter retrying for 10 s (the harness's cleanup
        # waiting on it), a third of this test's time and nothing it checks.
        harness.scoring = s
        harness.hang.set()
        status, got = await call(s, "GET", f"/api/experiments/{eid}")
        assert got["status"] == "failed" and got["status_reason"] == "interrupted: evalkit server shut down"
        assert got["can_resume"]
        status, runs = await call(s, "GET", f"/api/experiments/{eid}/runs")
        hung = next(r for r in runs["runs"] if r["case_id"] == "hangs")
        assert hung["status"] == "failed" and hung["error"] == "interrupted: evalkit server shut down"
        status, resumed = await call(s, "POST", f"/api/experiments/{eid}/resume", {})
        # Every run in flight at shutdown is to run again (the quick one may have been waiting to settle).
        assert status == 200 and "hangs" in [p["case_id"] for p in resumed["pending"]], resumed
        assert all(p["attempt"] == 2 for p in resumed["pending"])
        got = await _wait_status(s, eid, "completed")
        status, runs = await call(s, "GET", f"/api/experiments/{eid}/runs")
        assert got["scores"]["exact"] == 1.0, [(r["case_id"], r["attempt"], r["status"]) for r in runs["runs"]]
    finally:
        await s.service.stop()
        await runner.cleanup()


async def test_harness_experiment_judge_calls_carry_the_key_given_at_creation(scoring: Scoring) -> None:
    """The service scores a harness experiment itself, later: the judge key the experiment was created with
    (credentials by base_url) is kept, encrypted, and every judge call carries it. A judge refusing the call
    is an evaluator error, never a failing score."""
    s = scoring
    seen: list[str] = []

    async def judge(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(request.headers.get("Authorization", ""))
        if request.headers.get("Authorization") != "Bearer caller-key":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        return web.json_response({"id": "x", "object": "chat.completion", "model": body["model"], "choices": [
            {"index": 0, "message": {"role": "assistant", "content": '{"passed": true, "score": 1}'},
             "finish_reason": "stop"}], "usage": {"prompt_tokens": 50, "completion_tokens": 10}})

    judge_app = web.Application()
    judge_app.router.add_post("/v1/chat/completions", judge)
    judge_url, judge_runner = await serve_app(judge_app)
    harness = Harness(s, "")
    url, runner = await serve_app(harness.app())
    try:
        harness.key = await _harness_agent(s, url)
        cases = [{"id": f"c{i}", "input": {"n": i}, "rubric": "Is it 42?", "evaluators": ["judge"]} for i in range(3)]
        await call(s, "POST", "/api/datasets/j@acme", {"cases": cases})
        status, exp = await call(s, "POST", "/api/experiments", {
            "agent": "h@acme", "dataset": "j@acme", "judge": {"base_url": judge_url + "/v1", "model": "jm"},
            "credentials": {judge_url + "/v1/": "caller-key", "http://elsewhere": "unused"}})
        assert status == 201, exp
        assert exp["config"]["stored_credentials"] == [judge_url + "/v1"]  # names only, never the key
        stored = await asyncio.to_thread(s.store.query, "SELECT ciphertext FROM workspace_secrets")
        assert stored and all("caller-key" not in row[0] for row in stored)
        got = await _wait_status(s, exp["experiment_id"], "completed")
        assert got["progress"]["completed"] == 3
        assert seen and set(seen) == {"Bearer caller-key"}
        status, card = await call(s, "GET", f"/api/experiments/{exp['experiment_id']}/scorecard")
        j = card["scorecard"]["evaluators"][0]
        assert (j["evaluator"], j["n"], j["passed"], j["evaluator_errors"]) == ("judge", 3, 3, 0)

        # Another experiment without the key (the stored one is replaced by a wrong one): every call is refused,
        # and those are evaluator errors, not failures: nothing is counted, the scorecard says incomplete.
        status, exp2 = await call(s, "POST", "/api/experiments", {
            "agent": "h@acme", "dataset": "j@acme", "judge": {"base_url": judge_url + "/v1", "model": "jm"},
            "credentials": {judge_url + "/v1": "wrong-key"}})
        assert status == 201, exp2
        # Scored (every run has a verdict, errors included); `evalkit run` exits non-zero on its errors.
        await _wait_status(s, exp2["experiment_id"], "completed")
        status, card = await call(s, "GET", f"/api/experiments/{exp2['experiment_id']}/scorecard")
        j = card["scorecard"]["evaluators"][0]
        assert (j["n"], j["passed"], j["evaluator_errors"], j["ci_low"]) == (0, None, 3, None)
        assert card["complete"] is False
    finally:
        await runner.cleanup()
        await judge_runner.cleanup()


async def test_a_harness_budget_holds_over_every_pass(scoring: Scoring) -> None:
    """Before: a harness experiment stopped by its budget and resumed started counting from $0 and spent the whole
    budget again (the resume request could not carry a larger one either). Now what earlier passes spent counts,
    and `resume` takes a new budget. Each run here costs gpt-4o's price of 100 + 10 tokens (genai-prices)."""
    s = scoring
    harness = Harness(s, "")
    url, runner = await serve_app(harness.app())
    try:
        harness.key = await _harness_agent(s, url)
        cases = [{"id": f"c{i}", "input": {"n": i}, "expected": "42", "evaluators": ["exact"]} for i in range(6)]
        await call(s, "POST", "/api/datasets/d@acme", {"cases": cases})
        status, exp = await call(s, "POST", "/api/experiments", {
            "agent": "h@acme", "dataset": "d@acme", "budget_usd": 0.0006, "run_settings": {"concurrency": 1}})
        assert status == 201, exp
        eid = exp["experiment_id"]
        got = await _wait_status(s, eid, "stopped")
        assert len(harness.calls) == 2 and got["progress"]["recorded"] == 2, got
        assert "budget $0.0006 reached" in got["status_reason"] and "--max-cost-usd" in got["status_reason"]
        # The same budget again: spent already, so nothing more runs.
        status, resumed = await call(s, "POST", f"/api/experiments/{eid}/resume", {})
        assert status == 200, resumed
        got = await _wait_status(s, eid, "stopped")
        assert len(harness.calls) == 2, [c["case_id"] for c in harness.calls]
        # A larger budget, over every pass: two more runs.
        status, resumed = await call(s, "POST", f"/api/experiments/{eid}/resume", {"budget_usd": 0.0013})
        assert status == 200, resumed
        got = await _wait_status(s, eid, "stopped")
        assert len(harness.calls) == 4 and got["progress"]["recorded"] == 4, got
        assert got["config"]["budget_usd"] == 0.0013
    finally:
        await runner.cleanup()


async def test_a_code_agents_resume_refuses_a_budget(scoring: Scoring) -> None:
    s = scoring
    agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [{"id": "a", "input": "x", "expected": "y"}]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": agent, "dataset": "d@acme"})
    status, err = await call(s, "POST", f"/api/experiments/{exp['experiment_id']}/resume",
                             {"holder": "me", "budget_usd": 1.0})
    assert status == 400 and "its runner holds the budget" in err["error"]["message"], err
