"""Retries, the budget, a dry run and pydantic-ai's own spans, against `evalkit serve`."""

from __future__ import annotations

import importlib.util
import io
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit import RunResult
from tests.sdk.conftest import Served, Tenant, write_cases

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart"


def quickstart_agent() -> Any:
    spec = importlib.util.spec_from_file_location("quickstart_agent", QUICKSTART / "agent.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_retries_record_every_attempt_and_count_only_the_last(served: Served, tenant: Tenant,
                                                              tmp_path: Path) -> None:
    # No evaluator: nothing to score, so a service that moved on once every slot had an attempt went
    # straight to `completed` and refused the retries still to come.
    write_cases(tmp_path, "flaky", {name: f"input: {name}\n" for name in ("once", "never", "bad")})
    calls: Counter[str] = Counter()

    def task(input: str) -> Any:
        calls[input] += 1
        if input == "once" and calls[input] == 1:
            raise ConnectionError("rate limited")
        if input == "never":
            raise TimeoutError("upstream hung")
        if input == "bad":
            return 42  # a protocol violation: not retried, the task is wrong, not flaky
        return "fine"

    out = io.StringIO()
    result = evalkit.run_experiment(dataset="flaky", agent=tenant.agent, task=task, retries=2, concurrency=3,
                                    output=out)
    assert calls == {"once": 2, "never": 3, "bad": 1}
    summary = {r.case_id: (r.status, r.attempts) for r in result.runs}
    assert summary == {"once": ("completed", 2), "never": ("failed", 3), "bad": ("failed", 1)}
    attempts = served.ok("GET", f"/api/experiments/{result.experiment_id}/runs?attempts=all", token=tenant.token)
    recorded = sorted((r["case_id"], r["attempt"], r["status"], r["final"]) for r in attempts["runs"])
    assert recorded == [("bad", 1, "failed", True), ("never", 1, "failed", False), ("never", 2, "failed", False),
                        ("never", 3, "failed", True), ("once", 1, "failed", False), ("once", 2, "completed", True)]
    assert len({r["session_id"] for r in attempts["runs"]}) == 6  # a fresh session per attempt
    # Two failed final runs are results: the experiment is scored in full and completed.
    experiment = served.ok("GET", f"/api/experiments/{result.experiment_id}", token=tenant.token)
    assert experiment["status"] == "completed", experiment["status_reason"]
    assert experiment["progress"]["pending"] == 0 and experiment["progress"]["failed"] == 2
    card = result.scorecard["scorecard"]  # type: ignore[index]
    assert card["runs"] == 3  # retried attempts are not extra samples
    assert {k: v for k, v in card["status_counts"].items() if v} == {"completed": 1, "failed": 2}
    printed = out.getvalue()
    assert "once #0 attempt 1 failed (ConnectionError: rate limited); retrying in" in printed
    assert "once #0 completed (valid) attempt 2" in printed
    assert "not recorded" not in printed


def test_retries_with_a_python_evaluator_count_only_the_last(served: Served, tenant: Tenant,
                                                              tmp_path: Path) -> None:
    write_cases(tmp_path, "flaky", {name: f"input: {name}\nevaluators: [says_fine]\n" for name in ("once", "never")})
    calls: Counter[str] = Counter()

    def task(input: str) -> str:
        calls[input] += 1
        if input == "never" or calls[input] == 1:
            raise ConnectionError("rate limited")
        return "fine"

    @evalkit.evaluator
    def says_fine(answer: str | None) -> bool:
        return answer == "fine"

    result = evalkit.run_experiment(dataset="flaky", agent=tenant.agent, task=task, retries=1,
                                    evaluators=[says_fine], output=io.StringIO())
    attempts = served.ok("GET", f"/api/experiments/{result.experiment_id}/runs?attempts=all", token=tenant.token)
    assert len(attempts["runs"]) == 4
    card = result.scorecard["scorecard"]  # type: ignore[index]
    (fine,) = card["evaluators"]
    assert (fine["n"], fine["passed"], fine["imputed_failures"]) == (2, 1, 1)
    experiment = served.ok("GET", f"/api/experiments/{result.experiment_id}", token=tenant.token)
    assert experiment["status"] == "completed"


def test_budget_stops_scheduling_and_an_unpriced_model_is_unknown_not_zero(served: Served, tenant: Tenant,
                                                                             tmp_path: Path) -> None:
    agent = quickstart_agent()
    write_cases(tmp_path, "capitals", {f"c{i}": f"input: {{question: 'What is the capital of {country}?'}}\n"
                                       for i, country in enumerate(["France", "Japan", "Kenya", "Peru", "Chile"])})
    out = io.StringIO()
    # Each run uses 120 tokens (two model calls); 250 are reached after the third run.
    result = evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=agent.answer, concurrency=1,
                                    max_tokens=250, max_cost_usd=5.0, output=out)
    assert [r.case_id for r in result.runs] == ["c0", "c1", "c2"]
    assert result.stopped_reason is not None and "max_tokens=250" in result.stopped_reason
    budget = result.budget or {}
    assert budget["tokens"] == 360 and budget["unpriced_runs"] == 3
    assert budget["cost_usd"] is None  # never $0 for a model without a price
    printed = out.getvalue()
    assert "budget unknown: 3 run(s) used" in printed
    assert f"resume={result.experiment_id}" in printed
    pending = served.ok("GET", f"/api/experiments/{result.experiment_id}/runs/pending", token=tenant.token)
    assert sorted(p["case_id"] for p in pending["runs"]) == ["c3", "c4"]
    # Scoring again: the runs not yet run are named, with what to do; partial=True scores what is there.
    with pytest.raises(ValueError, match=rf"2 run\(s\) not yet run.*resume={result.experiment_id}.*partial=True"):
        evalkit.evaluate_experiment(experiment_id=str(result.experiment_id), output=io.StringIO())
    again = evalkit.evaluate_experiment(experiment_id=str(result.experiment_id), partial=True, output=io.StringIO())
    assert [r.case_id for r in again.runs] == ["c0", "c1", "c2"]
    # It never looks finished: `stopped`, planned vs ran in its reason and its scorecard, the final spend quoted.
    assert "stopped: budget reached: 360 tokens of max_tokens=250; 3 of 5 planned runs ran" in printed
    info = served.ok("GET", f"/api/experiments/{result.experiment_id}", token=tenant.token)
    assert info["status"] == "stopped" and "3 of 5 planned runs ran" in info["status_reason"]
    assert info["can_resume"]
    card = served.ok("GET", f"/api/experiments/{result.experiment_id}/scorecard", token=tenant.token)["scorecard"]
    assert card["planned_runs"] == 5 and card["runs"] == 3
    assert any(n.startswith("incomplete: 2 of 5 planned run(s) never ran") for n in card["notes"])
    # The gate's advice is to resume it, not to "finish it with evaluate" (against another experiment: one against
    # itself is refused first).
    baseline = served.ok("POST", "/api/experiments", {"agent": tenant.agent, "dataset": info["dataset"]},
                         token=tenant.token)["experiment_id"]
    status, refused = served.call("POST", f"/api/experiments/{result.experiment_id}/gate",
                                  {"baseline_id": int(baseline)}, token=tenant.token)
    assert status == 409 and "was stopped (budget reached" in refused["error"]["message"]
    assert f"--resume {result.experiment_id}" in refused["error"]["message"]


def test_pydantic_ai_spans_nest_under_the_root_span(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    agent = quickstart_agent()
    write_cases(tmp_path, "one", {"japan": "input: {question: 'What is the capital of Japan?'}\nexpected: Tokyo\n"
                                           "evaluators: [contains, {type: tool_called, tool: lookup_capital}]\n"})
    result = evalkit.run_experiment(dataset="one", agent=tenant.agent, task=agent.answer, output=io.StringIO())
    (run,) = result.runs
    assert (run.status, run.answer, run.trajectory_status) == ("completed", "The capital is Tokyo.", "valid")
    session = served.ok("GET", f"/api/agents/{tenant.agent}/sessions/{run.session_id}", token=tenant.token)
    spans = {s["span_id"]: s for s in session["spans"]}
    (root,) = [s for s in spans.values() if s["name"] == "evalkit.run"]
    assert root["parent_span_id"] is None
    others = [s for s in spans.values() if s is not root]
    assert others and {s["trace_id"] for s in spans.values()} == {root["trace_id"]}

    def reaches_root(span: dict[str, Any]) -> bool:
        while span["parent_span_id"] is not None:
            span = spans[span["parent_span_id"]]
        return span is root

    assert all(reaches_root(s) for s in others)
    names = {s["name"] for s in others}
    assert any("capitals" in n for n in names) and any("lookup_capital" in n for n in names), names
    trajectory = served.ok("GET", f"/api/agents/{tenant.agent}/sessions/{run.session_id}/trajectory",
                           token=tenant.token)
    calls = [c["function_name"] for step in trajectory["steps"] for c in step.get("tool_calls") or []]
    assert calls == ["lookup_capital"]
    card = result.scorecard["scorecard"]  # type: ignore[index]
    assert {e["evaluator"]: e["passed"] for e in card["evaluators"]} == {"contains": 1, "tool_called": 1}


def test_dry_run_prints_what_the_service_made_of_the_session(served: Served, tenant: Tenant,
                                                             tmp_path: Path) -> None:
    agent = quickstart_agent()
    write_cases(tmp_path, "capitals", {"a": "input: {question: 'What is the capital of Kenya?'}\n",
                                       "b": "input: {question: 'What is the capital of Peru?'}\n"})
    out = io.StringIO()
    result = evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=agent.answer, dry_run=True,
                                    output=out)
    assert result.experiment_id is None and result.url is None
    (run,) = result.runs
    assert (run.case_id, run.answer) == ("a", "The capital is Nairobi.")
    printed = out.getvalue()
    assert f"── case a (session {run.session_id})" in printed
    assert "answer: The capital is Nairobi." in printed
    assert "spans: 5 (CLIENT 2, INTERNAL 3)" in printed, printed
    assert "mapping version: built-in" in printed and "unmapped attributes: " in printed
    unmapped = next(line for line in printed.splitlines() if "unmapped attributes: " in line)
    assert "evalkit." not in unmapped  # the SDK's own root-span bookkeeping is known, not "unmapped"
    assert "trajectory: valid, 4 step(s)" in printed, printed
    listed = served.ok("GET", f"/api/experiments?agent={tenant.agent}", token=tenant.token)
    assert listed["experiments"] == []


def test_a_reused_session_id_fails_the_run(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "reuse", {"a": "input: a\n", "b": "input: b\n"})

    def task(input: str) -> RunResult:
        return RunResult(answer=input, session_id="shared-session")

    result = evalkit.run_experiment(dataset="reuse", agent=tenant.agent, task=task, concurrency=1,
                                    trajectory_wait_seconds=0, output=io.StringIO())
    # Runs are recorded as they end, so either may claim the id first; the other fails, saying which run has it.
    first = next(r for r in result.runs if r.status == "completed")
    second = next(r for r in result.runs if r.status == "failed")
    assert first.trajectory_status == "unavailable"
    assert f"already serves run {first.case_id}#0" in (second.error or "")


def test_task_that_cannot_take_the_model_is_warned(tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "m", {"a": "input: a\n"})
    with pytest.warns(UserWarning, match="no `model` parameter"):
        result = evalkit.run_experiment(dataset="m", agent=tenant.agent, task=lambda input: "x", model="gpt-x",
                                        dry_run=True, output=io.StringIO())
    assert result.runs[0].answer == "x"


async def test_a_python_evaluator_named_like_a_workspace_evaluator_is_refused(served: Served, tenant: Tenant,
                                                                            tmp_path: Path) -> None:
    served.ok("PUT", f"/api/workspaces/{tenant.workspace}/evaluators/tone",
              {"type": "contains", "config": {"substrings": ["please"]}})
    write_cases(tmp_path, "polite", {"a": "input: a\n"})

    @evalkit.evaluator(name="tone")
    def tone(answer: str) -> bool:
        return True

    with pytest.raises(ValueError, match=r"tone.*rename it"):
        await evalkit.arun_experiment(dataset="polite", agent=tenant.agent, task=lambda input: "x",
                                      evaluators=[tone], output=io.StringIO())
    listed = served.ok("GET", f"/api/experiments?agent={tenant.agent}", token=tenant.token)
    assert listed["experiments"] == []  # refused before anything was created
    # The async twin runs the same experiment once the name is free.
    renamed = evalkit.evaluator(name="my_tone")(tone.fn)
    result = await evalkit.arun_experiment(dataset="polite", agent=tenant.agent, task=lambda input: "x",
                                           evaluators=[renamed], output=io.StringIO())
    assert [(r.case_id, r.status) for r in result.runs] == [("a", "completed")]


def test_a_judge_key_naming_an_unset_variable_is_an_error(served: Served, tenant: Tenant, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from evalkit.sdk.config import ConfigError

    write_cases(tmp_path, "judged", {"a": "input: a\nrubric: fine?\n"})
    (tmp_path / "evalkit.yaml").write_text("cases: cases\nfixtures: fixtures\n"
                                           "credentials:\n  judges:\n    http://judge.local/v1: env:E1_UNSET_KEY\n")
    monkeypatch.delenv("E1_UNSET_KEY", raising=False)
    called: list[str] = []
    with pytest.raises(ConfigError, match=r"\$E1_UNSET_KEY, which is not set"):
        evalkit.run_experiment(dataset="judged", agent=tenant.agent, task=lambda input: called.append(input) or "x",
                               judge={"base_url": "http://judge.local/v1", "model": "m"}, output=io.StringIO())
    assert called == []  # refused before anything ran
    listed = served.ok("GET", f"/api/experiments?agent={tenant.agent}", token=tenant.token)["experiments"]
    assert listed == []


def test_a_resumed_experiment_counts_what_it_already_spent_against_its_budget(served: Served, tenant: Tenant,
                                                                              tmp_path: Path) -> None:
    # The budget is the experiment's: resumed with the same max_tokens, a budget-stopped experiment used to
    # start a whole new budget's worth of runs (found by resuming a stopped experiment from the CLI: it spent
    # 2.7 times its max_cost_usd, and the final "spend:" line showed only the resumed runs' share).
    agent = quickstart_agent()
    write_cases(tmp_path, "capitals", {f"c{i}": f"input: {{question: 'What is the capital of {country}?'}}\n"
                                       for i, country in enumerate(["France", "Japan", "Kenya", "Peru", "Chile"])})
    calls: list[str] = []

    async def task(input: Any) -> str:
        calls.append(input["question"])
        return str(await agent.answer(input))

    # 120 tokens a run: 250 are reached after the third run.
    first = evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=task, concurrency=1,
                                   max_tokens=250, output=io.StringIO())
    assert len(calls) == 3 and first.stopped_reason is not None
    out = io.StringIO()
    again = evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=task, concurrency=1,
                                   max_tokens=250, resume=int(first.experiment_id or 0), output=out)
    assert len(calls) == 3, "resumed with the same budget, it ran more runs"
    assert again.stopped_reason is not None and "360 tokens of max_tokens=250" in again.stopped_reason
    assert (again.budget or {})["tokens"] == 360
    assert "with a larger budget" in out.getvalue()
    info = served.ok("GET", f"/api/experiments/{first.experiment_id}", token=tenant.token)
    assert info["status"] == "stopped" and "3 of 5 planned runs ran" in info["status_reason"]
    # A larger budget runs the rest, and the spend it reports is the experiment's.
    out = io.StringIO()
    done = evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=task, concurrency=1,
                                  max_tokens=1000, resume=int(first.experiment_id or 0), output=out)
    assert len(calls) == 5 and done.stopped_reason is None
    assert (done.budget or {})["tokens"] == 600 and "600 tokens" in out.getvalue()


def test_resuming_without_a_declared_python_evaluator_is_refused_saying_which(served: Served, tenant: Tenant,
                                                                             tmp_path: Path) -> None:
    # Found resuming a killed `evalkit run … --evaluator evals:a --evaluator evals:b` with `--evaluator evals:a`
    # only: the new runs were never scored by b, the experiment stayed `evaluating`, and the runner ended with
    # exit 0 and a scorecard note. Now it is refused before any run, naming what to pass.
    agent = quickstart_agent()
    write_cases(tmp_path, "capitals", {f"c{i}": f"input: {{question: 'What is the capital of {country}?'}}\n"
                                       "evaluators: [says_capital, says_the]\n"
                                       for i, country in enumerate(["France", "Japan", "Kenya"])})

    @evalkit.evaluator
    def says_capital(answer: str | None) -> bool:
        return "capital" in (answer or "")

    @evalkit.evaluator
    def says_the(answer: str | None) -> bool:
        return "The" in (answer or "")

    first = evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=agent.answer, concurrency=1,
                                   max_tokens=100, evaluators=[says_capital, says_the], output=io.StringIO())
    eid = int(first.experiment_id or 0)
    assert first.stopped_reason is not None and len(first.runs) == 1
    with pytest.raises(ValueError, match=rf"experiment {eid} declares the Python evaluator\(s\) says_the, not "
                                         rf"passed here; resume it with every evaluator it was created with "
                                         rf"\(says_capital, says_the\)"):
        evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=agent.answer, resume=eid,
                               evaluators=[says_capital], output=io.StringIO())
    assert served.ok("GET", f"/api/experiments/{eid}/runs/pending", token=tenant.token)["runs"], "it ran"
    done = evalkit.run_experiment(dataset="capitals", agent=tenant.agent, task=agent.answer, resume=eid,
                                  evaluators=[says_capital, says_the], max_tokens=1000, output=io.StringIO())
    assert done.stopped_reason is None and len(done.runs) == 3
    assert served.ok("GET", f"/api/experiments/{eid}", token=tenant.token)["status"] == "completed"
