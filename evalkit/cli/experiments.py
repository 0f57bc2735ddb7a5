"""`evalkit run`, `evalkit evaluate`, `evalkit experiments list|show|compare|gate`.

`run` drives a Python task through the SDK (`--task module:function`) or, for
a harness agent, asks the service to drive it and follows along.
Exit codes: 0 done (the gate: passed), 1 failed (the gate: did not pass), 2
usage, 3 the service could not be reached.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Callable
from typing import Any

from evalkit.cli.http import (
    EXIT_FAILED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CliError,
    call,
    client_options,
    service_token,
    service_url,
)
from evalkit.cli.http import print_result as _print

FINAL = ("completed", "failed", "cancelled")


def load_object(spec: str) -> Any:
    """`package.module:attribute` (or `path/to/file.py:attribute`), imported from the current directory."""
    module_name, sep, attribute = spec.partition(":")
    if not sep or not attribute:
        raise CliError(f"{spec!r} must be written module:function (e.g. agent:answer)", EXIT_USAGE)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        if module_name.endswith(".py"):
            location = importlib.util.spec_from_file_location(os.path.basename(module_name)[:-3], module_name)
            if location is None or location.loader is None:
                raise ImportError(f"cannot load {module_name}")
            module = importlib.util.module_from_spec(location)
            location.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"cannot import {module_name}: {exc}", EXIT_USAGE) from exc
    try:
        return getattr(module, attribute)
    except AttributeError as exc:
        raise CliError(f"{module_name} has no {attribute}", EXIT_USAGE) from exc


def _sdk_errors(fn: Callable[[], int]) -> int:
    from evalkit.sdk.binding import BindingError
    from evalkit.sdk.client import ServiceError, ServiceUnreachable
    from evalkit.sdk.config import ConfigError
    from evalkit.sdk.lease import LeaseLost
    from evalkit.sdk.scoring import ScoringError

    try:
        return fn()
    except ServiceUnreachable as exc:
        raise CliError(str(exc), EXIT_UNREACHABLE) from exc
    except (ConfigError, BindingError, ValueError, TypeError) as exc:
        raise CliError(str(exc), EXIT_USAGE) from exc
    except (ServiceError, LeaseLost, ScoringError) as exc:
        raise CliError(str(exc), EXIT_FAILED) from exc


def _sdk_connection(args: argparse.Namespace) -> dict[str, Any]:
    return {"url": service_url(args), "token": service_token(args)}


def _run(args: argparse.Namespace) -> int:
    if args.task:
        return _sdk_errors(lambda: _run_task(args))
    if args.dry_run is not None:
        raise CliError("--dry-run needs --task (a harness agent's dry run is the harness's own business)", EXIT_USAGE)
    return _run_harness(args)


def _run_task(args: argparse.Namespace) -> int:
    from evalkit.sdk.runner import run_experiment

    task = load_object(args.task)
    evaluators = [load_object(spec) for spec in args.evaluator]
    judge = {"base_url": args.judge_base_url, "model": args.judge_model} if args.judge_base_url else None
    result = run_experiment(
        dataset=args.dataset, agent=args.agent, task=task, evaluators=evaluators, repetitions=args.repetitions,
        concurrency=args.concurrency, case_ids=args.case or None, split=args.split, model=args.model,
        resume=args.resume, dry_run=args.dry_run or False, trajectory_wait_seconds=args.trajectory_wait_seconds,
        judge=judge, timeout=args.timeout, retries=args.retries, max_cost_usd=args.max_cost_usd,
        max_tokens=args.max_tokens, **_sdk_connection(args))
    if args.json:
        print(result.model_dump_json(indent=2))
    return 0


def _run_harness(args: argparse.Namespace) -> int:
    agent = call(args, "GET", f"/api/agents/{args.agent}")
    if agent.get("kind") != "harness":
        raise CliError(f"agent {args.agent} is a code agent: the SDK drives it. Pass --task module:function, or "
                       "call evalkit.run_experiment(...) from Python", EXIT_USAGE)
    if args.resume is not None:
        data = call(args, "POST", f"/api/experiments/{args.resume}/resume", {})
        experiment_id = int(data["experiment_id"])
    else:
        from evalkit.sdk.config import load_project

        body: dict[str, Any] = {"agent": args.agent, "dataset": args.dataset, "case_ids": args.case or None,
                                "split": args.split, "repetitions": args.repetitions, "model": args.model,
                                "budget_usd": args.max_cost_usd,
                                "credentials": load_project().judge_keys()}
        if args.judge_base_url:
            body["judge"] = {"base_url": args.judge_base_url, "model": args.judge_model}
        data = call(args, "POST", "/api/experiments", body)
        experiment_id = int(data["experiment_id"])
        for dropped in data.get("dropped") or []:
            print(f"dropped case {dropped['case_id']}: {dropped['reason']}", file=sys.stderr)
    print(f"experiment {experiment_id}: the service drives {args.agent}")
    seen = 0
    while True:
        info = call(args, "GET", f"/api/experiments/{experiment_id}")
        progress = info.get("progress") or {}
        recorded = int(progress.get("recorded") or 0)
        if recorded != seen:
            print(f"{recorded}/{progress.get('planned')} runs recorded ({progress.get('completed', 0)} completed, "
                  f"{progress.get('failed', 0)} failed, {progress.get('timeout', 0)} timeout)")
            seen = recorded
        if info["status"] in FINAL or (info["status"] == "evaluating" and not args.wait_for_scores):
            break
        time.sleep(args.poll_seconds)
    _print_scorecard(args, experiment_id)
    print(f"experiment {experiment_id}: {service_url(args)}/api/experiments/{experiment_id} ({info['status']})")
    return 0 if info["status"] != "failed" else EXIT_FAILED


def _print_scorecard(args: argparse.Namespace, experiment_id: int) -> None:
    data = call(args, "GET", f"/api/experiments/{experiment_id}/scorecard")
    if args.json:
        print(json.dumps(data, indent=2, default=str))
        return
    from evalkit.cli.http import CliError as _Err

    try:
        text = _text(args, f"/api/experiments/{experiment_id}/scorecard?format=text")
    except _Err:
        text = json.dumps(data.get("scorecard"), indent=2, default=str)
    print(text)


def _text(args: argparse.Namespace, path: str) -> str:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(service_url(args) + path)
    token = service_token(args)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return str(response.read().decode("utf-8", "replace"))
    except urllib.error.HTTPError as exc:
        raise CliError(f"GET {path}: {exc.code} {exc.reason}") from exc
    except urllib.error.URLError as exc:
        raise CliError(f"evalkit is not reachable at {service_url(args)} ({exc.reason})", EXIT_UNREACHABLE) from exc


def _evaluate(args: argparse.Namespace) -> int:
    from evalkit.sdk.experiments import evaluate_experiment

    evaluators = [load_object(spec) for spec in args.evaluator]

    def go() -> int:
        result = evaluate_experiment(experiment_id=args.experiment, evaluators=evaluators,
                                     refetch_trajectories=args.refetch, rescore=args.rescore,
                                     partial=args.partial, **_sdk_connection(args))
        if args.json:
            print(result.model_dump_json(indent=2))
        return 0

    return _sdk_errors(go)


def _list(args: argparse.Namespace) -> int:
    query = "&".join(f"{k}={v}" for k, v in (("agent", args.agent), ("workspace", args.workspace),
                                             ("status", args.status), ("limit", args.limit)) if v)
    data = call(args, "GET", "/api/experiments" + (f"?{query}" if query else ""))
    lines = []
    for e in data["experiments"]:
        p = e.get("progress") or {}
        scores = " ".join(f"{k}={v:.2f}" if isinstance(v, int | float) else f"{k}={v}"
                          for k, v in (e.get("scores") or {}).items())
        cost = "unpriced" if e.get("cost_usd") is None else f"${e['cost_usd']:.4f}"
        lines.append(f"{e['experiment_id']:>5} {e['status']:11} {e['agent']:28} {e['dataset']:24} "
                     f"{p.get('recorded', 0)}/{p.get('planned', 0)} {cost:>10} {scores}")
    _print(args, data, lines)
    return 0


def _show(args: argparse.Namespace) -> int:
    data = call(args, "GET", f"/api/experiments/{args.experiment}")
    config = data.get("config") or {}
    lines = [f"experiment {data['experiment_id']} ({data['status']}): {data['agent']} on {data['dataset']} "
             f"version {config.get('dataset_version')}, {config.get('repetitions')} repetition(s), "
             f"model {config.get('model')}"]
    for case in data.get("cases") or []:
        runs = " ".join(f"#{r['repetition']}:{r['status']}({r.get('trajectory_status') or '-'})"
                        for r in case.get("runs") or [])
        lines.append(f"  {case['case_id']:30} {case.get('state', ''):8} {runs}")
    for dropped in data.get("dropped") or []:
        lines.append(f"  dropped {dropped['case_id']}: {dropped['reason']}")
    if data.get("can_resume"):
        lines.append(f"  resumable: run_experiment(..., resume={data['experiment_id']}) or "
                     f"`evalkit run {data['dataset']} --agent {data['agent']} --resume {data['experiment_id']}`")
    _print(args, data, lines)
    if args.scorecard and not args.json:
        _print_scorecard(args, args.experiment)
    return 0


def _compare(args: argparse.Namespace) -> int:
    suffix = "&allow_incomplete=true" if args.allow_incomplete else ""
    path = f"/api/experiments/{args.experiment}/compare?baseline_id={args.baseline}&alpha={args.alpha}{suffix}"
    if args.json:
        print(json.dumps(call(args, "GET", path), indent=2, default=str))
    else:
        print(_text(args, path + "&format=markdown"))
    return 0


def _min_score(values: list[str]) -> float | dict[str, float] | None:
    if not values:
        return None
    if len(values) == 1 and "=" not in values[0]:
        return float(values[0])
    scores: dict[str, float] = {}
    for value in values:
        name, sep, number = value.partition("=")
        if not sep:
            raise CliError(f"--min-score {value!r}: write a number, or evaluator=number per evaluator", EXIT_USAGE)
        scores[name] = float(number)
    return scores


def _gate(args: argparse.Namespace) -> int:
    body = {"baseline_id": args.baseline, "alpha": args.alpha, "min_score": _min_score(args.min_score),
            "max_regressions": args.max_regressions, "allow_incomplete": args.allow_incomplete,
            "fail_on_significant_regression": not args.ignore_significance, "evaluators": args.gate_evaluator or None}
    data = call(args, "POST", f"/api/experiments/{args.experiment}/gate", body)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(data.get("markdown") or "")
    if args.json:
        print(json.dumps(data, indent=2, default=str))
    else:
        print(data.get("markdown") or "")
        print("gate: " + ("passed" if data["passed"] else "FAILED: " + "; ".join(data.get("reasons") or [])))
    return 0 if data["passed"] else EXIT_FAILED


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = client_options(sub.add_parser(
        "run", help="run an experiment: a Python task (--task) or a harness agent driven by the service",
        description="Run DATASET with AGENT. With --task module:function the function is called once per case "
                    "and repetition here (like evalkit.run_experiment); without it the agent must be a harness "
                    "agent, which the service drives while this command follows the progress."))
    p.add_argument("dataset", metavar="DATASET", help="name, name@workspace, or a folder under `cases`")
    p.add_argument("--agent", required=True, help="name@workspace")
    p.add_argument("--task", help="module:function to call per case (code agents)")
    p.add_argument("--evaluator", action="append", default=[], metavar="MODULE:NAME",
                   help="a Python evaluator (@evalkit.evaluator); repeat for more")
    p.add_argument("--repetitions", type=int, default=1)
    p.add_argument("--concurrency", type=int)
    p.add_argument("--case", action="append", default=[], metavar="CASE_ID", help="only this case; repeatable")
    p.add_argument("--split", help="only cases with this tag")
    p.add_argument("--model")
    p.add_argument("--resume", type=int, metavar="EXPERIMENT", help="run what experiment EXPERIMENT has left")
    p.add_argument("--dry-run", type=int, nargs="?", const=1, metavar="N",
                   help="run N case(s) (default 1) without an experiment and show what the service made of them")
    p.add_argument("--trajectory-wait-seconds", type=float)
    p.add_argument("--timeout", type=float, help="seconds per task call")
    p.add_argument("--retries", type=int, default=0, help="retries of a failed task call (only the last counts)")
    p.add_argument("--max-cost-usd", type=float)
    p.add_argument("--max-tokens", type=int)
    p.add_argument("--judge-base-url")
    p.add_argument("--judge-model")
    p.add_argument("--wait-for-scores", action="store_true", help="(harness) wait until scoring completes")
    p.add_argument("--poll-seconds", type=float, default=2.0)
    p.set_defaults(func=_run)

    p = client_options(sub.add_parser("evaluate", help="score an experiment again (without running the agent)"))
    p.add_argument("experiment", type=int)
    p.add_argument("--evaluator", action="append", default=[], metavar="MODULE:NAME",
                   help="a Python evaluator the experiment declared")
    p.add_argument("--rescore", action="store_true", help="score every run again, not only what is missing")
    p.add_argument("--refetch", action="store_true", help="re-read partial/unavailable trajectories first")
    p.add_argument("--partial", action="store_true",
                   help="score what is there although some runs were not run yet (failed runs never need it)")
    p.set_defaults(func=_evaluate)

    experiments = sub.add_parser("experiments", help="experiments and their scorecards").add_subparsers(
        dest="action", required=True)
    p = client_options(experiments.add_parser("list", help="experiments, newest first"))
    p.add_argument("--agent")
    p.add_argument("--workspace")
    p.add_argument("--status")
    p.add_argument("--limit", type=int, default=50)
    p.set_defaults(func=_list)
    p = client_options(experiments.add_parser("show", help="an experiment: config, cases, runs"))
    p.add_argument("experiment", type=int)
    p.add_argument("--scorecard", action="store_true", help="print the scorecard too")
    p.set_defaults(func=_show)
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
    p.add_argument("--evaluator", dest="gate_evaluator", action="append", default=[])
    p.add_argument("--ignore-significance", action="store_true",
                   help="do not fail on a significant regression alone")
    p.add_argument("--allow-incomplete", action="store_true")
    p.add_argument("--markdown", metavar="FILE", help="write the Markdown report here (for a PR comment)")
    p.set_defaults(func=_gate)
