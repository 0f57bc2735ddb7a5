"""An experiment's runs with their evaluations, as readers want them: filtered, and exported as JSONL or CSV.

A run's `evaluations` are the latest verdict of each evaluator on it. The filters:

- `failed`: the run did not complete, or an evaluation did not pass, or an evaluator erred;
- `case_id`: runs of that case;
- `evaluator`: only that evaluator's verdicts (and, with `failed`, only its failures count).

CSV is long: one row per run and evaluator (a run with no evaluation has one row, evaluator empty),
which is what `pandas.read_csv(...).pivot_table(index="run_id", columns="evaluator", values="score")`
wants. JSONL is one run a line with its `evaluations` list.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

from .runs import Run

EVALUATION_FIELDS = ("evaluator", "score", "passed", "label", "explanation", "error", "version", "cost_usd",
                     "source", "metadata")
CSV_COLUMNS = ("experiment_id", "run_id", "case_id", "repetition", "attempt", "status", "error",
               "trajectory_status", "session_id", "model", "duration_seconds", "steps", "tool_calls",
               "input_tokens", "output_tokens", "cost_usd", "answer", "evaluator", "score", "passed", "label",
               "explanation", "evaluation_error", "evaluator_version", "judge_cost_usd", "evaluation_source")


def evaluation_view(row: dict[str, Any]) -> dict[str, Any]:
    """One stored verdict as the API shows it; `cost_usd` is what the evaluator spent (an LLM judge's call)."""
    return {"evaluator": row["evaluator"], "score": row["score"], "passed": row["passed"], "label": row["label"],
            "explanation": row["explanation"], "error": row["error"], "version": row["evaluator_version"] or None,
            "cost_usd": row["cost_usd"], "source": row["source"], "metadata": row["metadata"]}


def failed(run: Run, evaluations: list[dict[str, Any]]) -> bool:
    return run.status != "completed" or any(e["passed"] is False or e["error"] for e in evaluations)


def with_evaluations(runs: Iterable[Run], details: dict[str, list[dict[str, Any]]], *,
                     evaluator: str | None = None, only_failed: bool = False) -> Iterator[dict[str, Any]]:
    """Each run's view with its `evaluations`, filtered."""
    for run in runs:
        evaluations = [evaluation_view(d) for d in details.get(run.run_id, [])
                       if evaluator is None or d["evaluator"] == evaluator]
        if evaluator is not None and not evaluations and run.status == "completed":
            continue  # the evaluator does not apply to (or has not scored) this run
        if only_failed and not failed(run, evaluations):
            continue
        yield {**run.view(), "evaluations": evaluations}


def jsonl(views: Iterable[dict[str, Any]]) -> str:
    return "".join(json.dumps(v, default=str, separators=(",", ":")) + "\n" for v in views)


def csv_text(views: Iterable[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for view in views:
        metrics = view.get("metrics") or {}
        base = {**{k: view.get(k) for k in CSV_COLUMNS if k in view}, **{k: metrics.get(k) for k in (
            "duration_seconds", "steps", "tool_calls", "input_tokens", "output_tokens", "cost_usd")}}
        for evaluation in view["evaluations"] or [None]:
            row = dict(base)
            if evaluation is not None:
                row.update(evaluator=evaluation["evaluator"], score=evaluation["score"],
                           passed=evaluation["passed"], label=evaluation["label"],
                           explanation=evaluation["explanation"], evaluation_error=evaluation["error"],
                           evaluator_version=evaluation["version"], judge_cost_usd=evaluation["cost_usd"],
                           evaluation_source=evaluation["source"])
            writer.writerow(row)
    return out.getvalue()
