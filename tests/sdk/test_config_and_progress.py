"""evalkit.yaml discovery and secrets, login and environment precedence, progress output, the loop guard."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from evalkit import evaluate_experiment, run_experiment
from evalkit.sdk.config import ConfigError, connection, find_config, load_project
from evalkit.sdk.datasets import read_dataset
from evalkit.sdk.progress import ProgressReport
from evalkit.sdk_config import (
    keep_agent_key,
    load_login,
    login_path,
    read_logins,
    save_login,
    stored_agent_key,
    use_login,
)


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ("EVALKIT_URL", "EVALKIT_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def write_project(root: Path, credentials: str = "") -> None:
    (root / "evals" / "cases" / "qa").mkdir(parents=True)
    (root / "evals" / "fixtures").mkdir(parents=True)
    (root / "evals" / "evalkit.yaml").write_text(
        f"cases: cases\nfixtures: fixtures\n{credentials}")


def test_found_from_a_subfolder_upward(tmp_path: Path) -> None:
    write_project(tmp_path)
    deep = tmp_path / "evals" / "cases" / "qa"
    assert find_config(deep) == tmp_path / "evals" / "evalkit.yaml"
    project = load_project(start=deep)
    assert project.cases_dir == (tmp_path / "evals" / "cases").resolve()
    assert project.dataset_folder("qa") == (tmp_path / "evals" / "cases" / "qa").resolve()
    assert project.dataset_folder("qa@acme") is None and project.dataset_folder("nope") is None
    assert find_config(tmp_path) is None


def test_credentials_are_env_references(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_project(tmp_path, "credentials:\n  judges:\n    http://judge.local/v1/: env:JUDGE_KEY\n"
                            "  agents:\n    bot@acme: env:BOT_KEY\n")
    project = load_project(start=tmp_path / "evals")
    monkeypatch.setenv("JUDGE_KEY", "sk-judge")
    assert project.judge_key("http://judge.local/v1") == "sk-judge"
    assert project.judge_keys() == {"http://judge.local/v1": "sk-judge"}
    with pytest.raises(ConfigError, match=r"\$BOT_KEY, which is not set"):
        project.agent_key("bot@acme")
    monkeypatch.setenv("BOT_KEY", "ek_x")
    assert project.agent_key("bot@acme") == "ek_x"
    assert project.agent_key("other@acme") is None


def test_a_plain_text_secret_is_refused(tmp_path: Path) -> None:
    write_project(tmp_path, "credentials:\n  judges:\n    https://api.openai.com/v1: sk-live-123\n")
    with pytest.raises(ConfigError, match="plain text; write `env:NAME`"):
        load_project(start=tmp_path / "evals")


def test_unknown_keys_are_refused(tmp_path: Path) -> None:
    write_project(tmp_path, "case: typo\n")
    with pytest.raises(ConfigError, match="case"):
        load_project(start=tmp_path / "evals")


def test_connection_precedence(monkeypatch: pytest.MonkeyPatch) -> None:
    assert connection().url == "http://127.0.0.1:8000" and connection().token is None
    save_login("http://evalkit.internal:8000/", "evk_login")
    with pytest.warns(UserWarning, match="plain http"):
        found = connection()
    assert (found.url, found.token) == ("http://evalkit.internal:8000", "evk_login")
    monkeypatch.setenv("EVALKIT_URL", "http://127.0.0.1:9999")
    monkeypatch.setenv("EVALKIT_TOKEN", "evk_env")
    assert (connection().url, connection().token) == ("http://127.0.0.1:9999", "evk_env")
    assert connection("http://127.0.0.1:1", "evk_arg").token == "evk_arg"


def test_one_login_per_server_and_its_token_only_for_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    save_login("http://127.0.0.1:8000", "evk_first")
    save_login("http://127.0.0.1:9000/", "evk_second")
    data = read_logins()
    assert data["current"] == "http://127.0.0.1:9000" and set(data["servers"]) == {
        "http://127.0.0.1:8000", "http://127.0.0.1:9000"}
    assert load_login() == {"url": "http://127.0.0.1:9000", "token": "evk_second"}
    assert load_login("http://127.0.0.1:8000/")["token"] == "evk_first"
    # Another server named by EVALKIT_URL gets its own login's token, never the current one's.
    monkeypatch.setenv("EVALKIT_URL", "http://127.0.0.1:8000")
    assert connection().token == "evk_first"
    monkeypatch.setenv("EVALKIT_URL", "http://127.0.0.1:7000")
    assert connection().token is None
    assert use_login("http://127.0.0.1:8000") and load_login()["token"] == "evk_first"
    assert not use_login("http://nowhere:1")
    # Ingest keys are kept per server; logging out (or in as someone else) forgets them.
    keep_agent_key("http://127.0.0.1:8000", "bot@acme", "evk_key")
    assert stored_agent_key("http://127.0.0.1:8000", "bot@acme") == "evk_key"
    assert stored_agent_key("http://127.0.0.1:9000", "bot@acme") is None
    save_login("http://127.0.0.1:8000", None)
    assert stored_agent_key("http://127.0.0.1:8000", "bot@acme") is None
    assert (login_path().stat().st_mode & 0o777) == 0o600


def test_a_login_file_of_the_older_shape_is_read(tmp_path: Path) -> None:
    login_path().parent.mkdir(parents=True)
    login_path().write_text('{"url": "http://127.0.0.1:8000/", "token": "evk_old"}')
    assert load_login() == {"url": "http://127.0.0.1:8000", "token": "evk_old"}
    save_login("http://127.0.0.1:9000", "evk_new")
    assert load_login("http://127.0.0.1:8000")["token"] == "evk_old"


def test_dataset_folder_hash_changes_with_content_and_fixtures(tmp_path: Path) -> None:
    write_project(tmp_path)
    folder = tmp_path / "evals" / "cases" / "qa"
    (folder / "one.yaml").write_text("input: What is 2+2?\nexpected: '4'\ntags: [smoke]\nfiles: [notes.txt]\n")
    (folder / "two.json").write_text('{"id": "second", "input": {"q": "x"}}')
    (tmp_path / "evals" / "fixtures" / "notes.txt").write_text("v1")
    fixtures = tmp_path / "evals" / "fixtures"
    first = read_dataset(folder, "qa", fixtures)
    assert [c.id for c in first.cases] == ["one", "second"]
    assert first.cases[0].files[0].name == "notes.txt" and first.cases[0].files[0].size == 2
    (fixtures / "notes.txt").write_text("v2")
    second = read_dataset(folder, "qa", fixtures)
    assert second.content_hash != first.content_hash
    (folder / "three.yaml").write_text("input: y\nfiles: [absent.pdf]\n")
    with pytest.raises(ConfigError, match=r"absent\.pdf"):
        read_dataset(folder, "qa", fixtures)


def test_plain_progress_lines() -> None:
    out = io.StringIO()
    report = ProgressReport(out, live=False)
    report.start(2, "experiment 1: 2 run(s)")
    report.run_started()
    report.run_finished("capital", 0, "completed", "valid", 0.001)
    report.run_finished("capital", 1, "failed", None, None, note="ValueError: x")
    report.close()
    assert out.getvalue().splitlines() == ["experiment 1: 2 run(s)", "capital #0 completed (valid)",
                                           "capital #1 failed (no trajectory) ValueError: x"]


def test_live_bar_shows_counts_and_cost() -> None:
    out = io.StringIO()
    report = ProgressReport(out, live=True)
    report.start(3, "experiment 2")
    report.run_started()
    report.run_started()
    report.run_finished("a", 0, "completed", "valid", 0.25, priced=True)
    report.run_finished("b", 0, "failed", "partial", None, priced=False)
    report.close()
    text = out.getvalue()
    assert "done 2" in text and "failed 1" in text and "running 0" in text
    assert "some unpriced" in text and "$0.2500" in text and "ETA" in text
    assert "a #0 completed (valid)" in text


def test_the_event_loop_guard_names_the_async_twin() -> None:
    async def inside() -> None:
        with pytest.raises(RuntimeError, match="arun_experiment"):
            run_experiment(dataset="qa", agent="bot@acme", task=lambda input: "x")
        with pytest.raises(RuntimeError, match="aevaluate_experiment"):
            evaluate_experiment(experiment_id=1)

    asyncio.run(inside())
