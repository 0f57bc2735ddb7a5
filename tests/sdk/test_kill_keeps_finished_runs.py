"""Nothing finished is lost: a run is recorded the moment its task call returns, so a runner killed with
SIGKILL (or stopped with Ctrl-C) keeps every call that returned; resuming after a kill takes over at once
when the old runner is provably gone, and otherwise says until when and how to take over."""

from __future__ import annotations

import io
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import evalkit
from evalkit.cli.http import cli_words
from evalkit.sdk.lease import LeaseBusy
from tests.sdk.conftest import Served, Tenant, write_cases

# Calls c0..c5 return at once; c6 blocks until the runner is killed. Each call marks that it returned just
# before returning, and the runner (concurrency 1) starts c6 only after c5's call returned.
RUNNER = """
import pathlib, sys, time
import evalkit

marks = pathlib.Path(sys.argv[1])

def task(input):
    if input == "c6":
        (marks / "blocked").touch()
        time.sleep(600)
    (marks / f"returned.{input}").touch()
    return f"answer {input}"

evalkit.run_experiment(dataset="kill", agent=sys.argv[2], task=task, concurrency=1,
                       trajectory_wait_seconds=30, progress=False)
"""

NAMES = [f"c{i}" for i in range(8)]


def _terminal_sigint() -> None:
    # SIGINT as a terminal sends it, whatever this test process inherited: a child started with SIGINT ignored
    # (pytest run as a background job of a non-interactive shell, as a CI script may) would never see it.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(tmp_path: Path, tenant: Tenant, marks: Path, env: dict[str, str], script: str = RUNNER,
           evaluators: str = "") -> subprocess.Popen[bytes]:
    write_cases(tmp_path, "kill", {name: f"input: {name}\n{evaluators}" for name in NAMES})
    (tmp_path / "runner.py").write_text(script)
    with (tmp_path / "runner.log").open("wb") as log:
        return subprocess.Popen([sys.executable, "runner.py", str(marks), tenant.agent], cwd=tmp_path, env=env,
                                stdout=log, stderr=subprocess.STDOUT, preexec_fn=_terminal_sigint)


def _wait_blocked(runner: subprocess.Popen[bytes], marks: Path, log: Path) -> None:
    deadline = time.monotonic() + 90
    while not (marks / "blocked").exists():
        assert runner.poll() is None, log.read_text()
        assert time.monotonic() < deadline, log.read_text()
        time.sleep(0.02)


def _ctrl_c(process: subprocess.Popen[bytes], marks: Path, log: Path, timeout: float = 60) -> tuple[int, str]:
    """Ctrl-C once the process is blocked (its work in flight); its exit status and what it printed. Killed if
    it has not ended within `timeout` (the status is then the kill's)."""
    try:
        _wait_blocked(process, marks, log)
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=timeout)
    finally:
        process.kill()
        process.wait(timeout=10)
    return code, log.read_text()


def _experiment_of(served: Served, tenant: Tenant) -> dict[str, object]:
    listed = served.ok("GET", f"/api/experiments?agent={tenant.agent}", token=tenant.token)["experiments"]
    assert listed
    return served.ok("GET", f"/api/experiments/{listed[0]['experiment_id']}", token=tenant.token)  # type: ignore[no-any-return]


def test_sigkill_keeps_every_returned_call_and_resume_takes_over_at_once(served: Served, tenant: Tenant,
                                                                          tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    # The default 60 s lease: resuming must not wait for it, since the killed runner is provably gone.
    env = {k: v for k, v in dict(os.environ, **tenant.env).items() if k != "EVALKIT_LEASE_TTL_SECONDS"}
    runner = _start(tmp_path, tenant, marks, env)
    try:
        _wait_blocked(runner, marks, tmp_path / "runner.log")
        # Before this change none of the six returned calls was recorded at this point (each waited for its
        # session to settle first). Their spans are let through to the service (the kill is about runs, not
        # about spans still in the exporter's batch), then the runner dies.
        experiment_id = int(_experiment_of(served, tenant)["experiment_id"])  # type: ignore[call-overload]
        recorded = served.ok("GET", f"/api/experiments/{experiment_id}/runs", token=tenant.token)["runs"]
        deadline = time.monotonic() + 30
        for r in recorded:
            while served.call("GET", f"/api/agents/{tenant.agent}/sessions/{r['session_id']}",
                              token=tenant.token)[0] != 200:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
    finally:
        if runner.poll() is None:
            runner.kill()
    returned = sorted(p.name.removeprefix("returned.") for p in marks.glob("returned.*"))
    assert returned == NAMES[:6]
    experiment = _experiment_of(served, tenant)
    experiment_id = int(experiment["experiment_id"])  # type: ignore[call-overload]
    runs = served.ok("GET", f"/api/experiments/{experiment_id}/runs?attempts=all", token=tenant.token)["runs"]
    assert sorted(r["case_id"] for r in runs) == returned  # N calls returned → N runs recorded
    assert all(r["status"] == "completed" and r["answer"] == f"answer {r['case_id']}" for r in runs)
    assert experiment["status"] == "running" and experiment["lease"]["expired"] is False  # type: ignore[index]
    called: list[str] = []

    def task(input: str) -> str:
        called.append(input)
        return f"answer {input}"

    started = time.monotonic()
    result = evalkit.run_experiment(dataset="kill", agent=tenant.agent, task=task, resume=experiment_id,
                                    output=io.StringIO())
    # Taken over at once (same host, dead pid), not after the 60 s lease.
    assert time.monotonic() - started < 45
    assert sorted(called) == NAMES[6:]
    assert [(r.case_id, r.status) for r in result.runs] == [(n, "completed") for n in NAMES]
    # The runs recorded before the kill (their sessions not settled then) were read again on resume.
    assert [r.trajectory_status for r in result.runs] == ["valid"] * len(NAMES)
    assert served.ok("GET", f"/api/experiments/{experiment_id}", token=tenant.token)["status"] == "completed"


def test_ctrl_c_keeps_finished_calls(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    runner = _start(tmp_path, tenant, marks, dict(os.environ, **tenant.env))
    try:
        _wait_blocked(runner, marks, tmp_path / "runner.log")
        runner.send_signal(signal.SIGINT)
        experiment = _experiment_of(served, tenant)
        # The process ends although the call in flight (a sync task sleeping 600 s in its thread, which Python
        # cannot interrupt) never returns, and it says how to resume.
        runner.wait(timeout=60)
        assert f"resume={experiment['experiment_id']}" in (tmp_path / "runner.log").read_text()
    finally:
        runner.kill()
        runner.wait(timeout=10)
    runs = served.ok("GET", f"/api/experiments/{experiment['experiment_id']}/runs?attempts=all",
                     token=tenant.token)["runs"]
    assert sorted(r["case_id"] for r in runs) == NAMES[:6]


def test_ctrl_c_says_how_to_resume_and_exits_130_without_a_traceback(served: Served, tenant: Tenant,
                                                                      tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    runner = _start(tmp_path, tenant, marks, dict(os.environ, **tenant.env))
    code, log = _ctrl_c(runner, marks, tmp_path / "runner.log")
    experiment = _experiment_of(served, tenant)
    # Before: the resume line, then asyncio's KeyboardInterrupt traceback, and the process died of SIGINT.
    assert code == 130, log
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log
    assert log.rstrip().splitlines()[-1] == (
        f"experiment {experiment['experiment_id']} did not finish; resume it with run_experiment(..., "
        f"resume={experiment['experiment_id']}) or `evalkit run … --resume {experiment['experiment_id']}`"), log
    runs = served.ok("GET", f"/api/experiments/{experiment['experiment_id']}/runs?attempts=all",
                     token=tenant.token)["runs"]
    assert sorted(r["case_id"] for r in runs) == NAMES[:6]


# The task `evalkit run --task kill_task:task` calls: c6 blocks (a call in flight at Ctrl-C) until released.
KILL_TASK = """
import os, pathlib, time

def task(input):
    marks = pathlib.Path(os.environ["KILL_MARKS"])
    if input == "c6" and not (marks / "release").exists():
        (marks / "blocked").touch()
        time.sleep(600)
    return f"answer {input}"
"""


def test_ctrl_c_of_evalkit_run_says_the_command_that_resumes_it(served: Served, tenant: Tenant,
                                                                 tmp_path: Path) -> None:
    """Before: `evalkit run` stopped with Ctrl-C printed the SDK's line, "resume it with run_experiment(...,
    resume=9) or `evalkit run ... --resume 9`": Python to a CLI user, and a command with its arguments left out."""
    write_cases(tmp_path, "kill", {name: f"input: {name}\n" for name in NAMES})
    (tmp_path / "kill_task.py").write_text(KILL_TASK)
    marks = tmp_path / "marks"
    marks.mkdir()
    env = dict(os.environ, **tenant.env, KILL_MARKS=str(marks), PYTHONPATH=str(tmp_path))
    with (tmp_path / "run.log").open("wb") as out:
        runner = subprocess.Popen(
            [sys.executable, "-m", "evalkit.cli", "run", "kill", "--agent", tenant.agent, "--task", "kill_task:task",
             "--concurrency", "1"], cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=_terminal_sigint)
    code, log = _ctrl_c(runner, marks, tmp_path / "run.log")
    eid = _experiment_of(served, tenant)["experiment_id"]
    assert code == 130, log
    assert "run_experiment(" not in log and "Traceback" not in log, log
    wanted = f"evalkit run kill --agent {tenant.agent} --task kill_task:task --concurrency 1 --resume {eid}"
    assert log.rstrip().splitlines()[-1] == f"experiment {eid} did not finish; resume it with `{wanted}`", log
    # Run as printed, it finishes the experiment.
    (marks / "release").touch()
    command = shlex.split(wanted)
    finished = subprocess.run([str(Path(sys.executable).parent / command[0]), *command[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert served.ok("GET", f"/api/experiments/{eid}", token=tenant.token)["status"] == "completed"


def test_ctrl_c_gives_the_lease_back_and_the_experiment_says_it_was_interrupted(served: Served, tenant: Tenant,
                                                                               tmp_path: Path) -> None:
    """Before: after a clean Ctrl-C the experiment still read "lease taken by sdk:…" (the CLI, the UI, the API),
    as if that runner were at work, with nothing saying it had stopped or how to go on; then it said so but stayed
    `running`. It is `stopped`, and resuming it runs what is left."""
    marks = tmp_path / "marks"
    marks.mkdir()
    runner = _start(tmp_path, tenant, marks, dict(os.environ, **tenant.env))
    code, log = _ctrl_c(runner, marks, tmp_path / "runner.log")
    assert code == 130, log
    experiment = _experiment_of(served, tenant)
    eid = experiment["experiment_id"]
    assert experiment["status"] == "stopped" and experiment["lease"] is None and experiment["can_resume"], experiment
    # c0..c5 recorded; c6 (in flight) and c7 (never started) are left.
    reason = str(experiment["status_reason"])
    assert re.fullmatch(rf"interrupted: sdk:[^ ]+ gave its lease back with 2 of 8 planned runs not finished, and "
                        rf"nobody runs it now; resume with `run_experiment\(\.\.\., resume={eid}\)` or "
                        rf"`evalkit run … --resume {eid}`", reason), reason
    shown = subprocess.run([sys.executable, "-m", "evalkit.cli", "experiments", "show", str(eid)], cwd=tmp_path,
                           env=dict(os.environ, **tenant.env), capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0, shown.stderr
    # The CLI says the reason in its own words (commit 1eabc9c): the command, not run_experiment(...).
    assert "lease taken by" not in shown.stdout and f"  {cli_words(reason)}" in shown.stdout, shown.stdout
    assert "run_experiment(" not in shown.stdout, shown.stdout
    # Resuming the stopped experiment runs what was left, and it finishes.
    called: list[str] = []

    def task(input: str) -> str:
        called.append(input)
        return f"answer {input}"

    result = evalkit.run_experiment(dataset="kill", agent=tenant.agent, task=task, resume=eid, output=io.StringIO())
    assert sorted(called) == NAMES[6:]
    assert served.ok("GET", f"/api/experiments/{eid}", token=tenant.token)["status"] == "completed"
    assert [r.case_id for r in result.runs] == NAMES


def test_ctrl_c_is_still_a_keyboard_interrupt_to_a_script_that_catches_it(served: Served, tenant: Tenant,
                                                                          tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    runner = _start(tmp_path, tenant, marks, dict(os.environ, **tenant.env),
                    script=RUNNER.replace("evalkit.run_experiment(", "try:\n    evalkit.run_experiment(", 1)
                    .replace("progress=False)", "progress=False)\nexcept KeyboardInterrupt:\n"
                             "    print('caught by the script')\n    sys.exit(7)"))
    code, log = _ctrl_c(runner, marks, tmp_path / "runner.log")
    assert code == 7 and "caught by the script" in log, log


# A Python evaluator that blocks (a slow model call) until its process is stopped.
SLOW_CHECK = """
import pathlib, sys, time
import evalkit

marks = pathlib.Path(sys.argv[1])

@evalkit.evaluator
def slow_check(answer):
    (marks / "blocked").touch()
    time.sleep(600)
    return True
"""
# Every call returns at once; the evaluator blocks until the runner is stopped.
SCORING_RUNNER = SLOW_CHECK + """
evalkit.run_experiment(dataset="kill", agent=sys.argv[2], task=lambda input: f"answer {input}",
                       evaluators=[slow_check], trajectory_wait_seconds=30, progress=False)
"""


def test_ctrl_c_while_scoring_says_how_to_finish_scoring_and_ends_at_once(served: Served, tenant: Tenant,
                                                                           tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    write_cases(tmp_path, "kill", {name: f"input: {name}\nevaluators: [slow_check]\n" for name in NAMES[:3]})
    (tmp_path / "runner.py").write_text(SCORING_RUNNER)
    with (tmp_path / "runner.log").open("wb") as out:
        runner = subprocess.Popen([sys.executable, "runner.py", str(marks), tenant.agent], cwd=tmp_path,
                                  env=dict(os.environ, **tenant.env), stdout=out, stderr=subprocess.STDOUT,
                                  preexec_fn=_terminal_sigint)
        # Before: the evaluator's thread (asyncio.to_thread's pool, joined at exit) held the process 600 s.
    code, log = _ctrl_c(runner, marks, tmp_path / "runner.log", timeout=30)
    experiment_id = _experiment_of(served, tenant)["experiment_id"]
    assert code == 130 and "Traceback" not in log, log
    # Before: "resume it with run_experiment(..., resume=N)", which the service then refused ("no runs left").
    last = log.rstrip().splitlines()[-1]
    # slow_check is a function of the script (__main__): where it loads from is not known, so it is a placeholder.
    assert f"`evalkit evaluate {experiment_id} --evaluator MODULE:slow_check`" in last and "resume=" not in last, log
    assert f"`evaluate_experiment(experiment_id={experiment_id}, evaluators=[slow_check])`" in last, log

    @evalkit.evaluator
    def slow_check(answer: str) -> bool:
        return True

    result = evalkit.evaluate_experiment(experiment_id=experiment_id, evaluators=[slow_check], output=io.StringIO())
    assert [r.status for r in result.runs] == ["completed"] * 3
    assert served.ok("GET", f"/api/experiments/{experiment_id}", token=tenant.token)["status"] == "completed"


@contextmanager
def _release_never_answered(api: str) -> Iterator[tuple[str, threading.Event]]:
    """A proxy in front of the real service that passes every request on, except giving an experiment's lease
    back: that one it holds open, unanswered, until the test ends (a stuck or overloaded service)."""
    asked, done = threading.Event(), threading.Event()

    class Handler(BaseHTTPRequestHandler):
        def _pass_on(self) -> None:
            if self.command == "DELETE" and self.path.split("?")[0].endswith("/lease"):
                asked.set()
                done.wait(120)
                return
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            request = urllib.request.Request(api + self.path, data=body, method=self.command)
            for name in ("Authorization", "Content-Type"):
                if self.headers.get(name):
                    request.add_header(name, self.headers[name])
            try:
                with urllib.request.urlopen(request, timeout=60) as response:
                    status, headers, payload = response.status, response.headers, response.read()
            except urllib.error.HTTPError as exc:
                status, headers, payload = exc.code, exc.headers, exc.read()
            self.send_response(status)
            self.send_header("Content-Type", headers.get("Content-Type") or "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _pass_on

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", asked
    finally:
        done.set()
        server.shutdown()
        server.server_close()


def test_ctrl_c_ends_the_runner_although_the_service_never_gives_the_lease_back(
        served: Served, tenant: Tenant, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    with _release_never_answered(served.api) as (url, asked):
        runner = _start(tmp_path, tenant, marks, {**os.environ, **tenant.env, "EVALKIT_URL": url})
        try:
            _wait_blocked(runner, marks, tmp_path / "runner.log")
            runner.send_signal(signal.SIGINT)
            # Before: the release was waited for 60 s and tried again, so Ctrl-C took two minutes and more.
            runner.wait(timeout=40)
        finally:
            runner.kill()
            runner.wait(timeout=10)
        assert asked.is_set()
    log = (tmp_path / "runner.log").read_text()
    experiment = _experiment_of(served, tenant)
    assert f"resume={experiment['experiment_id']}" in log
    assert f"the lease of experiment {experiment['experiment_id']} was not given back" in log
    assert "Resuming from this machine takes it over at once" in log
    assert experiment["lease"]["expired"] is False  # type: ignore[index]


def test_a_live_runner_is_taken_over_only_when_asked(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    marks.mkdir()
    runner = _start(tmp_path, tenant, marks, dict(os.environ, **tenant.env))
    (tmp_path / "tasks.py").write_text("def task(input):\n    return f'answer {input}'\n")
    try:
        _wait_blocked(runner, marks, tmp_path / "runner.log")
        experiment_id = int(_experiment_of(served, tenant)["experiment_id"])  # type: ignore[call-overload]
        # Its process is alive: nothing proves it gone, so resuming is refused with when (local time) and how.
        with pytest.raises(LeaseBusy, match=r"until \d\d:\d\d:\d\d .*\(in \d+ s\).*--take-over"):
            evalkit.run_experiment(dataset="kill", agent=tenant.agent, task=lambda input: "x",
                                   resume=experiment_id, output=io.StringIO())
        cli = subprocess.run([sys.executable, "-m", "evalkit.cli", "run", "kill", "--agent", tenant.agent,
                              "--task", "tasks:task", "--resume", str(experiment_id)], cwd=tmp_path,
                             env=dict(os.environ, **tenant.env, PYTHONPATH=str(tmp_path)), capture_output=True,
                             text=True, timeout=120)
        assert cli.returncode != 0
        assert "Traceback" not in cli.stderr + cli.stdout
        assert f"--resume {experiment_id} --take-over" in cli.stderr + cli.stdout
        assert "take_over=True" not in cli.stderr + cli.stdout  # said with the command, not the Python call
        taken = subprocess.run([sys.executable, "-m", "evalkit.cli", "run", "kill", "--agent", tenant.agent,
                                "--task", "tasks:task", "--resume", str(experiment_id), "--take-over"],
                               cwd=tmp_path, env=dict(os.environ, **tenant.env, PYTHONPATH=str(tmp_path)),
                               capture_output=True, text=True, timeout=120)
        assert taken.returncode == 0, taken.stderr + taken.stdout
        runs = served.ok("GET", f"/api/experiments/{experiment_id}/runs", token=tenant.token)["runs"]
        assert sorted(r["case_id"] for r in runs) == NAMES
    finally:
        runner.kill()
        runner.wait(timeout=10)


# Re-scores an experiment with the blocking evaluator until the script is stopped.
EVALUATE_SCRIPT = SLOW_CHECK + """
evalkit.evaluate_experiment(experiment_id=int(sys.argv[2]), evaluators=[slow_check], rescore=True)
"""


def test_ctrl_c_during_evaluate_experiment_says_how_to_finish_and_exits_130_without_a_traceback(
        served: Served, tenant: Tenant, tmp_path: Path) -> None:
    """Before: evaluate_experiment stopped with Ctrl-C printed asyncio's KeyboardInterrupt traceback, died of
    SIGINT, and said nothing about how to finish scoring; run_experiment already ended cleanly (exit 130)."""
    write_cases(tmp_path, "kill", {name: f"input: {name}\nevaluators: [slow_check]\n" for name in NAMES[:3]})

    @evalkit.evaluator
    def slow_check(answer: str) -> bool:
        return True

    done = evalkit.run_experiment(dataset="kill", agent=tenant.agent, task=lambda input: f"answer {input}",
                                  evaluators=[slow_check], output=io.StringIO())
    experiment_id = done.experiment_id
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "evaluate.py").write_text(EVALUATE_SCRIPT)
    with (tmp_path / "evaluate.log").open("wb") as out:
        script = subprocess.Popen([sys.executable, "evaluate.py", str(marks), str(experiment_id)], cwd=tmp_path,
                                  env=dict(os.environ, **tenant.env), stdout=out, stderr=subprocess.STDOUT,
                                  preexec_fn=_terminal_sigint)
    code, log = _ctrl_c(script, marks, tmp_path / "evaluate.log", timeout=30)
    assert code == 130, log
    assert "Traceback" not in log and "KeyboardInterrupt" not in log, log
    assert log.rstrip().splitlines()[-1] == (
        f"scoring experiment {experiment_id} stopped: interrupted before it finished. The runs are recorded; "
        f"finish scoring with `evalkit evaluate {experiment_id} --rescore --evaluator MODULE:slow_check` or "
        f"`evaluate_experiment(experiment_id={experiment_id}, evaluators=[slow_check], rescore=True)`"), log


# A Python evaluator in a module the CLI loads (`--evaluator hint_evals:slow_check`): it blocks (a slow model call)
# until the test releases it.
HINT_EVALS = """
import os, pathlib, time
import evalkit

@evalkit.evaluator
def slow_check(answer):
    marks = pathlib.Path(os.environ["HINT_MARKS"])
    if not (marks / "release").exists():
        (marks / "blocked").touch()
        time.sleep(600)
    return True
"""


def test_the_printed_finish_command_names_the_python_evaluator_and_running_it_finishes_scoring(
        served: Served, tenant: Tenant, tmp_path: Path) -> None:
    """Before: Ctrl-C while `evalkit run --evaluator hint_evals:slow_check` scored said "finish scoring with …
    `evalkit evaluate N`", and the service's "not fully scored; finish it with `evalkit evaluate N`"; run as
    printed, that command scores the service's evaluators only, so slow_check's scores stayed missing and the
    experiment stayed `evaluating`."""
    write_cases(tmp_path, "hint", {name: f"input: {name}\nevaluators: [slow_check]\n" for name in NAMES[:3]})
    (tmp_path / "hint_task.py").write_text("def task(input):\n    return f'answer {input}'\n")
    (tmp_path / "hint_evals.py").write_text(HINT_EVALS)
    marks = tmp_path / "marks"
    marks.mkdir()
    env = dict(os.environ, **tenant.env, HINT_MARKS=str(marks))
    with (tmp_path / "run.log").open("wb") as out:
        runner = subprocess.Popen(
            [sys.executable, "-m", "evalkit.cli", "run", "hint", "--agent", tenant.agent, "--task", "hint_task:task",
             "--evaluator", "hint_evals:slow_check", "--trajectory-wait-seconds", "30"],
            cwd=tmp_path, env=env, stdout=out, stderr=subprocess.STDOUT,
            preexec_fn=_terminal_sigint)
    code, log = _ctrl_c(runner, marks, tmp_path / "run.log", timeout=30)
    experiment_id = _experiment_of(served, tenant)["experiment_id"]
    assert code == 130, log
    wanted = f"evalkit evaluate {experiment_id} --evaluator hint_evals:slow_check"
    printed = re.findall(r"`(evalkit evaluate [^`]*)`", log.rstrip().splitlines()[-1])
    assert printed == [wanted], log
    # The service says the same, from what the experiment recorded when it was created.
    status, refused = served.call("GET", f"/api/experiments/{experiment_id}/compare?baseline_id={experiment_id}",
                                  token=tenant.token)
    assert status == 409 and f"`{wanted}`" in refused["error"]["message"], refused

    (marks / "release").touch()
    command = shlex.split(printed[0])
    finished = subprocess.run([str(Path(sys.executable).parent / command[0]), *command[1:]], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=120)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert served.ok("GET", f"/api/experiments/{experiment_id}", token=tenant.token)["status"] == "completed"
    runs = served.ok("GET", f"/api/experiments/{experiment_id}/runs?evaluations=true", token=tenant.token)["runs"]
    verdicts = [e for r in runs for e in r.get("evaluations") or [] if e["evaluator"] == "slow_check"]
    assert len(verdicts) == 3 and all(e["passed"] for e in verdicts), runs



def test_evaluate_after_a_runner_killed_while_scoring_finishes_at_once(served: Served, tenant: Tenant,
                                                                        tmp_path: Path) -> None:
    """Found by `kill -9` of `evalkit run` while its Python evaluators ran. Before: for the rest of the dead
    runner's 60 s lease, `evalkit evaluate N` ran every Python evaluator, then had each verdict refused ("being
    run by sdk:…; publish with its lease_holder") and ended saying to run `evalkit evaluate N`, the very command
    that had just failed."""
    marks = tmp_path / "marks"
    marks.mkdir()
    env = {k: v for k, v in dict(os.environ, **tenant.env).items() if k != "EVALKIT_LEASE_TTL_SECONDS"}
    runner = _start(tmp_path, tenant, marks, env, script=SCORING_RUNNER, evaluators="evaluators: [slow_check]\n")

    @evalkit.evaluator
    def slow_check(answer: str | None) -> bool:
        return bool(answer and answer.startswith("answer "))

    try:
        _wait_blocked(runner, marks, tmp_path / "runner.log")
        # While the runner lives, scoring beside it is refused up front, saying by whom and what to do.
        eid = int(_experiment_of(served, tenant)["experiment_id"])  # type: ignore[call-overload]
        with pytest.raises(ValueError, match=rf"experiment {eid} is being run by sdk:.* until .*; wait for it to "
                                             rf"finish, .* finish scoring with `evalkit evaluate {eid} --evaluator"):
            evalkit.evaluate_experiment(experiment_id=eid, evaluators=[slow_check], output=io.StringIO())
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
    finally:
        if runner.poll() is None:
            runner.kill()
    experiment = _experiment_of(served, tenant)
    eid = int(experiment["experiment_id"])  # type: ignore[call-overload]
    assert experiment["status"] == "evaluating" and experiment["lease"]["expired"] is False  # type: ignore[index]

    started = time.monotonic()
    result = evalkit.evaluate_experiment(experiment_id=eid, evaluators=[slow_check], output=io.StringIO())
    assert time.monotonic() - started < 45  # not after the dead runner's lease ran out
    card = result.scorecard["scorecard"]  # type: ignore[index]
    (scored,) = [e for e in card["evaluators"] if e["evaluator"] == "slow_check"]
    assert (scored["n"], scored["passed"]) == (len(NAMES), len(NAMES))
    assert served.ok("GET", f"/api/experiments/{eid}", token=tenant.token)["status"] == "completed"
