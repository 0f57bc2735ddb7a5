"""The CLI against `evalkit serve`: login, datasets push, run --task, experiments list/show/gate, exit codes,
JSON mode, reading runs with their evaluations, export, and the lifecycle commands."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

from tests.sdk.conftest import ADMIN, Served, Tenant, write_cases

TASK = '''
import evalkit

def answer(input):
    return "4" if input == "2+2" else "no idea"

@evalkit.evaluator
def is_four(answer):
    if answer == "4":
        return {"passed": True, "label": "four", "explanation": "said 4"}
    return {"passed": False, "label": "other", "explanation": f"said {answer!r}, not 4"}
'''


def evalkit_cli(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evalkit.cli", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)


def logged_out_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("EVALKIT_URL", "EVALKIT_TOKEN")}


def test_cli_from_login_to_gate(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\nevaluators: [is_four]\n",
                                   "other": "input: '3+3'\nevaluators: [is_four]\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = logged_out_env()
    login = evalkit_cli("login", served.api, "--token", tenant.token, env=env, cwd=tmp_path)
    assert login.returncode == 0, login.stderr
    assert f"logged in to {served.api} as {tenant.user}" in login.stdout

    # A case naming an evaluator nobody declared is refused at push, naming the case and the name;
    # under --json the error is JSON on stdout, with the exit code.
    refused = evalkit_cli("datasets", "push", "sums", "--json", env=env, cwd=tmp_path)
    assert refused.returncode == 1 and refused.stderr == ""
    error = json.loads(refused.stdout)["error"]
    assert "case four names evaluator 'is_four'" in error["message"] and error["exit_code"] == 1
    assert "--evaluator module:name" in error["message"]
    pushed = evalkit_cli("datasets", "push", "sums", "--evaluator", "mytask:is_four", "--json", env=env,
                         cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(pushed.stdout)["cases"] == 2

    # JSON mode: stdout is one JSON document, progress and the scorecard go to stderr.
    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--evaluator",
                      "mytask:is_four", "--repetitions", "2", "--name", "baseline sums", "--description", "two reps",
                      "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    result = json.loads(ran.stdout)
    assert "runs recorded" not in ran.stdout and "#0 completed" in ran.stderr
    experiment = result["experiment_id"]
    assert result["url"] == f"{served.api}/experiments/{experiment}"
    assert [(r["case_id"], r["status"]) for r in result["runs"]] == [("four", "completed")] * 2 + [
        ("other", "completed")] * 2
    # The local folder went to the agent's workspace, not the user's personal one.
    shown_json = json.loads(evalkit_cli("experiments", "show", experiment, "--json", env=env, cwd=tmp_path).stdout)
    assert shown_json["dataset"] == f"sums@{tenant.workspace}" and shown_json["name"] == "baseline sums"

    listed = evalkit_cli("experiments", "list", "--agent", tenant.agent, "--json", env=env, cwd=tmp_path)
    assert json.loads(listed.stdout)["experiments"][0]["scores"] == {"is_four": 0.5}
    # A filter that matches nothing says so (not "no experiments yet"); an unknown status is refused, naming them.
    none_stopped = evalkit_cli("experiments", "list", "--status", "stopped", env=env, cwd=tmp_path)
    assert none_stopped.returncode == 0 and "no experiment matches --status stopped" in none_stopped.stdout
    bogus = evalkit_cli("experiments", "list", "--status", "scoring", env=env, cwd=tmp_path)
    assert bogus.returncode != 0 and "evaluating" in bogus.stderr and "stopped" in bogus.stderr, bogus.stderr
    shown = evalkit_cli("experiments", "show", experiment, env=env, cwd=tmp_path)
    assert shown.returncode == 0 and "four" in shown.stdout and "#1:completed(valid)" in shown.stdout
    assert "model None" not in shown.stdout and f"{served.api}/experiments/{experiment}" in shown.stdout

    # The candidate (the same task again) gated against that baseline; a gate against itself is refused (it passed
    # whatever changed: a CI job's misconfigured baseline), exit 2 with the command to write.
    itself = evalkit_cli("experiments", "gate", experiment, "--baseline", experiment, "--min-pairs", "2", env=env,
                         cwd=tmp_path)
    assert itself.returncode == 2 and itself.stdout == "", itself.stdout + itself.stderr
    assert f"experiment {experiment} is gated against itself" in itself.stderr, itself.stderr
    assert f"`evalkit experiments gate {experiment} --baseline N`" in itself.stderr, itself.stderr
    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--evaluator",
                      "mytask:is_four", "--repetitions", "2", "--name", "candidate sums", "--json", env=env,
                      cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr + ran.stdout
    candidate = str(json.loads(ran.stdout)["experiment_id"])
    passed = evalkit_cli("experiments", "gate", candidate, "--baseline", experiment, "--min-score", "0.5",
                         "--min-pairs", "2", env=env, cwd=tmp_path)
    assert passed.returncode == 0 and passed.stdout.splitlines()[-1] == "gate: passed", passed.stdout + passed.stderr
    failed = evalkit_cli("experiments", "gate", candidate, "--baseline", experiment, "--min-score", "is_four=0.9",
                         "--min-pairs", "2", "--markdown",
                         str(tmp_path / "gate.md"), env=env, cwd=tmp_path)
    assert failed.returncode == 1 and "gate: FAILED" in failed.stdout
    assert (tmp_path / "gate.md").read_text().strip()
    # Too few pairs for the default: the way out is said with the flag, in the verdict and in the report.
    few = evalkit_cli("experiments", "gate", candidate, "--baseline", experiment, env=env, cwd=tmp_path)
    assert few.returncode == 1 and "or lower `--min-pairs` to gate on fewer" in few.stdout.splitlines()[-1]
    assert "min_pairs" not in few.stdout, few.stdout

    # Re-scoring from the CLI with the declared Python evaluator; an undeclared one is refused (exit 2).
    rescored = evalkit_cli("evaluate", experiment, "--evaluator", "mytask:is_four", "--rescore", env=env,
                           cwd=tmp_path)
    assert rescored.returncode == 0, rescored.stderr
    (tmp_path / "other.py").write_text("import evalkit\n@evalkit.evaluator\ndef stranger(answer):\n    return True\n")
    refused = evalkit_cli("evaluate", experiment, "--evaluator", "other:stranger", env=env, cwd=tmp_path)
    assert refused.returncode == 2 and "did not declare" in refused.stderr

    archived = evalkit_cli("agents", "archive", tenant.agent, env=dict(env, EVALKIT_TOKEN=ADMIN), cwd=tmp_path)
    assert archived.returncode == 0, archived.stderr
    again = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", env=env, cwd=tmp_path)
    assert again.returncode == 2 and "archived" in again.stderr
    unarchived = evalkit_cli("agents", "set", tenant.agent, "--unarchive", "--max-concurrent-runs", "3",
                             "--json", env=dict(env, EVALKIT_TOKEN=ADMIN), cwd=tmp_path)
    assert unarchived.returncode == 0, unarchived.stderr
    agent = json.loads(unarchived.stdout)
    assert agent["archived"] is False and agent["max_concurrent_runs"] == 3


def test_runs_with_their_evaluations_filters_and_export(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\nevaluators: [is_four, contains]\nexpected: '4'\n",
                                   "other": "input: '3+3'\nevaluators: [is_four]\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = dict(os.environ)
    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--evaluator",
                      "mytask:is_four", "--repetitions", "2", "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    experiment = str(json.loads(ran.stdout)["experiment_id"])

    # The route: each run with its evaluations, whole.
    runs = served.ok("GET", f"/api/experiments/{experiment}/runs?evaluations=true", token=tenant.token)["runs"]
    assert len(runs) == 4
    four = next(r for r in runs if r["case_id"] == "four")
    by_name = {e["evaluator"]: e for e in four["evaluations"]}
    assert set(by_name) == {"is_four", "contains"}
    assert by_name["is_four"] | {"metadata": None} == {
        "evaluator": "is_four", "score": 1.0, "passed": True, "label": "four", "explanation": "said 4",
        "error": None, "version": by_name["is_four"]["version"], "cost_usd": 0.0, "source": "sdk", "metadata": None}
    assert by_name["contains"]["passed"] is True and by_name["contains"]["source"] == "service"
    other = next(r for r in runs if r["case_id"] == "other")
    assert [(e["evaluator"], e["passed"], e["explanation"]) for e in other["evaluations"]] == [
        ("is_four", False, "said 'no idea', not 4")]

    # Filters: failed runs only; one case; one evaluator; unknown evaluator is a 400 naming the known ones.
    failed = served.ok("GET", f"/api/experiments/{experiment}/runs?failed=true", token=tenant.token)["runs"]
    assert sorted((r["case_id"], r["repetition"]) for r in failed) == [("other", 0), ("other", 1)]
    contains = served.ok("GET", f"/api/experiments/{experiment}/runs?evaluator=contains", token=tenant.token)["runs"]
    assert {r["case_id"] for r in contains} == {"four"}
    assert all([e["evaluator"] for e in r["evaluations"]] == ["contains"] for r in contains)
    status, body = served.call("GET", f"/api/experiments/{experiment}/runs?evaluator=nope", token=tenant.token)
    assert status == 400 and "is_four" in body["error"]["message"]

    table = evalkit_cli("experiments", "runs", experiment, "--failed", env=env, cwd=tmp_path)
    assert table.returncode == 0, table.stderr
    assert "said 'no idea', not 4" in table.stdout and "FAIL" in table.stdout and "said 4" not in table.stdout
    as_json = evalkit_cli("experiments", "runs", experiment, "--case", "four", "--json", env=env, cwd=tmp_path)
    assert {r["case_id"] for r in json.loads(as_json.stdout)["runs"]} == {"four"}

    # CSV: a row per run and evaluator, read back by the csv module; JSONL: a run a line.
    exported = evalkit_cli("experiments", "export", experiment, "--format", "csv", env=env, cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    rows = list(csv.DictReader(io.StringIO(exported.stdout)))
    assert len(rows) == 6  # four × 2 evaluators × 2 repetitions, other × 1 × 2
    assert {(r["case_id"], r["evaluator"], r["passed"]) for r in rows} == {
        ("four", "is_four", "True"), ("four", "contains", "True"), ("other", "is_four", "False")}
    assert all(r["session_id"] and r["status"] == "completed" for r in rows)
    lines = evalkit_cli("experiments", "export", experiment, "--format", "jsonl", "-o", str(tmp_path / "runs.jsonl"),
                        env=env, cwd=tmp_path)
    assert lines.returncode == 0, lines.stderr
    records = [json.loads(line) for line in (tmp_path / "runs.jsonl").read_text().splitlines()]
    assert len(records) == 4 and all("evaluations" in r for r in records)

    # `… | head` ends cleanly: no BrokenPipeError traceback.
    piped = subprocess.run(f"{sys.executable} -m evalkit.cli experiments export {experiment} --format csv | head -1",
                           shell=True, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert piped.stdout.startswith("experiment_id,run_id") and "Traceback" not in piped.stderr, piped.stderr


def test_messages_lifecycle_and_datasets(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\nevaluators: [contains]\nexpected: '4'\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = dict(os.environ)
    missing = evalkit_cli("experiments", "show", "999999", env=env, cwd=tmp_path)
    assert missing.returncode == 1 and "`evalkit experiments list`" in missing.stderr
    assert "/api/" not in missing.stderr

    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--json", env=env,
                      cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    experiment = str(json.loads(ran.stdout)["experiment_id"])
    compare = evalkit_cli("experiments", "compare", experiment, "--baseline", "999999", env=env, cwd=tmp_path)
    assert compare.returncode == 1 and "no baseline experiment 999999" in compare.stderr
    assert "`evalkit experiments list`" in compare.stderr

    renamed = evalkit_cli("experiments", "rename", experiment, "first try", "--description", "just one case",
                          "--json", env=env, cwd=tmp_path)
    assert renamed.returncode == 0, renamed.stderr
    assert json.loads(renamed.stdout)["config"]["description"] == "just one case"
    assert json.loads(renamed.stdout)["name"] == "first try"

    # The dataset is used by the experiment: renaming or deleting it is refused, saying why.
    dataset = f"sums@{tenant.workspace}"
    versions = evalkit_cli("datasets", "versions", dataset, "--json", env=env, cwd=tmp_path)
    assert len(json.loads(versions.stdout)["versions"]) == 1
    reviewed = evalkit_cli("datasets", "review", dataset, "four", "approved", "--note", "checked by hand", env=env,
                           cwd=tmp_path)
    assert reviewed.returncode == 0 and "approved (checked by hand)" in reviewed.stdout, reviewed.stderr
    assert "approved" in evalkit_cli("datasets", "show", dataset, env=env, cwd=tmp_path).stdout
    in_use = evalkit_cli("datasets", "delete", dataset, "--yes", env=env, cwd=tmp_path)
    assert in_use.returncode == 1 and f"used by experiment(s) {experiment}" in in_use.stderr

    # Cancel a pending experiment, then delete both; the id is not reused and reads say "deleted".
    pending = served.ok("POST", "/api/experiments", {"agent": tenant.agent, "dataset": dataset}, token=tenant.token)
    # The service's advice is said with commands on the command line, not Python keyword arguments.
    unfinished = evalkit_cli("experiments", "compare", str(pending["experiment_id"]), "--baseline", experiment,
                             env=env, cwd=tmp_path)
    assert unfinished.returncode == 1 and "--allow-incomplete" in unfinished.stderr, unfinished.stderr
    assert "_experiment(" not in unfinished.stderr and "=true" not in unfinished.stderr
    cancelled = evalkit_cli("experiments", "cancel", str(pending["experiment_id"]), "--json", env=env, cwd=tmp_path)
    assert cancelled.returncode == 0, cancelled.stderr
    assert json.loads(cancelled.stdout)["status"] == "cancelled"
    unconfirmed = evalkit_cli("experiments", "delete", experiment, env=env, cwd=tmp_path)
    assert unconfirmed.returncode == 2 and "--yes" in unconfirmed.stderr
    for eid in (experiment, str(pending["experiment_id"])):
        deleted = evalkit_cli("experiments", "delete", eid, "--yes", "--json", env=env, cwd=tmp_path)
        assert deleted.returncode == 0, deleted.stderr
    assert json.loads(deleted.stdout)["deleted"] is True
    status, body = served.call("GET", f"/api/experiments/{experiment}/runs", token=tenant.token)
    assert status == 404 and "was deleted" in body["error"]["message"]
    listed = served.ok("GET", f"/api/experiments?agent={tenant.agent}", token=tenant.token)["experiments"]
    assert listed == []
    fresh = served.ok("POST", "/api/experiments", {"agent": tenant.agent, "dataset": dataset}, token=tenant.token)
    assert fresh["experiment_id"] > pending["experiment_id"]
    served.ok("DELETE", f"/api/experiments/{fresh['experiment_id']}", token=tenant.token)

    moved = evalkit_cli("datasets", "rename", dataset, "additions", env=env, cwd=tmp_path)
    assert moved.returncode == 0, moved.stderr
    shown = served.ok("GET", f"/api/datasets/additions@{tenant.workspace}", token=tenant.token)
    assert [c["id"] for c in shown["cases"]] == ["four"]
    gone = evalkit_cli("datasets", "show", dataset, env=env, cwd=tmp_path)
    assert gone.returncode == 1 and "`evalkit datasets list`" in gone.stderr
    dropped = evalkit_cli("datasets", "delete", f"additions@{tenant.workspace}", "--yes", env=env, cwd=tmp_path)
    assert dropped.returncode == 0, dropped.stderr
    assert served.call("GET", f"/api/datasets/additions@{tenant.workspace}", token=tenant.token)[0] == 404

    # Members of the shared workspace.
    other = served.ok("POST", "/api/users", {"name": f"{tenant.user}b"})["name"]
    added = evalkit_cli("members", "set", tenant.workspace, other, "reviewer", env=env, cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    members = json.loads(evalkit_cli("members", "list", tenant.workspace, "--json", env=env, cwd=tmp_path).stdout)
    assert {"user": other, "role": "reviewer"}.items() <= next(
        m for m in members["members"] if m["user"] == other).items()


def test_wrong_names_and_ids_are_answered_with_commands(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    """A new user's first mistakes: the advice is a command to type, not an HTTP route, a JSON body or a
    Python keyword argument (before: `GET /api/experiments`, `{"name": ..., "workspace": ...}`, `workspace=...`)."""
    (tmp_path / "mytask.py").write_text(TASK)
    env = dict(os.environ)
    for args in (("evaluate", "999999"),
                 ("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--resume", "999999")):
        missing = evalkit_cli(*args, env=env, cwd=tmp_path)
        assert missing.returncode == 1, missing.stderr
        assert "list them with `evalkit experiments list`" in missing.stderr and "`GET /api" not in missing.stderr
    bare = evalkit_cli("agents", "create", "bot", env=env, cwd=tmp_path)
    assert bare.returncode == 1
    assert "write the agent as name@workspace" in bare.stderr and '{"name"' not in bare.stderr, bare.stderr
    unqualified = evalkit_cli("run", "sums", "--agent", "bot", "--task", "mytask:answer", env=env, cwd=tmp_path)
    assert unqualified.returncode == 2
    assert unqualified.stderr.strip() == "evalkit: agent 'bot' must be written name@workspace", unqualified.stderr


def test_a_run_that_cannot_go_as_asked_is_refused_before_an_experiment_is_made(served: Served, tenant: Tenant,
                                                                                tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\nevaluators: [is_four]\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = dict(os.environ)
    run = ("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer")
    # Before: --concurrency 0 ran the agent's default concurrency; --timeout 0 recorded an experiment of timeouts.
    for extra, said in ((("--concurrency", "0"), "concurrency must be ≥ 1 (got 0)"),
                        (("--timeout", "0"), "timeout must be more than 0 seconds (got 0)")):
        refused = evalkit_cli(*run, "--evaluator", "mytask:is_four", *extra, env=env, cwd=tmp_path)
        assert refused.returncode == 2 and said in refused.stderr, refused.stdout + refused.stderr
    assert served.ok("GET", f"/api/experiments?agent={tenant.agent}", token=tenant.token)["experiments"] == []
    # A case of a pushed dataset asking for a Python evaluator the command did not pass: said with the option,
    # not the Python call.
    pushed = evalkit_cli("datasets", "push", "sums", "--workspace", tenant.workspace, "--evaluator", "mytask:is_four",
                         env=env, cwd=tmp_path)
    assert pushed.returncode == 0, pushed.stderr
    undeclared = evalkit_cli("run", f"sums@{tenant.workspace}", *run[2:], env=env, cwd=tmp_path)
    assert undeclared.returncode == 1
    assert "(`--evaluator module:name`)" in undeclared.stderr and "run_experiment(" not in undeclared.stderr, \
        undeclared.stderr


def test_a_file_that_cannot_be_read_or_written_is_a_usage_error(served: Served, tenant: Tenant,
                                                                 tmp_path: Path) -> None:
    """Before: a Python traceback (FileNotFoundError), exit 1, which for the gate also means "did not pass"."""
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\nevaluators: [contains]\nexpected: '4'\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = dict(os.environ)
    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--json", env=env,
                      cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    experiment = str(json.loads(ran.stdout)["experiment_id"])
    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", "--json", env=env,
                      cwd=tmp_path)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    baseline = str(json.loads(ran.stdout)["experiment_id"])
    nowhere = tmp_path / "no-such-folder"
    for args, said in (
            (("experiments", "export", experiment, "-o", str(nowhere / "runs.csv")), "cannot write"),
            (("experiments", "gate", experiment, "--baseline", baseline, "--min-pairs", "1", "--markdown",
              str(nowhere / "gate.md")), "cannot write"),
            (("mapping", "set", tenant.agent, str(nowhere / "mapping.yaml")), "cannot read")):
        result = evalkit_cli(*args, env=env, cwd=tmp_path)
        assert result.returncode == 2, (args, result.stderr)
        assert result.stderr.startswith(f"evalkit: {said} {nowhere}"), (args, result.stderr)
        assert "Traceback" not in result.stderr and "No such file or directory" in result.stderr


def test_case_file_errors_say_file_field_and_fix(tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "bad", {"one": "input: x\ntags: smoke\nevaluatorz: [contains]\n"})
    pushed = evalkit_cli("datasets", "push", "bad", env=dict(os.environ), cwd=tmp_path)
    assert pushed.returncode == 2
    message = pushed.stderr
    assert str(tmp_path / "cases" / "bad" / "one.yaml") in message
    assert "tags: input should be a valid list; write a list of words: `tags: [smoke, billing]`" in message
    assert "evaluatorz: `evaluatorz` is not a case field" in message
    assert "{'type'" not in message and "'loc'" not in message


def test_logins_per_server_and_one_ingest_key_kept(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = {k: v for k, v in logged_out_env().items() if k != "EVALKIT_AGENT_KEY"}
    assert evalkit_cli("login", served.api, "--token", tenant.token, env=env, cwd=tmp_path).returncode == 0
    # A second server (the same one under another name) is a second login; the first is kept.
    other_url = served.api.replace("127.0.0.1", "localhost")
    assert evalkit_cli("login", other_url, "--token", ADMIN, env=env, cwd=tmp_path).returncode == 0
    logins = json.loads(evalkit_cli("logins", "--json", env=env, cwd=tmp_path).stdout)["logins"]
    assert {(x["url"], x["current"]) for x in logins} == {(served.api, False), (other_url, True)}
    back = evalkit_cli("login", served.api, env=env, cwd=tmp_path)
    assert back.returncode == 0 and f"now using {served.api} as {tenant.user}" in back.stdout

    keys_before = len(served.ok("GET", f"/api/agents/{tenant.agent}/keys")["keys"])
    for _ in range(2):
        ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", env=env, cwd=tmp_path)
        assert ran.returncode == 0, ran.stderr
    keys_after = served.ok("GET", f"/api/agents/{tenant.agent}/keys")["keys"]
    assert len(keys_after) == keys_before + 1  # made once, kept with the login, reused
    assert "experiment" in ran.stdout and f"{served.api}/experiments/" in ran.stdout
    # Revoked, it is noticed and replaced (once more), never silently losing spans.
    stored = json.loads((Path(env["XDG_CONFIG_HOME"]) / "evalkit" / "login.json").read_text())
    kept = stored["servers"][served.api]["agent_keys"][tenant.agent]
    kept_id = next(k["key_id"] for k in keys_after if kept.startswith(k["prefix"]))
    served.ok("DELETE", f"/api/agents/{tenant.agent}/keys/{kept_id}")
    ran = evalkit_cli("run", "sums", "--agent", tenant.agent, "--task", "mytask:answer", env=env, cwd=tmp_path)
    assert ran.returncode == 0 and "the kept one was refused" in ran.stderr, ran.stderr
    assert "completed (valid)" in ran.stdout

    out = evalkit_cli("logout", env=env, cwd=tmp_path)
    assert out.returncode == 0 and served.api in out.stdout
    logins = json.loads(evalkit_cli("logins", "--json", env=env, cwd=tmp_path).stdout)["logins"]
    assert {(x["url"], x["logged_in"]) for x in logins} == {(served.api, False), (other_url, True)}


def test_an_unreachable_service_is_exit_3_naming_the_url(tmp_path: Path) -> None:
    write_cases(tmp_path, "sums", {"four": "input: '2+2'\n"})
    (tmp_path / "mytask.py").write_text(TASK)
    env = dict(os.environ, EVALKIT_URL="http://127.0.0.1:9", EVALKIT_TOKEN="evk_x", XDG_CONFIG_HOME=str(tmp_path))
    ran = evalkit_cli("run", "sums", "--agent", "bot@acme", "--task", "mytask:answer", env=env, cwd=tmp_path)
    assert ran.returncode == 3, ran.stderr
    assert "not reachable at http://127.0.0.1:9" in ran.stderr
    listed = evalkit_cli("experiments", "list", env=env, cwd=tmp_path)
    assert listed.returncode == 3 and "http://127.0.0.1:9" in listed.stderr
    as_json = evalkit_cli("experiments", "list", "--json", env=env, cwd=tmp_path)
    assert as_json.returncode == 3 and json.loads(as_json.stdout)["error"]["exit_code"] == 3
