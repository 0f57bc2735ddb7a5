"""What a person reads of an experiment is one answer wherever it is read (API, CLI): an experiment with no runs cost
$0 in its summary and its scorecard alike; an experiment compared with itself is said to be, and one gated against
itself is refused."""

from __future__ import annotations

import asyncio
import contextlib
import io

from evalkit.cli import main as cli_main
from tests.conftest import ADMIN_TOKEN
from tests.scoring_service.conftest import Scoring, call


def _cli(s: Scoring, *argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = cli_main([*argv, "--url", s.api, "--token", ADMIN_TOKEN])
    return code, out.getvalue()


async def _experiment(s: Scoring, lease: bool = True) -> int:
    agent, _ = await asyncio.to_thread(s.new_agent, "bot", "acme")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [
        {"id": f"c{i}", "input": "x", "expected": "y", "evaluators": ["exact"]} for i in range(3)]})
    status, exp = await call(s, "POST", "/api/experiments", {
        "agent": agent, "dataset": "d@acme", **({"lease": {"holder": "h", "ttl_seconds": 60}} if lease else {})})
    assert status == 201, exp
    return int(exp["experiment_id"])


async def test_an_experiment_with_no_runs_cost_nothing_in_its_summary_and_its_scorecard(scoring: Scoring) -> None:
    s = scoring
    eid = await _experiment(s)
    status, summary = await call(s, "GET", f"/api/experiments/{eid}")
    assert status == 200 and summary["cost_usd"] == 0.0, summary
    status, card = await call(s, "GET", f"/api/experiments/{eid}/scorecard")
    assert status == 200, card
    cost = card["scorecard"]["cost_usd"]
    assert (cost["total"], cost["n"], cost["missing"], cost["mean"]) == (0.0, 0, 0, None), cost
    status, listed = await call(s, "GET", "/api/experiments")
    assert [e["cost_usd"] for e in listed["experiments"] if e["experiment_id"] == eid] == [0.0]
    code, out = await asyncio.to_thread(_cli, s, "experiments", "show", str(eid), "--scorecard")
    assert code == 0 and "$0.0000" in out and "unknown" not in out, out


async def test_comparing_an_experiment_with_itself_says_so(scoring: Scoring) -> None:
    s = scoring
    eid = await _experiment(s)
    for run_case in ("c0", "c1", "c2"):
        status, run = await call(s, "POST", f"/api/experiments/{eid}/runs", {
            "lease_holder": "h", "case_id": run_case, "repetition": 0, "session_id": f"s-{run_case}",
            "status": "completed", "answer": "y"})
        assert status == 201, run
    status, _ = await call(s, "PATCH", f"/api/experiments/{eid}", {"status": "evaluating", "lease_holder": "h"})
    status, scored = await call(s, "POST", f"/api/experiments/{eid}/evaluate", {})
    assert status == 200 and scored["scored"] == 3, scored
    status, compared = await call(s, "GET", f"/api/experiments/{eid}/compare?baseline_id={eid}")
    assert status == 200 and compared["same_experiment"] is True, compared
    assert compared["warnings"] == [
        f"the baseline is the candidate itself (experiment {eid}): every case is the same by construction and "
        "nothing is compared; pick another experiment as the baseline (list them with `evalkit experiments list`)"]
    # A gate against itself passed before (nothing can regress against itself): in CI, a misconfigured baseline
    # that is always green. Now it is refused, saying what to pass.
    status, gated = await call(s, "POST", f"/api/experiments/{eid}/gate", {"baseline_id": eid, "min_pairs": 1})
    assert status == 400 and gated["error"]["message"] == (
        f"experiment {eid} is gated against itself, which passes whatever changed (nothing can regress against "
        f"itself); pass the baseline's id, the experiment before the change: `evalkit experiments gate {eid} "
        "--baseline N` (baseline_id in the API; list them with `evalkit experiments list`)"), gated
    code, out = await asyncio.to_thread(_cli, s, "experiments", "gate", str(eid), "--baseline", str(eid),
                                        "--min-pairs", "1")
    assert code == 2 and out == (
        f"evalkit: experiment {eid} is gated against itself, which passes whatever changed; pass the baseline's id: "
        f"`evalkit experiments gate {eid} --baseline N`, N the experiment before the change (list them with "
        "`evalkit experiments list`)\n"), out
    # Against another experiment the gate still answers.
    status, created = await call(s, "POST", "/api/experiments", {"agent": "bot@acme", "dataset": "d@acme"})
    assert status == 201, created
    other = created["experiment_id"]
    status, gated = await call(s, "POST", f"/api/experiments/{eid}/gate", {"baseline_id": other,
                                                                          "allow_incomplete": True})
    assert status == 200 and gated["comparison"]["same_experiment"] is False, gated
    # Comparing with itself is still answered, with its warning first.
    code, out = await asyncio.to_thread(_cli, s, "experiments", "compare", str(eid), "--baseline", str(eid))
    assert code == 0 and "⚠ the baseline is the candidate itself" in out, out
    # The warning comes before the table of "same" verdicts.
    assert out.index("the baseline is the candidate itself") < out.index("| evaluator"), out
