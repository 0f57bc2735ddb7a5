"""Evaluations: run × evaluator → verdict. Every version is kept; the latest counts."""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from evalkit.store import Store

from .scorecard import EvaluationRecord


@dataclass(frozen=True)
class StoredEvaluation:
    run_id: str
    evaluator: str
    score: float | None = None
    passed: bool | None = None
    label: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    error: str | None = None
    evaluator_version: str = ""
    cost_usd: float | None = 0.0
    source: str = "service"


_COLUMNS = ["experiment_id", "run_id", "evaluator", "version", "score", "passed", "label", "explanation", "metadata",
            "error", "evaluator_version", "cost_usd", "source", "created_by", "created_at"]


class Evaluations:
    def __init__(self, store: Store) -> None:
        self.store = store

    def save(self, experiment_id: int, evaluations: list[StoredEvaluation], *, version: int, by: str,
             now: float) -> None:
        rows = [[experiment_id, e.run_id, e.evaluator, version, e.score, e.passed, e.label, e.explanation,
                 json.dumps(e.metadata, default=str), e.error, e.evaluator_version, e.cost_usd, e.source, by, now]
                for e in evaluations]
        if rows:
            self.store.insert("evaluations", [list(c) for c in zip(*rows, strict=True)], _COLUMNS)

    def latest(self, experiment_id: int) -> list[EvaluationRecord]:
        """The latest verdict per (run, evaluator), as scorecard records, ordered by evaluator and run."""
        rows = self.store.query(
            # LIMIT 1 BY keeps the whole latest row: an error (NULL score) replaces an older score, which a
            # per-column argMax would skip. The columns are in EvaluationRecord's order (explanation is not read)
            # so that each row is its arguments as is.
            "SELECT run_id, evaluator, score, passed, label, CAST(NULL, 'Nullable(String)'), error, cost_usd "
            "FROM evaluations WHERE experiment_id = {i:UInt64} "
            "ORDER BY evaluator, run_id, version DESC LIMIT 1 BY evaluator, run_id", {"i": experiment_id})
        return list(itertools.starmap(EvaluationRecord, rows))

    def detail(self, experiment_id: int, run_id: str) -> list[dict[str, Any]]:
        rows = self.store.query_dicts(
            "SELECT evaluator, version, score, passed, label, explanation, metadata, error, evaluator_version, "
            "cost_usd, source FROM evaluations WHERE experiment_id = {i:UInt64} AND run_id = {r:String} "
            "ORDER BY evaluator, version DESC LIMIT 1 BY evaluator", {"i": experiment_id, "r": run_id})
        for row in rows:
            row["metadata"] = json.loads(row["metadata"] or "{}")
        return rows

    def details_by_run(self, experiment_id: int, evaluators: list[str] | None = None,
                       run_ids: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
        """run id → the latest verdict of each evaluator on it, whole (explanation, metadata, error, cost),
        ordered by evaluator: what `GET …/runs?evaluations=true` and the export show. `run_ids` narrows the
        read to the runs shown (a case's runs of a large experiment)."""
        where = "experiment_id = {i:UInt64}"
        params: dict[str, Any] = {"i": experiment_id}
        if evaluators:
            where += " AND evaluator IN {e:Array(String)}"
            params["e"] = evaluators
        if run_ids is not None:
            where += " AND run_id IN {r:Array(String)}"
            params["r"] = run_ids
        rows = self.store.query_dicts(
            "SELECT run_id, evaluator, score, passed, label, explanation, metadata, error, evaluator_version, "
            f"cost_usd, source FROM evaluations WHERE {where} "
            "ORDER BY run_id, evaluator, version DESC LIMIT 1 BY run_id, evaluator", params)
        out: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            row["metadata"] = json.loads(row["metadata"] or "{}")
            out.setdefault(row.pop("run_id"), []).append(row)
        return out

    def judged_pairs(self, experiment_id: int) -> set[tuple[str, str]]:
        """The (run, evaluator) pairs whose latest evaluation is a verdict, not an evaluator error: what scoring
        again without rescore skips. An error is no score (the scorecard leaves it out), so scoring again asks
        again exactly there: an evaluator fixed, a judge back from an outage."""
        rows = self.store.query(
            "SELECT run_id, evaluator, error FROM evaluations WHERE experiment_id = {i:UInt64} "
            "ORDER BY run_id, evaluator, version DESC LIMIT 1 BY run_id, evaluator", {"i": experiment_id})
        return {(r[0], r[1]) for r in rows if r[2] is None}

    def scored_pairs(self, experiment_id: int) -> set[tuple[str, str]]:
        rows = self.store.query("SELECT DISTINCT run_id, evaluator FROM evaluations WHERE experiment_id = {i:UInt64}",
                                {"i": experiment_id})
        return {(r[0], r[1]) for r in rows}
