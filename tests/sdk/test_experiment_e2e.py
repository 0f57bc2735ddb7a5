"""A whole experiment against `evalkit serve`: repetitions, a Python evaluator, a built-in check, the judge."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest

import evalkit
from evalkit import RunResult
from tests.sdk.conftest import FakeJudge, Served, Tenant, write_cases

CASES = {
    "add": "input: {q: '2+2'}\nexpected: '4'\nrubric: The answer is 4.\n"
           "evaluators: [contains, judge, exact_answer]\ntags: [math]\n",
    "animal": "input: {q: 'an animal'}\nexpected: horse\nrubric: Names a horse.\n"
              "evaluators: [contains, judge, exact_answer]\n",
    "fail": "input: {q: 'boom'}\nexpected: x\nevaluators: [exact_answer]\n",
}


@evalkit.evaluator
def exact_answer(answer: str | None, expected: Any, metadata: dict[str, Any]) -> dict[str, Any]:
    assert metadata["case_id"] in ("add", "animal", "fail")
    ok = answer is not None and answer.strip() == str(expected)
    return {"passed": ok, "label": "exact" if ok else "different", "explanation": f"{answer!r} vs {expected!r}"}


def task(input: dict[str, Any], metadata: dict[str, Any]) -> str | RunResult:
    if input["q"] == "2+2":
        return "4"
    if input["q"] == "an animal":
        # The second repetition of this case says zebra: contains fails, the judge fails it.
        return "horse" if metadata["repetition"] == 0 else "a zebra"
    raise ValueError("the agent crashed")


def test_whole_experiment_and_its_scorecard(served: Served, tenant: Tenant, fake_judge: FakeJudge,
                                            tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_cases(tmp_path, "qa", CASES)
    (tmp_path / "evalkit.yaml").write_text(
        "cases: cases\nfixtures: fixtures\ncredentials:\n  judges:\n"
        f"    {fake_judge.url}: env:FAKE_JUDGE_KEY\n")
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-fake-judge")
    out = io.StringIO()
    result = evalkit.run_experiment(dataset="qa", agent=tenant.agent, task=task, evaluators=[exact_answer],
                                    repetitions=2, concurrency=3, judge={"base_url": fake_judge.url,
                                                                         "model": "fake-judge"}, output=out)
    printed = out.getvalue()
    assert result.experiment_id is not None and result.url == f"{served.api}/experiments/{result.experiment_id}"
    assert [(r.case_id, r.repetition, r.status) for r in result.runs] == [
        ("add", 0, "completed"), ("add", 1, "completed"), ("animal", 0, "completed"), ("animal", 1, "completed"),
        ("fail", 0, "failed"), ("fail", 1, "failed")]
    assert {r.error for r in result.runs if r.status == "failed"} == {"ValueError: the agent crashed"}
    assert all(r.trajectory_status == "valid" for r in result.runs), [r.trajectory_status for r in result.runs]
    assert len({r.session_id for r in result.runs}) == 6
    # Plain progress lines, the scorecard and the URL at the end.
    assert "add #0 completed (valid)" in printed and "fail #1 failed (valid) ValueError: the agent crashed" in printed
    assert f"experiment {result.experiment_id}: {result.url}" in printed

    card = result.scorecard["scorecard"]  # type: ignore[index]
    assert card["runs"] == 6 and card["cases"] == 3 and {k: v for k, v in card["status_counts"].items() if v} == {
        "completed": 4, "failed": 2}
    by_name = {e["evaluator"]: e for e in card["evaluators"]}
    # exact_answer: add 2/2, animal 1/2, fail 0/2 (failed runs count as failures, never dropped).
    assert by_name["exact_answer"]["n"] == 6 and by_name["exact_answer"]["passed"] == 3
    assert by_name["contains"]["n"] == 4 and by_name["contains"]["passed"] == 3
    assert by_name["judge"]["n"] == 4 and by_name["judge"]["passed"] == 3
    assert by_name["exact_answer"]["pass_at_k"]["2"] == pytest.approx((1 + 1 + 0) / 3)
    # The judge was called with the key from evalkit.yaml, once per run it applies to.
    assert len(fake_judge.requests) == 4 and set(fake_judge.auth) == {"Bearer sk-fake-judge"}

    experiment = served.ok("GET", f"/api/experiments/{result.experiment_id}", token=tenant.token)
    # Every run is in and scored; failed runs are results, so the experiment is complete (and still resumable).
    assert experiment["status"] == "completed" and experiment["can_resume"]
    assert experiment["scoring"]["unscored_runs"] == 0
    config = experiment["config"]
    assert config["code_evaluators"] == ["exact_answer"] and config["repetitions"] == 2
    metadata = config["metadata"]
    assert metadata["dataset_content_hash"].startswith("sha256:")
    assert metadata["versions"]["evalkit"] == evalkit_version()
    assert "genai_prices" in metadata["versions"] and "git_sha" in metadata
    # The root span reached the service: the session's spans include evalkit.run with the run's ids.
    session = served.ok("GET", f"/api/agents/{tenant.agent}/sessions/{result.runs[0].session_id}",
                        token=tenant.token)
    root = next(s for s in session["spans"] if s["name"] == "evalkit.run")
    assert root["attributes"]["evalkit.case_id"] == "add" and root["attributes"]["evalkit.repetition"] == 0
    assert root["attributes"]["evalkit.experiment_id"] == result.experiment_id
    assert root["attributes"]["evalkit.output"] == "4"


def evalkit_version() -> str:
    from importlib.metadata import version

    return version("evalkit")


def test_scoring_again_retries_the_verdicts_that_ended_in_an_error_and_only_those(
        served: Served, tenant: Tenant, fake_judge: FakeJudge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Found by fixing a Python evaluator that raised on one case, then scoring again as the scorecard's note says
    # ("… ended in an evaluator error and are not counted; see their explanations and re-score"): `evalkit
    # evaluate N` counted an error as a verdict, scored nothing, and ended with the same errors and exit 1; only
    # --rescore helped, and it asked the judge about every run again.
    write_cases(tmp_path, "again", {f"c{i}": f"input: c{i}\nrubric: Any answer.\nevaluators: [judge, flaky_check]\n"
                                    for i in range(3)})
    (tmp_path / "evalkit.yaml").write_text(
        "cases: cases\nfixtures: fixtures\ncredentials:\n  judges:\n"
        f"    {fake_judge.url}: env:FAKE_JUDGE_KEY\n")
    monkeypatch.setenv("FAKE_JUDGE_KEY", "sk-fake-judge")
    calls: list[str] = []
    broken = {"c1"}

    @evalkit.evaluator
    def flaky_check(answer: str | None, metadata: dict[str, Any]) -> bool:
        calls.append(metadata["case_id"])
        if metadata["case_id"] in broken:
            raise RuntimeError("the check broke")
        return answer == f"answer {metadata['case_id']}"

    fake_judge.down = True
    first = evalkit.run_experiment(dataset="again", agent=tenant.agent, task=lambda input: f"answer {input}",
                                   evaluators=[flaky_check], output=io.StringIO(),
                                   judge={"base_url": fake_judge.url, "model": "fake-judge", "max_retries": 1})
    by_name = {e["evaluator"]: e for e in first.scorecard["scorecard"]["evaluators"]}  # type: ignore[index]
    assert (by_name["judge"]["n"], by_name["judge"]["evaluator_errors"]) == (0, 3)
    assert (by_name["flaky_check"]["n"], by_name["flaky_check"]["evaluator_errors"]) == (2, 1)
    # The check is fixed and the judge is back: scoring again (no rescore) asks again exactly what erred.
    broken.clear()
    fake_judge.down = False
    asked = len(fake_judge.requests)
    again = evalkit.evaluate_experiment(experiment_id=int(first.experiment_id or 0), evaluators=[flaky_check],
                                        output=io.StringIO())
    assert sorted(calls) == ["c0", "c1", "c1", "c2"]
    assert len(fake_judge.requests) - asked == 3
    by_name = {e["evaluator"]: e for e in again.scorecard["scorecard"]["evaluators"]}  # type: ignore[index]
    for name in ("judge", "flaky_check"):
        assert (by_name[name]["n"], by_name[name]["passed"], by_name[name]["evaluator_errors"]) == (3, 3, 0), name
    # Nothing left to retry: scoring once more asks nobody.
    evalkit.evaluate_experiment(experiment_id=int(first.experiment_id or 0), evaluators=[flaky_check],
                                output=io.StringIO())
    assert len(calls) == 4 and len(fake_judge.requests) - asked == 3
    # Scored without it, the note says what the missing evaluator's scores wait for: the command that scores them.
    out = io.StringIO()
    evalkit.evaluate_experiment(experiment_id=int(first.experiment_id or 0), output=out)
    assert (f"declares Python evaluator(s) flaky_check that were not passed; their scores stay missing until they "
            f"are: `evalkit evaluate {first.experiment_id} --evaluator ") in out.getvalue(), out.getvalue()
