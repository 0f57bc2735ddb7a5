"""Experiments: the list, one experiment (scorecard, charts, runs matrix), a run, and a comparison."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
from aiohttp import web
from markupsafe import Markup

from evalkit.api import ApiError, Caller
from evalkit.query_params import float_param
from evalkit.scoring.compare import GateConfig, gate
from evalkit.scoring.experiments import STATUSES, Experiment
from evalkit.scoring.scorecard import (
    EvaluationRecord,
    ExperimentRecords,
    MetricSummary,
    RecordColumns,
    RunRecord,
    mean_scores,
    run_metric_summaries,
)
from evalkit.scoring.service import ScoringService
from evalkit.scoring_hint import evaluate_command, python_evaluator_refs
from evalkit.ui.charts import histogram, interval_bar
from evalkit.ui.page import Page, page, query_int, with_query
from evalkit.ui.render import money, priced_share, seconds
from evalkit.ui.session_pages import steps_page, subagents_of, trajectory_summary

CASES_PER_PAGE = 50
# Statuses an experiment's page keeps following (it refreshes until the experiment leaves them); the filter's
# choices are the service's own STATUSES, so a status the service gains is one the filter knows.
LIVE_STATUSES = ("pending", "running", "evaluating")


def scoring_service(request: web.Request) -> ScoringService:
    service = request.app["context"].extras.get("scoring")
    if not isinstance(service, ScoringService):
        raise ApiError(503, "the scoring part is not installed in this server; install evalkit[server]")
    return service


def _experiment_id(raw: str, what: str = "experiment id") -> int:
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 18:  # past 18 digits: beyond the store's Int64
        raise ApiError(400, f"{what} {raw[:40]!r} must be a whole number, as in /experiments/12")
    return int(raw)


@page
async def experiments(request: web.Request) -> Page:
    q = request.query
    status = q.get("status", "")
    if status and status not in STATUSES:
        raise ApiError(400, f"status={status!r} is not known; use one of {', '.join(STATUSES)}")
    limit = query_int(request, "limit", 50, low=1, high=500)
    caller: Caller = request["caller"]
    workspace = q.get("workspace") or None
    if workspace:
        caller.require_role(workspace, "reader", "list experiments")  # as GET /api/experiments does
    visible = [workspace] if workspace else (None if caller.is_admin else sorted(caller.workspaces))
    rows = await asyncio.to_thread(experiment_summaries, request, workspaces=visible, agent=q.get("agent") or None,
                                   status=status or None, limit=limit, score_running=True)
    # Whether more are listed than shown is known before the dataset filter, which narrows this page only: the
    # next larger page may hold the dataset's experiments. "Show more" keeps the filters.
    more_url = with_query(request, limit=min(limit * 2, 500)) if len(rows) >= limit and limit < 500 else None
    if q.get("dataset"):
        rows = [e for e in rows if q["dataset"] in e["dataset"]]
    context = {"experiments": rows, "query": dict(q), "statuses": STATUSES, "limit": limit, "more_url": more_url,
               "filtered": any(q.get(k) for k in ("workspace", "agent", "dataset", "status")),
               "live": any(e["status"] in LIVE_STATUSES for e in rows)}
    return Page("experiments.html", context, {"experiments": rows}, api="/api/experiments", title="Experiments")


def experiment_summaries(request: web.Request, *, workspaces: list[str] | None, limit: int,
                         agent: str | None = None, status: str | None = None, score_running: bool = True
                         ) -> list[dict[str, Any]]:
    """What GET /api/experiments lists (ScoringService.summary of each), with a completed experiment's
    progress and scores counted once from its cached records and remembered (the route counts them again
    for every experiment at every request: seconds with 100,000-run experiments in the list)."""
    s = scoring_service(request)
    found = s.experiments.find(workspaces=workspaces, agent=agent, status=status, limit=limit)
    running = [e.experiment_id for e in found if e.status != "completed"]
    progress = s.runs.progress(running) if running else {}
    return [s.summary(e, progress.get(e.experiment_id), s.scores(e) if score_running else None)
            if e.status != "completed" else s.summary(e, *_counted(s.records(e))) for e in found]


def progress_of(s: ScoringService, e: Any, records: ExperimentRecords | None = None) -> dict[str, Any] | None:
    """`Runs.progress` of one experiment. A completed one's is counted from its cached records (the
    progress query aggregates every run row: most of a second on 100,000 runs), once per records object."""
    if e.status != "completed" and records is None:
        return s.runs.progress([e.experiment_id]).get(e.experiment_id)
    return _counted(records if records is not None else s.records(e))[0]


def _counted(records: ExperimentRecords) -> tuple[dict[str, Any] | None, dict[str, float | None]]:
    """(progress, scores) counted from the records, once per records object: the service keeps a completed
    experiment's, so the list counts a 100,000-run experiment once, not at every request."""
    def progress() -> dict[str, Any] | None:
        cost = run_metrics(records)["cost_usd"]  # the spend as the scorecard and the comparison sum it
        return ({"counts": records.columns.status_counts(), "cost": cost.known_total, "unpriced": cost.missing}
                if len(records.columns.run_ids) else None)

    return records.derived("ui.progress", progress), records.derived("ui.scores", lambda: mean_scores(records))


def shown_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config as the page shows it: per-case mappings (100,000 entries on a big experiment) as counts."""
    shown: dict[str, Any] = {}
    for key, value in config.items():
        if key in ("dataset_workspace", "dataset_name"):
            continue
        if key == "case_evaluators" and isinstance(value, dict):
            shown[key] = f"{len(value)} cases, evaluators: {sorted({n for v in value.values() for n in v})}"
        else:
            shown[key] = value
    return shown


# A run that did not complete is named as a run ("run failed"), never as a verdict ("not passed"): before, a task
# that raised and an evaluator that said no both read "failed" in the matrix.
_RUN_OUTCOMES = {"failed": "run failed", "timeout": "run timed out", "cancelled": "run cancelled"}


def _outcome(records: ExperimentRecords, evaluator: str | None, run: RunRecord, ev: EvaluationRecord | None
             ) -> tuple[str, str]:
    """(css class, text) of one run's cell: its evaluator's verdict `ev` when it has one, else its status."""
    if run.status != "completed":
        return f"run-{run.status}", _RUN_OUTCOMES.get(run.status, run.status)
    if evaluator:
        if ev is not None:
            if ev.error:
                return "eval-error", "evaluator error"
            if ev.passed is not None:
                return ("pass", "passed") if ev.passed else ("fail", "not passed")
            if ev.score is not None:
                band = min(4, int(float(ev.score) * 5)) if 0 <= ev.score <= 1 else 2
                return f"score-{band}", f"{ev.score:.3g}"
        if records.applies(run.case_id, evaluator):
            return "unscored", "not scored yet"
    return "run-completed", "completed"


def _evaluate_command(e: Experiment, evaluator: str, python: bool, rescore: bool) -> str:
    """The command that scores `evaluator` on an experiment's runs; a Python evaluator runs in the caller's code,
    so it is named (`evalkit evaluate N` alone leaves its scores missing)."""
    named = {evaluator: python_evaluator_refs(e.config).get(evaluator)} if python else {}
    return evaluate_command(e.experiment_id, named, rescore=rescore)


def _next_step(css: str, e: Experiment, evaluator: str | None, python: bool, error: str | None) -> str | None:
    """What to do about a cell: read a failed run's error, re-score an evaluator error, score what is unscored."""
    if css in ("run-failed", "run-timeout"):
        said = " ".join((error or "").split())
        said = said if len(said) <= 160 else said[:159] + "…"
        return (f"the task did not complete ({said}); open the run for its whole error" if said else
                "the task did not complete; open the run for its error")
    if css == "eval-error" and evaluator:
        # Scoring again asks again wherever the last verdict was an error (and only there: no --rescore).
        return (f"the evaluator could not judge this run (open it for the error); score it again with "
                f"`{_evaluate_command(e, evaluator, python, rescore=False)}`")
    if css == "unscored" and evaluator:
        return f"score it with `{_evaluate_command(e, evaluator, python, rescore=False)}`"
    if css == "fail":
        return "the evaluator judged the answer wrong; open the run for its explanation"
    return None


def _matrix(request: web.Request, s: ScoringService, e: Experiment, records: ExperimentRecords,
            evaluator: str | None) -> dict[str, Any]:
    cases, repetitions = e.cases, e.repetitions
    pages = max(1, math.ceil(len(cases) / CASES_PER_PAGE))
    number = query_int(request, "page", 1, low=1, high=pages)
    shown = cases[(number - 1) * CASES_PER_PAGE:number * CASES_PER_PAGE]
    python = evaluator in e.code_evaluators
    # Records only for the shown cases' runs: the columns hold every run without an object each.
    columns = records.columns
    rows: list[dict[str, Any]] = []
    for case_id in shown:
        runs = {int(columns.repetition[at]): at for at in columns.runs_of(case_id)}
        cells: list[dict[str, Any]] = []
        for rep in range(repetitions):
            at = runs.get(rep)
            if at is None:
                cells.append({"repetition": rep, "run_id": None, "class": "pending", "text": "not run yet",
                              "next": None})
            else:
                run = columns.run_record(at)
                verdict = columns.verdict(evaluator, at) if evaluator else None
                css, text = _outcome(records, evaluator, run, verdict)
                # A run that did not complete says its error, read below for the shown ones.
                did_not_complete = css in ("run-failed", "run-timeout")
                cells.append({"repetition": rep, "run_id": run.run_id, "class": css, "text": text,
                              "next": None if did_not_complete else _next_step(
                                  css, e, evaluator, python, verdict.error if verdict is not None else None)})
        rows.append({"case_id": case_id, "cells": cells})
    failed = [row["case_id"] for row in rows if any(c["class"] in ("run-failed", "run-timeout") for c in row["cells"])]
    if failed:
        # The errors of the shown runs that did not complete, read for those cases only (the columns hold none).
        errors = {r.run_id: r.error for r in s.runs.attempts(e.experiment_id, case_ids=failed) if r.final}
        for row in rows:
            for cell in row["cells"]:
                if cell["class"] in ("run-failed", "run-timeout"):
                    cell["next"] = _next_step(cell["class"], e, evaluator, python,
                                              errors.get(cell["run_id"]))
    shown_classes = {c["class"] for row in rows for c in row["cells"]}
    steps = []
    if shown_classes & {"run-failed", "run-timeout"}:
        steps.append("run failed / run timed out: the task raised, returned an error or ran out of time, so no "
                     "evaluator judged it (the scorecard counts it as not passed); open its cell for the error")
    if "eval-error" in shown_classes and evaluator:
        steps.append(f"evaluator error: {evaluator} could not judge the run; open its cell for the error, then "
                     f"score it again with `{_evaluate_command(e, evaluator, python, rescore=False)}`")
    return {"rows": rows, "page": number, "pages": pages, "cases": len(cases), "next_steps": steps,
            "prev_url": with_query(request, page=number - 1) if number > 1 else None,
            "next_url": with_query(request, page=number + 1) if number < pages else None}


@page
async def experiment(request: web.Request) -> Page:
    caller: Caller = request["caller"]
    s = scoring_service(request)
    experiment_id = _experiment_id(request.match_info["id"])

    def load() -> dict[str, Any]:
        e = s.experiment(caller, experiment_id)
        scorecard, records = s.scorecard(e)
        progress = progress_of(s, e, records)
        # The scorecard's means are the list's scores (the same counting rules); asking s.scores would count again.
        summary = s.summary(e, progress, {ev.evaluator: ev.mean for ev in scorecard.evaluators})
        names = [ev.evaluator for ev in scorecard.evaluators]
        chosen = request.query.get("evaluator") or (names[0] if names else None)
        if chosen and chosen not in names:
            raise ApiError(400, f"evaluator={chosen!r} is not one of this experiment's ({', '.join(names)})")
        charts = records.derived("ui.charts", lambda: _charts(records.columns))
        bars = {ev.evaluator: interval_bar(ev.mean, ev.ci_low, ev.ci_high, label=ev.evaluator,
                                           lo=0.0, hi=1.0 if ev.kind == "pass_fail" else max(1.0, ev.ci_high or 1.0))
                for ev in scorecard.evaluators}
        matrix = _matrix(request, s, e, records, chosen)
        return {"e": e, "summary": summary, "scorecard": scorecard, "charts": charts, "bars": bars,
                "matrix": matrix, "evaluator": chosen, "config": shown_config(e.config),
                "unscored": sum(ev.unscored for ev in scorecard.evaluators), "repetitions": e.repetitions}

    context = await asyncio.to_thread(load)
    e = context.pop("e")
    context["live"] = e.status in LIVE_STATUSES
    context["experiment_id"] = e.experiment_id
    data = {**context["summary"], "config": context["config"],
            "scorecard": context["scorecard"].model_dump(mode="json"),
            "matrix": {k: v for k, v in context["matrix"].items() if k != "rows"} | {"rows": context["matrix"]["rows"]}}
    return Page("experiment.html", context, data, api=f"/api/experiments/{e.experiment_id}",
                title=f"Experiment {e.experiment_id}")


@page
async def run(request: web.Request) -> Page:
    caller: Caller = request["caller"]
    s = scoring_service(request)
    experiment_id = _experiment_id(request.match_info["id"])
    run_id = request.match_info["run_id"]

    def load() -> dict[str, Any]:
        e = s.experiment(caller, experiment_id)
        found = s.runs.by_id(e.experiment_id, run_id, True)
        if found is None:
            raise ApiError(404, f"experiment {e.experiment_id} has no run {run_id!r}; open /experiments/"
                                f"{e.experiment_id} and pick a cell of the runs matrix")
        case = next((c for c in s.pinned_cases(e) if c.id == found.case_id), None)
        return {"e": e, "run": found, "case": case, "evaluations": s.evaluations.detail(e.experiment_id, run_id)}

    loaded = await asyncio.to_thread(load)
    e, found = loaded["e"], loaded["run"]
    document = found.trajectory
    context: dict[str, Any] = {"experiment_id": e.experiment_id, "agent_id": e.agent_id, "run": found.view(),
                               "case": loaded["case"].model_dump(mode="json") if loaded["case"] else None,
                               "evaluations": loaded["evaluations"], "document": document,
                               "problems": found.problems, "live": False}
    if document:
        summary = trajectory_summary(document)
        summary["status"] = summary["status"] or found.trajectory_status or None  # kept documents may lack it
        context.update(summary=summary, subagents=subagents_of(document), **steps_page(request, document))
    data = {"run": found.view(), "case": context["case"], "evaluations": loaded["evaluations"],
            "trajectory": document}
    return Page("run.html", context, data, api=f"/api/experiments/{e.experiment_id}/runs/{run_id}/trajectory",
                title=f"Run {found.case_id} #{found.repetition}")


def _gate_config(request: web.Request) -> GateConfig | None:
    q = request.query
    wanted = {k: q[k] for k in ("min_score", "max_regressions", "min_pairs") if q.get(k)}
    if not wanted and not q.get("gate"):
        return None
    # Each threshold is read on its own, so that a bad one is named with the range it may take (nan would gate
    # on "score < minimum nan%", hence finite only).
    min_score = float_param(request, "min_score")
    max_regressions = query_int(request, "max_regressions", -1, low=0)
    # The gate's "pairs" check tells a small dataset's user to lower min_pairs: the page takes it, as the CLI.
    min_pairs = query_int(request, "min_pairs", 0, low=1)
    return GateConfig.model_validate({
        **({"min_score": min_score} if min_score is not None else {}),
        **({"max_regressions": max_regressions} if "max_regressions" in wanted else {}),
        **({"min_pairs": min_pairs} if "min_pairs" in wanted else {}),
        "allow_incomplete": bool(q.get("allow_incomplete"))})


def case_mean(records: ExperimentRecords, case_id: str, field: str) -> float | None:
    """The mean of one metric over a case's runs that know it; a cost is unknown when any run is unpriced (the
    mean of the priced ones would show an unpriced case as cheap, a failed run's $0 as the case's cost)."""
    columns = records.columns
    at = columns.runs_of(case_id)
    values = columns.metrics[field][at.start:at.stop]
    known = values[~np.isnan(values)]
    if field == "cost_usd" and len(known) < len(values):
        return None
    return float(known.mean()) if len(known) else None


def cost_per_run(summary: MetricSummary) -> str:
    """One side's cost per run as its scorecard says it: the mean over its priced runs only, with their count when
    some are unpriced ("$0.0200 (2 of 8 priced)"), unknown when none is; never with an unpriced run as $0. No
    difference of the two sides is shown: over different priced runs it would compare unlike things."""
    return money(summary.mean if summary.n else None) + priced_share(summary)


@page
async def compare(request: web.Request) -> Page:
    caller: Caller = request["caller"]
    s = scoring_service(request)
    experiment_id = _experiment_id(request.match_info["id"])
    raw = request.query.get("baseline", "") or request.query.get("baseline_id", "")
    if not raw:
        raise ApiError(400, f"say which experiment to compare with: /experiments/{experiment_id}/compare?baseline=N")
    baseline_id = _experiment_id(raw, "baseline")
    try:
        alpha = float(request.query.get("alpha", "0.05"))
    except ValueError as exc:
        raise ApiError(400, "alpha must be a number between 0 and 1, e.g. alpha=0.05") from exc
    if not 0 < alpha < 1:
        raise ApiError(400, "alpha must be between 0 and 1, e.g. alpha=0.05")
    config = _gate_config(request)

    def load() -> dict[str, Any]:
        e = s.experiment(caller, experiment_id)
        base = s.experiment(caller, baseline_id)
        comparison, cand_records, base_records = s.comparison_and_records(e, base, alpha=alpha,
                                                                           allow_incomplete=True)
        # Only the run metrics: a whole scorecard (its bootstraps) would cost seconds on 100,000 runs.
        cand_sc, base_sc = run_metrics(cand_records), run_metrics(base_records)
        order: dict[str, int] = {}
        for ev in comparison.evaluators:
            for d in ev.regressed:
                order.setdefault(d.case_id, 0)
            for d in ev.improved:
                order.setdefault(d.case_id, 1)
        every = list(dict.fromkeys([*e.cases, *base.cases]))
        every.sort(key=lambda c: order.get(c, 2))
        pages = max(1, math.ceil(len(every) / CASES_PER_PAGE))
        number = query_int(request, "page", 1, low=1, high=pages)
        shown = every[(number - 1) * CASES_PER_PAGE:number * CASES_PER_PAGE]
        answers: dict[tuple[str, str, int], str | None] = {}
        for side, x in (("candidate", e), ("baseline", base)):
            for r in s.runs.attempts(x.experiment_id, case_ids=shown):
                if r.final:
                    answers[(side, r.case_id, r.repetition)] = r.answer if r.answer is not None else r.error
        names = [ev.evaluator for ev in comparison.evaluators]
        kinds = {ev.evaluator: ev.kind for ev in comparison.evaluators}
        cand_means = {n: _means(cand_records, n) for n in names}
        base_means = {n: _means(base_records, n) for n in names}
        # A case run on one side only, or scored on one side only, is not compared: "same" would say the
        # candidate did as well on it.
        unpaired = {**{c: "only in baseline" for c in comparison.cases_only_in_baseline},
                    **{c: "only in candidate" for c in comparison.cases_only_in_candidate}}
        rows = []
        for case_id in shown:
            compared = any(case_id in cand_means[n] and case_id in base_means[n] for n in names)
            rows.append({
                "case_id": case_id,
                "kind": ("regressed", "improved", unpaired.get(case_id, "same" if compared else "not compared"))[
                    order.get(case_id, 2)],
                "scores": [{"evaluator": n, "kind": kinds[n], "baseline": base_means[n].get(case_id),
                            "candidate": cand_means[n].get(case_id)} for n in names],
                # One diff per repetition both sides ran: the outputs of repetition k side by side.
                "diffs": [{"repetition": rep, "baseline": answers.get(("baseline", case_id, rep)),
                           "candidate": answers.get(("candidate", case_id, rep))}
                          for rep in sorted({k[2] for k in answers if k[1] == case_id})],
                "baseline_cost": case_mean(base_records, case_id, "cost_usd"),
                "candidate_cost": case_mean(cand_records, case_id, "cost_usd"),
                "baseline_seconds": case_mean(base_records, case_id, "duration_seconds"),
                "candidate_seconds": case_mean(cand_records, case_id, "duration_seconds")})
        bars = {}
        for ev in comparison.evaluators:
            reach = max(abs(ev.ci_low or 0), abs(ev.ci_high or 0), abs(ev.delta or 0), 0.05)
            bars[ev.evaluator] = interval_bar(ev.delta, ev.ci_low, ev.ci_high, lo=-reach, hi=reach,
                                              label=f"{ev.evaluator} delta", zero_line=True)
        result = gate(comparison, config) if config is not None else None
        # The API and CLI refuse to compare an unfinished experiment unless told to; the page compares what there
        # is, so it says what is missing and the command that finishes it.
        incomplete = [why.reason for why in (s.incomplete(e), s.incomplete(base)) if why is not None]
        return {"e": e, "base": base, "comparison": comparison, "rows": rows, "bars": bars, "gate": result,
                "incomplete": incomplete,
                "cand_sc": cand_sc, "base_sc": base_sc, "cand_cost": cost_per_run(cand_sc["cost_usd"]),
                "base_cost": cost_per_run(base_sc["cost_usd"]), "page": number, "pages": pages,
                "total_cases": len(every)}

    ctx = await asyncio.to_thread(load)
    number, pages = ctx["page"], ctx["pages"]
    ctx.update(experiment_id=experiment_id, baseline_id=baseline_id, alpha=alpha, query=dict(request.query),
               prev_url=with_query(request, page=number - 1) if number > 1 else None,
               next_url=with_query(request, page=number + 1) if number < pages else None)
    data = {"comparison": ctx["comparison"].model_dump(mode="json"), "incomplete": ctx["incomplete"],
            "gate": ctx["gate"].model_dump(mode="json", exclude={"comparison"}) if ctx["gate"] else None,
            "cases": ctx["rows"],
            # Each side's run cost as its scorecard has it (mean, p50, p90 over its n priced runs; total null when
            # any is unpriced): the page's cost rows, with the counts that say what each mean is over.
            "cost_usd": {"baseline": ctx["base_sc"]["cost_usd"].model_dump(mode="json"),
                         "candidate": ctx["cand_sc"]["cost_usd"].model_dump(mode="json")}}
    return Page("compare.html", ctx, data, api=f"/api/experiments/{experiment_id}/compare?baseline_id={baseline_id}",
                title=f"Experiment {experiment_id} vs {baseline_id}")


def _charts(columns: RecordColumns) -> list[Markup]:
    return [histogram(columns.not_cancelled("cost_usd"), title="Cost per run", shown=money),
            histogram(columns.not_cancelled("input_tokens") + columns.not_cancelled("output_tokens"),
                      title="Tokens per run"),
            histogram(columns.not_cancelled("duration_seconds"), title="Duration per run", shown=seconds)]


def run_metrics(records: ExperimentRecords) -> dict[str, MetricSummary]:
    """The scorecard's summaries of what the runs took (`run_metric_summaries`), without its bootstraps."""
    return records.derived("ui.run_metrics", lambda: run_metric_summaries(records.columns))


def _means(records: ExperimentRecords, evaluator: str) -> dict[str, float]:
    def compute() -> dict[str, float]:
        values = records.values(evaluator)
        return dict(zip(values.case_ids, values.case_means().tolist(), strict=True))

    return records.derived(f"ui.means.{evaluator}", compute)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/experiments", experiments)
    app.router.add_get("/experiments/{id}", experiment)
    app.router.add_get("/experiments/{id}/runs/{run_id}", run)
    app.router.add_get("/experiments/{id}/compare", compare)
