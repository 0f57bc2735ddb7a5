"""The scorecard records read from the store, and the cache of a completed experiment's records."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from evalkit.access import Access
from evalkit.migrations import migrate
from evalkit.scoring.evaluations import StoredEvaluation
from evalkit.scoring.experiments import Experiment
from evalkit.scoring.runs import Run, run_id_of
from evalkit.scoring.service import ScoringService
from evalkit.store import Store


@pytest.fixture
def service(store: Store, tmp_path: Path) -> ScoringService:
    migrate(store)
    return ScoringService(store, Access(store), data_dir=tmp_path)


def experiment(service: ScoringService, eid: int, cases: list[str], status: str = "completed") -> Experiment:
    config = {"repetitions": 1, "service_evaluators": {"check": {"type": "exact"}},
              "case_evaluators": {c: ["check"] for c in cases}, "agent_kind": "code"}
    e = Experiment(eid, "acme", "bot", "d", "v", "ann", 0.0, config, cases, status=status)
    service.experiments.save(e)
    return e


def run(eid: int, case: str, attempt: int, status: str, cost: float | None) -> Run:
    return Run(eid, case, 0, attempt, f"s-{case}-{attempt}", status, metrics={"cost_usd": cost, "steps": attempt})


def score(service: ScoringService, eid: int, case: str, version: int, *, passed: bool | None = None,
          error: str | None = None) -> None:
    ev = StoredEvaluation(run_id_of(eid, case, 0, 2 if case == "a" else 1), "check", passed=passed, error=error)
    service.evaluations.save(eid, [ev], version=version, by="ann", now=0.0)


def test_final_attempt_and_latest_version_win_whole_rows(service: ScoringService) -> None:
    e = experiment(service, 1, ["b", "a"])
    # The final attempt of a has no cost: its NULL must not be filled from the older attempt's cost.
    service.runs.save([run(1, "b", 1, "completed", 0.5), run(1, "a", 1, "failed", 0.25),
                       run(1, "a", 2, "completed", None)])
    score(service, 1, "a", 1, passed=True)
    score(service, 1, "a", 2, error="judge down")  # the later error replaces the older verdict
    score(service, 1, "b", 1, passed=False)
    records = service.records(e)
    assert [(r.case_id, r.run_id, r.status, r.metrics.cost_usd, r.metrics.steps) for r in records.runs] == [
        ("a", run_id_of(1, "a", 0, 2), "completed", None, 2), ("b", run_id_of(1, "b", 0, 1), "completed", 0.5, 1)]
    latest = {ev.run_id: (ev.passed, ev.error) for ev in records.evaluations}
    assert latest == {run_id_of(1, "a", 0, 2): (None, "judge down"), run_id_of(1, "b", 0, 1): (False, None)}


def test_completed_records_are_cached_until_a_rescore(service: ScoringService) -> None:
    e = experiment(service, 1, ["a", "b"])
    service.runs.save([run(1, "a", 1, "failed", 0.25), run(1, "a", 2, "completed", 0.5),
                       run(1, "b", 1, "completed", 0.5)])
    score(service, 1, "a", 1, passed=True)
    score(service, 1, "b", 1, passed=False)
    first, records = service.scorecard(e)
    again, records_again = service.scorecard(e)
    assert records_again is records and again is first
    assert first.evaluator("check").mean == 0.5

    score(service, 1, "b", 2, passed=True)  # a re-score writes a new version: the cache must not serve the old
    rescored, records_after = service.scorecard(e)
    assert records_after is not records
    assert rescored.evaluator("check").mean == 1.0
    assert service.scorecard(e)[0] is rescored

    # The declared evaluators are part of the records: a changed config is a new entry.
    changed = dataclasses.replace(e, config={**e.config, "code_evaluators": ["extra"]})
    assert service.records(changed).evaluators == ["check", "extra"]


def test_comparison_is_recomputed_when_the_baseline_changes(service: ScoringService) -> None:
    cand, base = experiment(service, 1, ["a", "b"]), experiment(service, 2, ["a", "b"])
    for eid in (1, 2):
        service.runs.save([run(eid, "a", 1, "failed", 0.25), run(eid, "a", 2, "completed", 0.5),
                           run(eid, "b", 1, "completed", 0.5)])
        score(service, eid, "a", 1, passed=True)
        score(service, eid, "b", 1, passed=eid == 1)
    first = service.comparison(cand, base, alpha=0.05, allow_incomplete=True)
    assert service.comparison(cand, base, alpha=0.05, allow_incomplete=True) is first
    assert first.evaluator("check").improved_count == 1
    # The same rows under another config (one more evaluator) are another baseline.
    changed = dataclasses.replace(base, config={**base.config, "code_evaluators": ["extra"]})
    assert service.comparison(cand, changed, alpha=0.05, allow_incomplete=True).evaluators_only_in_baseline == [
        "extra"]
    score(service, 2, "b", 2, passed=True)
    after = service.comparison(cand, base, alpha=0.05, allow_incomplete=True)
    assert after.evaluator("check").improved_count == 0
    assert service.comparison(cand, base, alpha=0.1, allow_incomplete=True) is not after


def test_an_experiment_still_running_is_read_each_time(service: ScoringService) -> None:
    e = experiment(service, 1, ["a"], status="evaluating")
    service.runs.save([run(1, "a", 1, "completed", 0.5)])
    assert service.records(e) is not service.records(e)
    assert len(service.records_cache) == 0


def test_unscored_from_the_cache_agrees_with_the_store(service: ScoringService) -> None:
    e = experiment(service, 1, ["a", "b", "c"])
    service.runs.save([run(1, "a", 1, "failed", 0.25), run(1, "a", 2, "completed", 0.5),
                       run(1, "b", 1, "completed", 0.5), run(1, "c", 1, "failed", 0.5)])
    score(service, 1, "a", 1, passed=True)
    from_store = service.unscored(dataclasses.replace(e, status="evaluating"))  # not cached: read from the store
    assert from_store == {"check": 1}  # b; the failed run of c needs no score
    assert service.unscored(e) == from_store
    assert len(service.records_cache) == 1
    score(service, 1, "b", 2, passed=False)
    assert service.unscored(e) == {}


def test_columns_from_the_store_score_as_the_records_do(service: ScoringService) -> None:
    """The store's columns (groupArray, the evaluation join in ClickHouse) and the same rows as record objects
    give the same scorecard: NULL trajectory statuses, errors, labels, cancelled and unpriced runs included."""
    from evalkit.scoring.scorecard import ExperimentRecords, build_scorecard

    cases = [f"c{i}" for i in range(12)]
    e = experiment(service, 1, cases)
    statuses = ["completed", "failed", "cancelled", "timeout"]
    runs = [Run(1, c, 0, 1, f"s-{c}", statuses[i % 4] if i % 3 else "completed",
                trajectory_status="" if i % 5 == 0 else "valid",
                metrics={"cost_usd": None if i == 7 else 0.1 * i, "steps": i, "input_tokens": 10 * i,
                         "output_tokens": None if i == 4 else i})
            for i, c in enumerate(cases)]
    service.runs.save(runs)
    evaluations = [StoredEvaluation(run_id_of(1, c, 0, 1), "check", passed=None if i == 4 else i % 2 == 0,
                                    label="x" if i % 4 == 0 else None, error="down" if i == 4 else None,
                                    cost_usd=None if i == 5 else 0.01)
                   for i, c in enumerate(cases) if i != 9]
    evaluations += [StoredEvaluation(run_id_of(1, c, 0, 1), "judge", score=i / 11, cost_usd=0.002)
                    for i, c in enumerate(cases)]
    service.evaluations.save(1, evaluations, version=1, by="ann", now=0.0)
    from_store = service.records(e)
    as_objects = ExperimentRecords(list(from_store.runs), list(from_store.evaluations), experiment_id="1",
                                   evaluators=["check", "judge"], case_evaluators=e.case_evaluators,
                                   dataset=e.dataset, dataset_version=e.dataset_version, planned=e.planned)
    assert [r.trajectory_status for r in from_store.runs][:2] == [None, "valid"]
    assert {ev.error for ev in from_store.evaluations} == {None, "down"}
    assert {ev.label for ev in from_store.evaluations} == {None, "x"}
    store_card, object_card = build_scorecard(from_store), build_scorecard(as_objects)
    assert store_card == object_card
    check = store_card.evaluator("check")
    assert check.evaluator_errors == 1 and check.unpriced_evaluations == 1 and check.unscored == 1


def test_texts_read_as_arrow_binary_still_come_back_as_strings(store: Store) -> None:
    # A server may keep `output_format_arrow_string_as_string` read-only at 0: its strings come as binary.
    from evalkit.scoring.record_columns import _strings, _texts

    sql = "SELECT groupArray(x) FROM (SELECT arrayJoin(['a-1', 'é', '']) AS x)"
    for as_string in (0, 1):
        table = store.query_arrow(sql, settings={"output_format_arrow_string_as_string": as_string})
        assert _texts(table, 0, 0) == ["a-1", "é", ""]
        # A plain string column too (the evaluations' names): binary there came back as "b'...'" keys.
        names = store.query_arrow("SELECT arrayJoin(['exact', 'judgé']) AS name",
                                  settings={"output_format_arrow_string_as_string": as_string})
        assert _strings(names.column(0)) == ["exact", "judgé"]


def test_a_large_config_is_parsed_once_per_text_and_a_change_is_read(service: ScoringService) -> None:
    cases = [f"case-{i:05d}" for i in range(3000)]  # the config's per-case mapping makes it large
    e = experiment(service, 1, cases)
    first, again = service.experiments.get(1), service.experiments.get(1)
    assert first is not None and again is not None
    assert again.config is first.config  # the same text: parsed once
    assert first.config == e.config
    renamed = dataclasses.replace(e, config={**e.config, "name": "renamed"})
    service.experiments.save(renamed)
    changed = service.experiments.get(1)
    assert changed is not None and changed.config["name"] == "renamed" and "name" not in first.config
