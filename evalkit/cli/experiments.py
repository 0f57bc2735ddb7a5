"""`evalkit experiments list|show|runs|export|compare|gate|cancel|rename|delete`: experiments and their results.

Exit codes: 0 done (the gate: passed), 1 failed (the gate: did not pass), 2 usage, 3 the service could
not be reached. Under `--json` stdout carries JSON only (errors too: `{"error": {...}}`).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import IO, Any

from evalkit.cli.http import (
    EXIT_FAILED,
    EXIT_USAGE,
    CliError,
    call,
    cli_words,
    client_options,
    emit,
    open_response,
    quote,
    text,
)
from evalkit.cli.run import experiment_page, print_scorecard


def _known(args: argparse.Namespace, experiment_id: int, role: str = "") -> Any:
    """The experiment, or a CliError naming how to find the right id."""
    try:
        return call(args, "GET", f"/api/experiments/{experiment_id}")
    except CliError as exc:
        if exc.status == 404:
            raise CliError(f"there is no {role}experiment {experiment_id} (or it is not yours to read); list them "
                           "with `evalkit experiments list`", EXIT_FAILED, status=404) from exc
        raise


def _list(args: argparse.Namespace) -> int:
    query = "&".join(f"{k}={quote(v)}" for k, v in (("agent", args.agent), ("workspace", args.workspace),
                                                    ("status", args.status), ("limit", args.limit)) if v)
    data = call(args, "GET", "/api/experiments" + (f"?{query}" if query else ""))
    lines = []
    for e in data["experiments"]:
        p = e.get("progress") or {}
        scores = " ".join(f"{k}={v:.2f}" if isinstance(v, int | float) else f"{k}=–"
                          for k, v in (e.get("scores") or {}).items())
        cost = "unpriced" if e.get("cost_usd") is None else f"${e['cost_usd']:.4f}"
        name = f" {e['name']}" if e.get("name") else ""
        lines.append(f"{e['experiment_id']:>5} {e['status']:11} {e['agent']:28} {e['dataset']:24} "
                     f"{p.get('recorded', 0)}/{p.get('planned', 0)} {cost:>10} {scores}{name}")
    filters = " ".join(f"--{k} {v}" for k, v in (("agent", args.agent), ("workspace", args.workspace),
                                                 ("status", args.status)) if v)
    empty = (f"no experiment matches {filters}; `evalkit experiments list` lists them all" if filters else
             "no experiments yet; start one with `evalkit run DATASET --agent NAME@WORKSPACE --task module:function`")
    emit(args, data, lines or [empty])
    return 0


def _show(args: argparse.Namespace) -> int:
    data = _known(args, args.experiment)
    config = data.get("config") or {}
    settings = [f"version {config.get('dataset_version')}", f"{config.get('repetitions')} repetition(s)"]
    if config.get("model"):
        settings.append(f"model {config['model']}")
    title = f" \"{config['name']}\"" if config.get("name") else ""
    lines = [f"experiment {data['experiment_id']}{title} ({data['status']}): {data['agent']} on {data['dataset']} "
             + ", ".join(settings)]
    if data.get("status_reason"):
        lines.append(f"  {cli_words(data['status_reason'])}")
    if config.get("description"):
        lines.append(f"  {config['description']}")
    for case in data.get("cases") or []:
        runs = " ".join(f"#{r['repetition']}:{r['status']}({r.get('trajectory_status') or '-'})"
                        for r in case.get("runs") or [])
        lines.append(f"  {case['case_id']:30} {case.get('state', ''):8} {runs}")
    for dropped in data.get("dropped") or []:
        lines.append(f"  dropped {dropped['case_id']}: {dropped['reason']}")
    if data.get("can_resume"):
        lines.append(f"  resumable: `evalkit run {data['dataset']} --agent {data['agent']} --resume "
                     f"{data['experiment_id']}` (add --task for a code agent)")
    lines.append(f"  runs and scores: `evalkit experiments runs {data['experiment_id']}`; page: "
                 f"{experiment_page(args, data['experiment_id'])}")
    emit(args, data, lines)
    if args.scorecard and not args.json:
        print_scorecard(args, args.experiment)
    return 0


def _runs_query(args: argparse.Namespace, evaluations: bool) -> str:
    pairs: list[tuple[str, Any]] = [("evaluations", "true" if evaluations else None),
                                    ("failed", "true" if args.failed else None), ("case_id", args.case),
                                    ("evaluator", args.evaluator), ("status", args.status),
                                    ("attempts", "all" if args.all_attempts else None)]
    kept = [f"{k}={quote(v)}" for k, v in pairs if v is not None]
    return ("?" + "&".join(kept)) if kept else ""


def _same_filters(args: argparse.Namespace) -> list[str]:
    """The flags of `evalkit experiments runs` as given, for the command that shows the next page."""
    flags = [("--failed", args.failed), ("--all-attempts", args.all_attempts)]
    words = [flag for flag, on in flags if on]
    for flag, value in (("--case", args.case), ("--evaluator", args.evaluator), ("--status", args.status),
                        ("--limit", args.limit)):
        if value is not None:
            words += [flag, str(value)]
    return words


def _cell(value: Any, width: int) -> str:
    text_value = "" if value is None else " ".join(str(value).split())
    return text_value if len(text_value) <= width else text_value[:width - 1] + "…"


def _verdict(e: dict[str, Any]) -> str:
    if e.get("error"):
        return "ERROR"
    passed = "pass" if e.get("passed") is True else "FAIL" if e.get("passed") is False else ""
    score = "" if e.get("score") is None else f"{e['score']:.2f}"
    return " ".join(x for x in (passed, score, e.get("label") or "") if x)


def _runs(args: argparse.Namespace) -> int:
    _known(args, args.experiment)
    query = _runs_query(args, True)
    page = "&".join(f"{k}={quote(str(v))}" for k, v in (("limit", args.limit), ("cursor", args.cursor))
                    if v is not None)
    if page:
        query = (query + "&" if query else "?") + page
    data = call(args, "GET", f"/api/experiments/{args.experiment}/runs{query}")
    if args.json:
        emit(args, data, [])
        return 0
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False, pad_edge=False)
    for column in ("case", "#", "status", "trajectory", "evaluator", "verdict", "explanation / error"):
        table.add_column(column, overflow="fold")
    for run in data["runs"]:
        head = [run["case_id"], str(run["repetition"]) + (f" a{run['attempt']}" if run["attempt"] > 1 else ""),
                run["status"], run.get("trajectory_status") or "-"]
        evaluations = run.get("evaluations") or []
        if not evaluations:
            table.add_row(*head, "", "", _cell(run.get("error"), 100))
        for i, e in enumerate(evaluations):
            why = e.get("error") or e.get("explanation") or (run.get("error") if i == 0 else None)
            table.add_row(*(head if i == 0 else [""] * 4), e["evaluator"], _verdict(e), _cell(why, 100))
    console = Console() if sys.stdout.isatty() else Console(width=200)
    if not data["runs"]:
        print("no runs match" + (" (filters: " + _runs_query(args, False).lstrip("?") + ")"
                                 if _runs_query(args, False) else ""))
        return 0
    console.print(table)
    if data.get("next_cursor"):
        again = " ".join(shlex.quote(a) for a in [*_same_filters(args), "--cursor", data["next_cursor"]])
        print(f"{len(data['runs'])} run(s) on this page; the next page: `evalkit experiments runs {args.experiment} "
              f"{again}`, or every run at once: `evalkit experiments export {args.experiment} --format csv`")
    else:
        print(f"{len(data['runs'])} run(s); export them with `evalkit experiments export {args.experiment} "
              "--format csv`")
    return 0


def _output_file(name: str, mode: str) -> IO[Any]:
    """A file the command writes (-o, --markdown): one that cannot be opened is a usage error saying so."""
    try:
        return open(name, mode)
    except OSError as exc:
        raise CliError(f"cannot write {name}: {exc.strerror or exc}; give a file in a folder that exists and "
                       "that you can write to", EXIT_USAGE) from exc


def _export(args: argparse.Namespace) -> int:
    _known(args, args.experiment)
    query = _runs_query(args, False)
    path = f"/api/experiments/{args.experiment}/export?format={args.format}" + (
        "&" + query.lstrip("?") if query else "")
    if args.output in (None, "-"):
        with open_response(args, "GET", path, timeout=300) as response:
            for chunk in iter(lambda: response.read(1 << 16), b""):
                sys.stdout.buffer.write(chunk)
        sys.stdout.buffer.flush()
        return 0
    with open_response(args, "GET", path, timeout=300) as response, _output_file(args.output, "wb") as handle:
        for chunk in iter(lambda: response.read(1 << 16), b""):
            handle.write(chunk)
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _compare(args: argparse.Namespace) -> int:
    _known(args, args.experiment)
    _known(args, args.baseline, "baseline ")
    suffix = "&allow_incomplete=true" if args.allow_incomplete else ""
    path = f"/api/experiments/{args.experiment}/compare?baseline_id={args.baseline}&alpha={args.alpha}{suffix}"
    if args.json:
        emit(args, call(args, "GET", path), [])
    else:
        print(text(args, path + "&format=markdown"))
    return 0


def _min_score(values: list[str]) -> float | dict[str, float] | None:
    if not values:
        return None
    try:
        if len(values) == 1 and "=" not in values[0]:
            return float(values[0])
        scores: dict[str, float] = {}
        for value in values:
            name, sep, number = value.partition("=")
            if not sep:
                raise ValueError(value)
            scores[name] = float(number)
    except ValueError as exc:
        raise CliError(f"--min-score {' '.join(values)!r}: write a number (--min-score 0.8), or one "
                       "evaluator=number per evaluator (--min-score contains=0.8)", EXIT_USAGE) from exc
    return scores


def _gate(args: argparse.Namespace) -> int:
    if args.baseline == args.experiment:
        # Nothing regresses against itself: in CI this gate would pass whatever changed.
        raise CliError(f"experiment {args.experiment} is gated against itself, which passes whatever changed; pass "
                       f"the baseline's id: `evalkit experiments gate {args.experiment} --baseline N`, N the "
                       "experiment before the change (list them with `evalkit experiments list`)", EXIT_USAGE)
    _known(args, args.experiment)
    _known(args, args.baseline, "baseline ")
    body: dict[str, Any] = {"baseline_id": args.baseline, "alpha": args.alpha, "min_score": _min_score(args.min_score),
            "max_regressions": args.max_regressions, "allow_incomplete": args.allow_incomplete,
            "fail_on_significant_regression": not args.ignore_significance, "evaluators": args.gate_evaluator or None}
    if args.min_pairs is not None:
        body["min_pairs"] = args.min_pairs
    data = call(args, "POST", f"/api/experiments/{args.experiment}/gate", body)
    # A failed gate is an answer, not an error, so its reasons never went through cli_words: they said "lower
    # min_pairs" and "set allow_incomplete", the API's words, where the flags are --min-pairs and --allow-incomplete.
    markdown = cli_words(data.get("markdown") or "")
    if args.markdown:
        with _output_file(args.markdown, "w") as handle:
            handle.write(markdown)
    if args.json:
        emit(args, data, [])
    else:
        print(markdown)
        print("gate: " + ("passed" if data["passed"] else "FAILED: " + cli_words("; ".join(data.get("reasons") or []))))
    return 0 if data["passed"] else EXIT_FAILED


def _cancel(args: argparse.Namespace) -> int:
    before = _known(args, args.experiment)
    if before["status"] in ("completed", "failed", "cancelled"):
        emit(args, before, [f"experiment {args.experiment} is already {before['status']}; nothing to cancel"])
        return 0
    data = call(args, "PATCH", f"/api/experiments/{args.experiment}",
                {"status": "cancelled", "reason": args.reason or "cancelled with `evalkit experiments cancel`"})
    emit(args, data, [f"experiment {args.experiment} cancelled: no more runs start; its runs so far stay readable "
                      f"(`evalkit experiments runs {args.experiment}`)"])
    return 0


def _rename(args: argparse.Namespace) -> int:
    _known(args, args.experiment)
    body: dict[str, Any] = {"name": args.name}
    if args.description is not None:
        body["description"] = args.description
    data = call(args, "PATCH", f"/api/experiments/{args.experiment}", body)
    emit(args, data, [f"experiment {args.experiment} is now named {args.name!r}"])
    return 0


def _delete(args: argparse.Namespace) -> int:
    _known(args, args.experiment)
    if not args.yes:
        raise CliError(f"deleting experiment {args.experiment} removes its runs and evaluations for good; "
                       f"run `evalkit experiments delete {args.experiment} --yes` to do it", EXIT_USAGE)
    data = call(args, "DELETE", f"/api/experiments/{args.experiment}")
    emit(args, data, [f"experiment {args.experiment} deleted ({data.get('runs', 0)} run row(s), "
                      f"{data.get('evaluations', 0)} evaluation row(s))"])
    return 0


def _filters(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    p.add_argument("--failed", action="store_true",
                   help="only runs that did not complete, failed an evaluation or met an evaluator error")
    p.add_argument("--case", metavar="CASE_ID", help="only this case's runs")
    p.add_argument("--evaluator", metavar="NAME", help="only this evaluator's verdicts")
    p.add_argument("--status", choices=["completed", "failed", "timeout", "cancelled"], help="only runs in this state")
    p.add_argument("--all-attempts", action="store_true", help="every attempt, not only the final one of each run")
    return p


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    experiments = sub.add_parser("experiments", help="experiments and their scorecards").add_subparsers(
        dest="action", required=True)
    p = client_options(experiments.add_parser("list", help="experiments, newest first"))
    p.add_argument("--agent")
    p.add_argument("--workspace")
    p.add_argument("--status", help="pending, running, evaluating, completed, failed, cancelled or stopped")
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(func=_list)
    p = client_options(experiments.add_parser("show", help="an experiment: config, cases, runs"))
    p.add_argument("experiment", type=int)
    p.add_argument("--scorecard", action="store_true", help="print the scorecard too")
    p.set_defaults(func=_show)
    p = _filters(client_options(experiments.add_parser(
        "runs", help="an experiment's runs with each evaluator's verdict and explanation (a table, or --json)")))
    p.add_argument("experiment", type=int)
    p.add_argument("--limit", type=int, help="runs a page (1..1000; the service shows 50 unless asked)")
    p.add_argument("--cursor", help="the page after the one that printed this cursor")
    p.set_defaults(func=_runs)
    p = _filters(client_options(experiments.add_parser(
        "export", help="the runs with their scores as CSV (a row per run and evaluator) or JSONL (a run a line)")))
    p.add_argument("experiment", type=int)
    p.add_argument("--format", choices=["csv", "jsonl"], default="jsonl")
    p.add_argument("--output", "-o", metavar="FILE", help="write here instead of stdout")
    p.set_defaults(func=_export)
    p = client_options(experiments.add_parser("cancel", help="cancel an experiment: no more runs start"))
    p.add_argument("experiment", type=int)
    p.add_argument("--reason")
    p.set_defaults(func=_cancel)
    p = client_options(experiments.add_parser("rename", help="rename an experiment (and change its description)"))
    p.add_argument("experiment", type=int)
    p.add_argument("name")
    p.add_argument("--description")
    p.set_defaults(func=_rename)
    p = client_options(experiments.add_parser("delete", help="delete an experiment with its runs and evaluations"))
    p.add_argument("experiment", type=int)
    p.add_argument("--yes", action="store_true", help="yes, delete it for good")
    p.set_defaults(func=_delete)
    p = client_options(experiments.add_parser("compare", help="compare with a baseline, paired per case"))
    p.add_argument("experiment", type=int)
    p.add_argument("--baseline", type=int, required=True)
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--allow-incomplete", action="store_true")
    p.set_defaults(func=_compare)
    p = client_options(experiments.add_parser(
        "gate", help="a CI gate against a baseline: exit 0 when it passes, 1 when it does not"))
    p.add_argument("experiment", type=int)
    p.add_argument("--baseline", type=int, required=True, help="the experiment to compare with")
    p.add_argument("--alpha", type=float, default=0.05)
    p.add_argument("--min-score", action="append", default=[], metavar="SCORE|EVALUATOR=SCORE")
    p.add_argument("--max-regressions", type=int)
    p.add_argument("--min-pairs", type=int, metavar="N",
                   help="the fewest paired cases an evaluator needs to pass (default: the service's)")
    p.add_argument("--evaluator", dest="gate_evaluator", action="append", default=[])
    p.add_argument("--ignore-significance", action="store_true",
                   help="do not fail on a significant regression alone")
    p.add_argument("--allow-incomplete", action="store_true")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown report here (for a PR comment)")
    p.set_defaults(func=_gate)
