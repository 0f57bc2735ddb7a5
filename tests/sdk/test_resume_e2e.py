"""A runner killed with SIGKILL mid-experiment, then `resume=` runs only what is missing; a lost lease stops."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

import evalkit
from evalkit.sdk.lease import LeaseLost
from tests.sdk.conftest import Served, Tenant, write_cases

RUNNER = """
import os, sys, time, pathlib
import evalkit

marks = pathlib.Path(sys.argv[1])

def task(input):
    (marks / f"{input}.{os.getpid()}").touch()
    time.sleep(0.3)
    return f"answer {input}"

evalkit.run_experiment(dataset="long", agent=sys.argv[2], task=task, concurrency=1)
"""


def test_sigkill_then_resume_runs_only_the_missing_runs(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    names = [f"c{i}" for i in range(8)]
    write_cases(tmp_path, "long", {name: f"input: {name}\n" for name in names})
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "runner.py").write_text(RUNNER)
    env = dict(os.environ, **tenant.env, EVALKIT_LEASE_TTL_SECONDS="2")
    with (tmp_path / "runner.log").open("wb") as log:
        runner = subprocess.Popen([sys.executable, "runner.py", str(marks), tenant.agent], cwd=tmp_path, env=env,
                                  stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        experiment_id = None
        while time.monotonic() < deadline:
            listed = served.ok("GET", f"/api/experiments?agent={tenant.agent}", token=tenant.token)["experiments"]
            if listed and listed[0]["progress"]["recorded"] >= 3:
                experiment_id = listed[0]["experiment_id"]
                break
            assert runner.poll() is None, (tmp_path / "runner.log").read_text()
            time.sleep(0.05)
        assert experiment_id is not None, (tmp_path / "runner.log").read_text()
        runner.send_signal(signal.SIGKILL)
        runner.wait(timeout=10)
    finally:
        if runner.poll() is None:
            runner.kill()
    time.sleep(2.2)  # the killed runner's lease runs out (and a record it sent as it died is stored by now)
    before = served.ok("GET", f"/api/experiments/{experiment_id}/runs?attempts=all", token=tenant.token)["runs"]
    done_before = {r["case_id"] for r in before}
    assert 3 <= len(done_before) < len(names), done_before
    assert len(list(marks.iterdir())) >= len(done_before)
    killed = served.ok("GET", f"/api/experiments/{experiment_id}", token=tenant.token)
    # Left `running` by the killed runner, whose lease ran out: resumable, and it says so.
    assert killed["status"] == "running" and killed["can_resume"] is True
    called: list[str] = []

    def task(input: str) -> str:
        called.append(input)
        return f"answer {input}"

    out = io.StringIO()
    result = evalkit.run_experiment(dataset="long", agent=tenant.agent, task=task, resume=experiment_id,
                                    output=out)
    assert result.experiment_id == str(experiment_id)
    assert sorted(called) == sorted(set(names) - done_before)
    assert [(r.case_id, r.status, r.attempts) for r in result.runs] == [(n, "completed", 1) for n in names]
    after = served.ok("GET", f"/api/experiments/{experiment_id}/runs?attempts=all", token=tenant.token)["runs"]
    assert sorted(r["case_id"] for r in after) == names  # one attempt each: nothing run twice
    assert served.ok("GET", f"/api/experiments/{experiment_id}", token=tenant.token)["status"] == "completed"


def test_a_runner_that_loses_its_lease_stops_and_says_how_to_resume(served: Served, tenant: Tenant,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVALKIT_LEASE_TTL_SECONDS", "2")
    write_cases(tmp_path, "steal", {f"c{i}": f"input: c{i}\n" for i in range(4)})
    called: list[str] = []

    def call(method: str, path: str, body: dict[str, object] | None = None) -> dict[str, object]:
        request = urllib.request.Request(served.api + path, method=method,
                                         data=json.dumps(body).encode() if body is not None else None)
        request.add_header("Authorization", f"Bearer {tenant.token}")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")  # type: ignore[no-any-return]

    def task(input: str, metadata: dict[str, object]) -> str:
        called.append(input)
        if input == "c1":
            # Another runner takes the experiment over (as after an expired lease).
            experiment = metadata["experiment_id"]
            # Given back and taken are two requests: the runner's renewal can take the lease back between them (a
            # 409 for the intruder, seen on a loaded host), so the intruder tries again until it holds it.
            for _ in range(50):
                lease = call("GET", f"/api/experiments/{experiment}")["lease"]
                holder = lease["holder"]  # type: ignore[index]
                if holder == "intruder":
                    break
                call("DELETE", f"/api/experiments/{experiment}/lease?holder={holder}")
                try:
                    call("POST", f"/api/experiments/{experiment}/lease", {"holder": "intruder", "ttl_seconds": 60})
                except urllib.error.HTTPError as exc:
                    if exc.code != 409:
                        raise
            time.sleep(1.0)
        return "ok"

    with pytest.raises(LeaseLost, match=r"resume=\d+"):
        evalkit.run_experiment(dataset="steal", agent=tenant.agent, task=task, concurrency=1, output=io.StringIO())
    assert "c3" not in called  # it stopped instead of running on
