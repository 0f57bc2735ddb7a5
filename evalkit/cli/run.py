"""`evalkit run` and `evalkit evaluate`: run an experiment, score one again.

`run` drives a Python task through the SDK (`--task module:function`) or, for a harness agent, asks
the service to drive it and follows along. Under `--json` stdout carries only the result's JSON;
progress lines and the scorecard go to stderr.
Exit codes: 0 done; 1 failed, stopped before every planned run ran (a budget), or an evaluator erred on
some run (an error is not a score); 2 usage; 3 the service could not be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import importlib.util
import json
import os
import re
import shlex
import sys
import time
from collections.abc import Callable
from typing import IO, Any, cast

from evalkit.cli.http import (
    EXIT_FAILED,
    EXIT_UNREACHABLE,
    EXIT_USAGE,
    CliError,
    call,
    cli_words,
    client_options,
    quote,
    service_token,
    service_url,
    text,
)

FINAL = ("completed", "failed", "cancelled", "stopped")


def experiment_page(args: argparse.Namespace, experiment_id: int | str) -> str:
    """The experiment's web page (the UI's `/experiments/{id}`), what a person opens."""
    return f"{service_url(args)}/experiments/{experiment_id}"


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


def load_evaluator(spec: str) -> Any:
    """A Python evaluator from `module:name`, remembering that spec: the experiment records it, so that every
    "finish scoring with `evalkit evaluate N --evaluator …`" names what loads it."""
    from evalkit.sdk.evaluators import PythonEvaluator

    loaded = load_object(spec)
    if isinstance(loaded, PythonEvaluator):
        loaded.source = spec
    return loaded


def sdk_errors(fn: Callable[[], int]) -> int:
    """Run an SDK call; its exceptions become CliErrors with the right exit code."""
    from evalkit.sdk.binding import BindingError
    from evalkit.sdk.client import ServiceError, ServiceUnreachable
    from evalkit.sdk.config import ConfigError
    from evalkit.sdk.lease import LeaseLost
    from evalkit.sdk.scoring import ScoringError

    try:
        return fn()
    except ServiceUnreachable as exc:
        raise CliError(cli_words(str(exc)), EXIT_UNREACHABLE) from exc
    except (ConfigError, BindingError, ValueError, TypeError) as exc:
        raise CliError(cli_words(str(exc)), EXIT_USAGE) from exc
    except ServiceError as exc:
        raise CliError(cli_words(str(exc)), EXIT_FAILED, status=exc.status, detail=cli_words(exc.message)) from exc
    except (LeaseLost, ScoringError) as exc:
        raise CliError(cli_words(str(exc)), EXIT_FAILED) from exc


def _connection(args: argparse.Namespace) -> dict[str, Any]:
    return {"url": service_url(args), "token": service_token(args)}


def progress_stream(args: argparse.Namespace) -> IO[str]:
    """Where progress goes: stderr under --json (stdout is for the JSON alone), else stdout."""
    return sys.stderr if args.json else sys.stdout


# The resume command as the SDK's progress lines write it, after cli_words: "…" (or "...") for the arguments.
_SOME_RUN_COMMAND = re.compile(r"`evalkit run (?:…|\.\.\.|DATASET --agent AGENT) --resume (\d+)")
# The flags of `evalkit run` a resumed run needs again: the runner's own settings, not stored on the experiment.
_RUNNER_FLAGS = ("task", "concurrency", "timeout", "retries", "max_cost_usd", "max_tokens", "trajectory_wait_seconds",
                 "url")


def resume_command(args: argparse.Namespace) -> str:
    """This `evalkit run` as the command that resumes its experiment (without `--resume N`): the token is never
    in it (it comes from the login or EVALKIT_TOKEN)."""
    words = ["evalkit", "run", args.dataset, "--agent", args.agent]
    for name in _RUNNER_FLAGS:
        value = getattr(args, name, None)
        if value not in (None, 0, False):
            words += [f"--{name.replace('_', '-')}", str(value)]
    for spec in args.evaluator:
        words += ["--evaluator", spec]
    return shlex.join(words)


class CliProgress:
    """The stream the SDK's progress goes to under `evalkit run`, which writes it in the CLI's words: the lines it
    says on Ctrl-C or when the service goes away ("resume it with run_experiment(..., resume=9)", "add --take-over
    (take_over=True)") are no CliError, so cli_words never saw them. The resume command is this command's own."""

    def __init__(self, stream: IO[str], command: str) -> None:
        self.stream = stream
        self.command = command

    def write(self, text: str) -> int:
        said = _SOME_RUN_COMMAND.sub(lambda m: f"`{self.command} --resume {m.group(1)}", cli_words(text))
        self.stream.write(said)
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def isatty(self) -> bool:
        return self.stream.isatty()

    def __getattr__(self, name: str) -> Any:  # encoding, fileno, … as the stream has them (rich asks)
        return getattr(self.stream, name)


def _say(args: argparse.Namespace, line: str) -> None:
    print(line, file=progress_stream(args), flush=True)


def _run(args: argparse.Namespace) -> int:
    if args.task:
        return sdk_errors(lambda: _run_task(args))
    if args.dry_run is not None:
        raise CliError("--dry-run needs --task (a harness agent's dry run is the harness's own business)", EXIT_USAGE)
    return _run_harness(args)


def _judge(args: argparse.Namespace) -> dict[str, Any] | None:
    if bool(args.judge_base_url) != bool(args.judge_model):
        raise CliError("an LLM judge needs both --judge-base-url and --judge-model", EXIT_USAGE)
    return {"base_url": args.judge_base_url, "model": args.judge_model} if args.judge_base_url else None


def _run_task(args: argparse.Namespace) -> int:
    from evalkit.sdk.runner import run_experiment

    task = load_object(args.task)
    evaluators = [load_evaluator(spec) for spec in args.evaluator]
    result = run_experiment(
        dataset=args.dataset, agent=args.agent, task=task, evaluators=evaluators, repetitions=args.repetitions,
        concurrency=args.concurrency, case_ids=args.case or None, split=args.split, model=args.model,
        resume=args.resume, dry_run=args.dry_run or False, trajectory_wait_seconds=args.trajectory_wait_seconds,
        judge=_judge(args), timeout=args.timeout, retries=args.retries, max_cost_usd=args.max_cost_usd,
        max_tokens=args.max_tokens, name=args.name or "", description=args.description or "",
        take_over=args.take_over, output=cast(IO[str], CliProgress(progress_stream(args), resume_command(args))),
        **_connection(args))
    if args.json:
        print(result.model_dump_json(indent=2))
    if result.stopped_reason:
        return EXIT_FAILED  # not every planned run ran: a script must not take it for a finished experiment
    return _exit_of(result.scorecard)


def _exit_of(scorecard: dict[str, Any] | None) -> int:
    """1 when an evaluator erred on some run: an error is not a score, and a script must notice."""
    card = (scorecard or {}).get("scorecard") or {}
    errors = sum(int(m.get("evaluator_errors") or 0) for m in card.get("evaluators") or [] if isinstance(m, dict))
    return EXIT_FAILED if errors else 0


def _sync_local_dataset(args: argparse.Namespace, dataset: str, python_names: set[str]) -> tuple[str, str | None]:
    """A dataset folder under `cases` of evalkit.yaml is pushed first (to the agent's workspace when the
    name has none), as the SDK does; (the dataset name to use, the version pushed or None)."""
    from evalkit.sdk.client import ServiceClient
    from evalkit.sdk.config import Connection, load_project
    from evalkit.sdk.datasets import read_dataset
    from evalkit.sdk.service import Service
    from evalkit.sdk.sync import sync_dataset

    project = load_project()
    folder = project.dataset_folder(dataset)
    if folder is None:
        return dataset, None
    name = dataset if "@" in dataset else f"{dataset}@{args.agent.partition('@')[2]}"
    local = read_dataset(folder, name, project.fixtures_dir)

    async def push() -> dict[str, Any]:
        async with ServiceClient(Connection(url=service_url(args), token=service_token(args))) as client:
            return await sync_dataset(Service(client), local, name, python_evaluators=sorted(python_names))

    pushed = asyncio.run(push())
    _say(args, f"dataset {pushed['dataset']} version {pushed['version']}: {pushed['cases']} cases "
               f"({'new version' if pushed.get('created') else 'unchanged'}) from {folder}")
    return name, str(pushed.get("version") or "") or None


def _run_harness(args: argparse.Namespace) -> int:
    agent = call(args, "GET", f"/api/agents/{quote(args.agent)}")
    if agent.get("kind") != "harness":
        raise CliError(f"agent {args.agent} is a code agent: the SDK drives it. Pass --task module:function "
                       "(e.g. --task agent:answer)", EXIT_USAGE)
    evaluators = [load_evaluator(spec) for spec in args.evaluator]
    python_names = {e.name for e in evaluators}
    if args.resume is not None:
        resume: dict[str, Any] = {"take_over": True} if args.take_over else {}
        # A harness experiment's limits hold over every pass (what earlier ones spent counts): resuming one stopped
        # by its budget takes a larger one.
        if args.max_cost_usd is not None:
            resume["budget_usd"] = args.max_cost_usd
        if args.max_tokens is not None:
            resume["max_tokens"] = args.max_tokens
        data = call(args, "POST", f"/api/experiments/{args.resume}/resume", resume)
        experiment_id = int(data["experiment_id"])
    else:
        from evalkit.sdk.config import load_project

        dataset, version = sdk_errors_value(lambda: _sync_local_dataset(args, args.dataset, python_names))
        body: dict[str, Any] = {
            "agent": args.agent, "dataset": dataset, "dataset_version": version, "case_ids": args.case or None,
            "split": args.split, "repetitions": args.repetitions, "model": args.model,
            "budget_usd": args.max_cost_usd, "name": args.name or "", "description": args.description or "",
            "evaluators": [e.name for e in evaluators],
            "evaluator_refs": {e.name: e.ref for e in evaluators if getattr(e, "ref", None)},
            "credentials": load_project().judge_keys(),
            "run_settings": {k: v for k, v in (
                ("timeout_seconds", args.timeout), ("retries", args.retries or None),
                ("concurrency", args.concurrency), ("max_tokens", args.max_tokens),
                ("trajectory_wait_seconds", args.trajectory_wait_seconds)) if v is not None}}
        judge = _judge(args)
        if judge:
            body["judge"] = judge
        data = call(args, "POST", "/api/experiments", body)
        experiment_id = int(data["experiment_id"])
        for dropped in data.get("dropped") or []:
            _say(args, f"dropped case {dropped['case_id']}: {dropped['reason']}")
    _say(args, f"experiment {experiment_id}: the service drives {args.agent}; {experiment_page(args, experiment_id)}")
    seen = -1
    waiting_for = FINAL if (args.wait_for_scores or evaluators) else (*FINAL, "evaluating")
    while True:
        info = call(args, "GET", f"/api/experiments/{experiment_id}")
        progress = info.get("progress") or {}
        recorded = int(progress.get("recorded") or 0)
        if recorded != seen:
            _say(args, f"{recorded}/{progress.get('planned')} runs recorded ({progress.get('completed', 0)} "
                       f"completed, {progress.get('failed', 0)} failed, {progress.get('timeout', 0)} timeout)")
            seen = recorded
        if info["status"] in waiting_for:
            break
        unscored = (info.get("scoring") or {}).get("unscored") or {}
        if evaluators and info["status"] == "evaluating" and all(
                count == 0 or name in python_names for name, count in unscored.items()):
            break  # the service's evaluators are done; the Python ones are scored here, next
        time.sleep(args.poll_seconds)
    if evaluators and info["status"] not in ("failed", "cancelled", "stopped"):
        from evalkit.sdk.experiments import evaluate_experiment

        sdk_errors_value(lambda: evaluate_experiment(experiment_id=experiment_id, evaluators=evaluators,
                                                     output=progress_stream(args), **_connection(args)))
        info = call(args, "GET", f"/api/experiments/{experiment_id}")
    card = call(args, "GET", f"/api/experiments/{experiment_id}/scorecard")
    if args.json:
        print(json.dumps({"experiment_id": experiment_id, "url": experiment_page(args, experiment_id),
                          "status": info["status"], "progress": info.get("progress"), "scorecard": card},
                         indent=2, default=str))
    else:
        print_scorecard(args, experiment_id)
        reason = f": {info['status_reason']}" if info["status"] in ("failed", "stopped", "cancelled") and info.get(
            "status_reason") else ""
        print(f"experiment {experiment_id}: {experiment_page(args, experiment_id)} ({info['status']}{reason})")
    if info["status"] in ("failed", "stopped", "cancelled"):
        return EXIT_FAILED
    return _exit_of(card)


def sdk_errors_value(fn: Callable[[], Any]) -> Any:
    """What `fn` returns, its SDK exceptions turned into CliErrors as by sdk_errors."""
    box: list[Any] = []

    def keep() -> int:
        box.append(fn())
        return 0

    sdk_errors(keep)
    return box[0]


def print_scorecard(args: argparse.Namespace, experiment_id: int, stream: IO[str] | None = None) -> None:
    try:
        card = text(args, f"/api/experiments/{experiment_id}/scorecard?format=text")
    except CliError:
        card = json.dumps(call(args, "GET", f"/api/experiments/{experiment_id}/scorecard").get("scorecard"),
                          indent=2, default=str)
    print(card, file=stream or sys.stdout)


def _evaluate(args: argparse.Namespace) -> int:
    from evalkit.sdk.experiments import evaluate_experiment

    evaluators = [load_evaluator(spec) for spec in args.evaluator]

    def go() -> int:
        result = evaluate_experiment(experiment_id=args.experiment, evaluators=evaluators,
                                     refetch_trajectories=args.refetch, rescore=args.rescore,
                                     partial=args.partial, output=progress_stream(args), **_connection(args))
        if args.json:
            print(result.model_dump_json(indent=2))
        return _exit_of(result.scorecard)

    return sdk_errors(go)


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    p = client_options(sub.add_parser(
        "run", help="run an experiment: a Python task (--task) or a harness agent driven by the service",
        description="Run DATASET with AGENT. With --task module:function the function is called once per case "
                    "and repetition here (like evalkit.run_experiment); without it the agent must be a harness "
                    "agent, which the service drives while this command follows the progress. A DATASET that is "
                    "a folder under `cases` of evalkit.yaml is pushed first, to the agent's workspace."))
    p.add_argument("dataset", metavar="DATASET", help="name, name@workspace, or a folder under `cases`")
    p.add_argument("--agent", required=True, help="name@workspace")
    p.add_argument("--task", help="module:function to call per case (code agents)")
    p.add_argument("--evaluator", action="append", default=[], metavar="MODULE:NAME",
                   help="a Python evaluator (@evalkit.evaluator); repeat for more")
    p.add_argument("--name", help="the experiment's name (shown in lists and on its page)")
    p.add_argument("--description", help="what this experiment tries")
    p.add_argument("--repetitions", type=int, default=1)
    p.add_argument("--concurrency", type=int, help="task (or harness) calls at once (default: the agent's)")
    p.add_argument("--case", action="append", default=[], metavar="CASE_ID", help="only this case; repeatable")
    p.add_argument("--split", help="only cases with this tag")
    p.add_argument("--model")
    p.add_argument("--resume", type=int, metavar="EXPERIMENT", help="run what experiment EXPERIMENT has left")
    p.add_argument("--take-over", action="store_true",
                   help="with --resume: take the lease over although another runner holds it (it is gone)")
    p.add_argument("--dry-run", type=int, nargs="?", const=1, metavar="N",
                   help="run N case(s) (default 1) without an experiment and show what the service made of them")
    p.add_argument("--trajectory-wait-seconds", type=float)
    p.add_argument("--timeout", type=float, help="seconds per task (or harness) call")
    p.add_argument("--retries", type=int, default=0, help="retries of a failed call (only the last counts)")
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

