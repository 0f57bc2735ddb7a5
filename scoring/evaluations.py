"""Evaluations: run × evaluator → verdict. Every version is kept; the latest counts."""

from __future__ import annotations

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
        """The latest verdict per (run, evaluator), as scorecard records."""
        rows = self.store.query(
            # Tuples: argMax skips NULL arguments, and an error (NULL score) must replace an older score.
            "SELECT run_id, evaluator, argMax(tuple(score, passed, label, error, cost_usd), version) "
            "FROM evaluations WHERE experiment_id = {i:UInt64} GROUP BY run_id, evaluator", {"i": experiment_id})
        return [EvaluationRecord(r[0], r[1], t[0], None if t[1] is None else bool(t[1]), t[2], None, t[3], t[4])
                for r in rows for t in (r[2],)]

    def detail(self, experiment_id: int, run_id: str) -> list[dict[str, Any]]:
        rows = self.store.query_dicts(
            "SELECT evaluator, version, score, passed, label, explanation, metadata, error, evaluator_version, "
            "cost_usd, source FROM evaluations WHERE experiment_id = {i:UInt64} AND run_id = {r:String} "
            "ORDER BY evaluator, version DESC LIMIT 1 BY evaluator", {"i": experiment_id, "r": run_id})
        for row in rows:
            row["metadata"] = json.loads(row["metadata"] or "{}")
        return rows

    def scored_pairs(self, experiment_id: int) -> set[tuple[str, str]]:
        rows = self.store.query("SELECT DISTINCT run_id, evaluator FROM evaluations WHERE experiment_id = {i:UInt64}",
                                {"i": experiment_id})
        return {(r[0], r[1]) for r in rows}
