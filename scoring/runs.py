"""Runs of an experiment: one row per (case, repetition, attempt); the highest attempt is final.

The slot and attempt are the row's identity, so a retried POST and a re-fetched
trajectory replace the row (a newer version) instead of adding one.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass, field
from typing import Any

from evalkit.store import Store

from .scorecard import RunMetrics, RunRecord
from .tables import next_version

RUN_STATUSES = ("completed", "failed", "cancelled", "timeout")


def run_id_of(experiment_id: int, case_id: str, repetition: int, attempt: int) -> str:
    # Deterministic, so a retried record names the same run.
    return hashlib.sha256(f"{experiment_id}\0{case_id}\0{repetition}\0{attempt}".encode()).hexdigest()[:20]


@dataclass
class Run:
    experiment_id: int
    case_id: str
    repetition: int
    attempt: int
    session_id: str
    status: str
    answer: str | None = None
    output: Any = None
    error: str | None = None
    model: str = ""
    started_at: float | None = None
    ended_at: float | None = None
    trajectory_status: str = ""
    trajectory_source: str = ""
    trajectory: dict[str, Any] | None = None
    problems: list[str] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    recorded_by: str = ""
    recorded_at: float = 0.0
    final: bool = True

    @property
    def run_id(self) -> str:
        return run_id_of(self.experiment_id, self.case_id, self.repetition, self.attempt)

    def view(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "experiment_id": self.experiment_id, "case_id": self.case_id,
                "repetition": self.repetition, "attempt": self.attempt, "final": self.final,
                "session_id": self.session_id, "status": self.status, "answer": self.answer, "output": self.output,
                "error": self.error, "model": self.model or None, "started_at": self.started_at,
                "ended_at": self.ended_at, "trajectory_status": self.trajectory_status or None,
                "trajectory_source": self.trajectory_source or None, "metrics": self.metrics,
                "recorded_by": self.recorded_by, "recorded_at": self.recorded_at}

    def record(self) -> RunRecord:
        m = self.metrics
        return RunRecord(self.run_id, self.case_id, self.repetition, self.status,  # type: ignore[arg-type]
                         self.trajectory_status or None,  # type: ignore[arg-type]
                         RunMetrics(m.get("duration_seconds"), m.get("steps"), m.get("tool_calls"),
                                    m.get("input_tokens"), m.get("output_tokens"), m.get("cost_usd")))


_METRICS = ("duration_seconds", "steps", "tool_calls", "input_tokens", "output_tokens", "cost_usd")
_COLUMNS = ["experiment_id", "case_id", "repetition", "attempt", "run_id", "session_id", "status", "answer", "output",
            "error", "model", "started_at", "ended_at", "trajectory_status", "trajectory_source", "trajectory",
            "problems", *_METRICS, "recorded_by", "recorded_at", "version"]
_LIGHT = ("experiment_id, case_id, repetition, attempt, session_id, status, answer, output, error, model, started_at, "
          "ended_at, trajectory_status, trajectory_source, problems, duration_seconds, steps, tool_calls, "
          "input_tokens, output_tokens, cost_usd, recorded_by, recorded_at")


def _run(r: tuple[Any, ...], trajectory: str | None = None) -> Run:
    metrics = {k: v for k, v in zip(_METRICS, r[15:21], strict=True)}
    return Run(int(r[0]), r[1], int(r[2]), int(r[3]), r[4], r[5], r[6], json.loads(r[7]) if r[7] else None, r[8],
               r[9], r[10], r[11], r[12], r[13], json.loads(trajectory) if trajectory else None, list(r[14]),
               metrics, r[21], float(r[22]))


class Runs:
    def __init__(self, store: Store) -> None:
        self.store = store

    def save(self, runs: list[Run]) -> None:
        rows = [[r.experiment_id, r.case_id, r.repetition, r.attempt, r.run_id, r.session_id, r.status, r.answer,
                 json.dumps(r.output, default=str) if r.output is not None else "", r.error, r.model, r.started_at,
                 r.ended_at, r.trajectory_status, r.trajectory_source,
                 json.dumps(r.trajectory, default=str) if r.trajectory is not None else "", r.problems,
                 *[r.metrics.get(k) for k in _METRICS], r.recorded_by, r.recorded_at, next_version()] for r in runs]
        if rows:
            self.store.insert("runs", [list(col) for col in zip(*rows, strict=True)], _COLUMNS)

    def attempts(self, experiment_id: int, *, case_id: str | None = None, with_trajectory: bool = False,
                 case_ids: list[str] | None = None) -> list[Run]:
        """Every attempt, ordered by case, repetition and attempt, each marked final or not.
        `case_ids`: only those cases (a page of a 100,000-run experiment, as the UI shows it)."""
        params: dict[str, Any] = {"i": experiment_id}
        where = "experiment_id = {i:UInt64}"
        if case_id is not None:
            where += " AND case_id = {c:String}"
            params["c"] = case_id
        if case_ids is not None:
            where += " AND case_id IN {cs:Array(String)}"
            params["cs"] = case_ids
        columns = _LIGHT + (", trajectory" if with_trajectory else "")
        rows = self.store.query(f"SELECT {columns} FROM runs FINAL WHERE {where} "
                                "ORDER BY case_id, repetition, attempt", params)
        runs = [_run(r, r[23] if with_trajectory else None) for r in rows]
        for a, b in itertools.pairwise(runs):
            if (a.case_id, a.repetition) == (b.case_id, b.repetition):
                a.final = False
        return runs

    def page(self, experiment_id: int, *, limit: int, after: tuple[str, int, int] | None = None, offset: int = 0,
             case_id: str | None = None, status: str | None = None, final_only: bool = True) -> list[Run]:
        """At most `limit` attempts in the order `attempts` gives, from after `after` (a page's last run's case,
        repetition and attempt: a keyset cursor) or `offset`, each marked final or not, filtered in the engine:
        a page of a 100,000-run experiment reads the page, not the experiment.

        A run is final when it is its slot's highest attempt: the slot's attempts after the cursor are all read,
        so their highest is the slot's."""
        params: dict[str, Any] = {"i": experiment_id, "n": limit, "o": offset}
        where = "experiment_id = {i:UInt64}"
        if case_id is not None:
            where += " AND case_id = {c:String}"
            params["c"] = case_id
        if after is not None:
            where += " AND (case_id, repetition, attempt) > ({ac:String}, {ar:UInt32}, {aa:UInt32})"
            params.update(ac=after[0], ar=after[1], aa=after[2])
        kept = ["is_final"] if final_only else []
        if status is not None:
            kept.append("status = {s:String}")
            params["s"] = status
        rows = self.store.query(
            f"SELECT {_LIGHT}, is_final FROM (SELECT {_LIGHT}, "
            "attempt = max(attempt) OVER (PARTITION BY case_id, repetition) AS is_final "
            f"FROM runs FINAL WHERE {where}) {'WHERE ' + ' AND '.join(kept) if kept else ''} "
            "ORDER BY case_id, repetition, attempt LIMIT {n:UInt64} OFFSET {o:UInt64}", params)
        runs = []
        for r in rows:
            run = _run(r)
            run.final = bool(r[23])
            runs.append(run)
        return runs

    def finals(self, experiment_id: int, *, with_trajectory: bool = False) -> list[Run]:
        return [r for r in self.attempts(experiment_id, with_trajectory=with_trajectory) if r.final]

    def final_records(self, experiment_id: int) -> list[RunRecord]:
        """The scorecard's view of the final runs, read in one narrow query (no payloads), ordered by case and
        repetition."""
        rows = self.store.query(
            # LIMIT 1 BY keeps the whole row of the highest attempt, NULL metrics included, as flat columns: the
            # driver decodes them column by column, where argMax(tuple(...)) needs a tuple object per row. The
            # stored run_id is run_id_of(...) (Runs.save writes it), so no hash per row here.
            "SELECT run_id, case_id, repetition, status, nullIf(trajectory_status, ''), duration_seconds, steps, "
            "tool_calls, input_tokens, output_tokens, cost_usd FROM runs FINAL WHERE experiment_id = {i:UInt64} "
            "ORDER BY case_id, repetition, attempt DESC LIMIT 1 BY case_id, repetition", {"i": experiment_id})
        return [RunRecord(run_id, case_id, repetition, status, trajectory_status,
                          RunMetrics(duration, steps, tool_calls, input_tokens, output_tokens, cost))
                for run_id, case_id, repetition, status, trajectory_status, duration, steps, tool_calls,
                input_tokens, output_tokens, cost in rows]

    def get(self, experiment_id: int, case_id: str, repetition: int, attempt: int,
            with_trajectory: bool = False) -> Run | None:
        for run in self.attempts(experiment_id, case_id=case_id, with_trajectory=with_trajectory):
            if run.repetition == repetition and run.attempt == attempt:
                return run
        return None

    def by_id(self, experiment_id: int, run_id: str, with_trajectory: bool = False) -> Run | None:
        rows = self.store.query("SELECT case_id, repetition, attempt FROM runs FINAL WHERE experiment_id = {i:UInt64} "
                                "AND run_id = {r:String}", {"i": experiment_id, "r": run_id})
        if not rows:
            return None
        return self.get(experiment_id, rows[0][0], int(rows[0][1]), int(rows[0][2]), with_trajectory)

    def by_session(self, experiment_id: int, session_id: str) -> Run | None:
        rows = self.store.query("SELECT case_id, repetition, attempt FROM runs FINAL WHERE experiment_id = {i:UInt64} "
                                "AND session_id = {s:String} ORDER BY recorded_at LIMIT 1",
                                {"i": experiment_id, "s": session_id})
        if not rows:
            return None
        return self.get(experiment_id, rows[0][0], int(rows[0][1]), int(rows[0][2]))

    def progress(self, experiment_ids: list[int]) -> dict[int, dict[str, Any]]:
        """Per experiment: counts of final runs by status, and the cost (None when any is unpriced)."""
        if not experiment_ids:
            return {}
        rows = self.store.query(
            "SELECT experiment_id, final.1 AS final_status, count(), sum(final.2), countIf(final.2 IS NULL) FROM ("
            " SELECT experiment_id, case_id, repetition, argMax(tuple(status, cost_usd), attempt) AS final "
            " FROM runs FINAL WHERE experiment_id IN {ids:Array(UInt64)} "
            " GROUP BY experiment_id, case_id, repetition) GROUP BY experiment_id, final_status",
            {"ids": experiment_ids})
        out: dict[int, dict[str, Any]] = {}
        for r in rows:
            entry = out.setdefault(int(r[0]), {"counts": {}, "cost": 0.0, "unpriced": 0})
            entry["counts"][r[1]] = int(r[2])
            entry["cost"] += float(r[3] or 0.0)
            entry["unpriced"] += int(r[4])
        return out
