"""The CLI against the running service: sessions list, trajectory get/export, mapping get/set."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evalkit.cli import main
from tests.conftest import ADMIN_TOKEN
from tests.trajectory_service.conftest import Service, chat, root


async def _cli(svc: Service, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = await asyncio.to_thread(main, [*argv, "--url", svc.api, "--token", ADMIN_TOKEN])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_cli_reads_sessions_trajectories_and_mappings(svc: Service, capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(1, 11, 10, 1.0, text="hello there"), root(1, 10, "s-cli", 0.5, 2.0)])
    await svc.send(key, [chat(2, 21, 20, 5.0, model="unknown-llm"), root(2, 20, "s-cli-2", 4.5, 6.0)])

    code, out, _ = await _cli(svc, capsys, "sessions", "list", agent)
    assert code == 0 and "s-cli" in out and "unpriced" in out and "$0.000140" in out
    assert "LLM calls" in out  # what the count is: a trajectory of one call has two steps (user, agent)
    code, out, _ = await _cli(svc, capsys, "sessions", "list", agent, "--json", "--sort", "cost")
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == ["s-cli", "s-cli-2"]
    code, out, _ = await _cli(svc, capsys, "sessions", "list", agent, "--json", "--search", "CLI-2")
    assert [s["session_id"] for s in json.loads(out)["sessions"]] == ["s-cli-2"]

    code, out, _ = await _cli(svc, capsys, "trajectory", "get", agent, "s-cli", "--wait", "1")
    assert code == 0 and "hello there" in out and "valid" in out
    code, out, _ = await _cli(svc, capsys, "trajectory", "get", agent, "s-cli", "--json")
    assert json.loads(out)["steps"][-1]["message"] == "hello there"
    code, _, err = await _cli(svc, capsys, "trajectory", "get", agent, "missing")
    assert code == 1 and "404" in err and "no session 'missing'" in err

    code, out, err = await _cli(svc, capsys, "trajectory", "export", agent, "--session", "s-cli-2")
    assert code == 0 and [json.loads(line)["session_id"] for line in out.splitlines()] == ["s-cli-2"]
    assert "exported 1" in err
    code, out, _ = await _cli(svc, capsys, "trajectory", "export", agent)
    assert len(out.splitlines()) == 2

    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("ignore_span_names: ['chat *']\nversion: no-chats\n")
    code, out, _ = await _cli(svc, capsys, "mapping", "set", agent, str(mapping))
    assert code == 0 and "version 1 (no-chats)" in out
    code, out, _ = await _cli(svc, capsys, "mapping", "get", agent)
    assert "no-chats" in out and "chat *" in out
    code, out, _ = await _cli(svc, capsys, "mapping", "get", agent, "--json")
    assert json.loads(out)["overrides"]["ignore_span_names"] == ["chat *"]
    mapping.write_text("attribute_map: {x: nowhere}\n")
    code, _, err = await _cli(svc, capsys, "mapping", "set", agent, str(mapping))
    assert code == 1 and "unknown ATIF target" in err
