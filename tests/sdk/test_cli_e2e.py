"""The CLI against `evalkit serve`: login, datasets push, run --task, experiments list/show/gate, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.sdk.conftest import Served, Tenant, write_cases

TASK = '''
import evalkit

def answer(input):
    return "4" if input == "2+2" else "no idea"

@evalkit.evaluator
def is_four(answer):
    return answer == "4"
'''


def evalkit_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalkit.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def test_cli_from_login_to_gate(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\nevaluators: [is_four]\n",
                                   "other": "input: '3+3'\nevaluators: [is_four]\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = {k: v for k, v in os.environ.items() if k not in ("EVALKIT_URL", "EVALKIT_TOKEN")}
    login = evalkit_cli("login", served.api, "--token", tenant.token, env=env, cwd=tmp_path)
    assert login.returncode == 0, login.stderr
    assert f"logged in to {served.api} as {tenant.user}" in login.stdout

    pushed = evalkit_cli("datasets", "push", "sums", "--json", env=env, cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(pushed.stdout)["cases"] == 2

    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--evaluator",
                      "mytask:is_four", "--repetitions", "2", "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    result = json.loads(ran.stdout[ran.stdout.index("{\n"):])
    experiment = result["experiment_id"]
    assert [(r["case_id"], r["status"]) for r in result["runs"]] == [("four", "completed")] * 2 + [
        ("other", "completed")] * 2

    listed = evalkit_cli("experiments", "list", "--agent", tenant.agent, "--json", env=env, cwd=tmp_path)
    assert json.loads(listed.stdout)["experiments"][0]["scores"] == {"is_four": 0.5}
    shown = evalkit_cli("experiments", "show", experiment, env=env, cwd=tmp_path)
    assert shown.returncode == 0 and "four" in shown.stdout and "#1:completed(valid)" in shown.stdout

    passed = evalkit_cli("experiments", "gate", experiment, "--baseline", experiment, "--min-score", "0.5",
                         env=env, cwd=tmp_path)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    failed = evalkit_cli("experiments", "gate", experiment, "--baseline", experiment, "--min-score", "is_four=0.9",
                         "--markdown",
                         str(tmp_path / "gate.md"), env=env, cwd=tmp_path)
    assert failed.returncode == 1 and "gate: FAILED" in failed.stdout
    assert (tmp_path / "gate.md").read_text().strip()

    # Re-scoring from the CLI with the declared Python evaluator; an undeclared one is refused (exit 2).
    rescored = evalkit_cli("evaluate", experiment, "--evaluator", "mytask:is_four", "--rescore", env=env,
                           cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stderr
    (tmp_path / "other.py").write_text("import evalkit\n@evalkit.evaluator\ndef stranger(answer):\n    return True\n")
    refused = evalkit_cli("evaluate", experiment, "--evaluator", "other:stranger", env=env, cwd=tmp_path)
    assert refused.returncode == 2 and "did not declare" in refused.stderr

    archived = evalkit_cli("agents", "archive", tenant.agent, env=dict(env, EVALKIT_TOKEN="evk_sdk_tests_admin"),
                           cwd=tmp_path)
    assert archived.returncode == 0, archived.stderr
    again = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", env=env, cwd=tmp_path)
    assert again.returncode == 2 and "archived" in again.stderr


def test_an_unreachable_service_is_exit_3_naming_the_url(tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = dict(os.environ, EVALKIT_URL="http://127.0.0.1:9", EVALKIT_TOKEN="evk_x", XDG_CONFIG_HOME=str(tmp_path))
    ran = evalkit_cli("run", "sums", "--agent", "bot@acme", "--task", "mytask:answer", env=env, cwd=tmp_path)
    assert ran.returncode == 3, ran.stderr
    assert "not reachable at http://127.0.0.1:9" in ran.stderr
    listed = evalkit_cli("experiments", "list", env=env, cwd=tmp_path)
    assert listed.returncode == 3 and "http://127.0.0.1:9" in listed.stderr
