"""`evalkit serve` in a subprocess (its own data dir, free ports), and a fake OpenAI-compatible judge.

One service serves the whole folder; each test takes its own workspace and agent.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

ADMIN = "evk_sdk_tests_admin"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    api: str
    otlp: str
    process: subprocess.Popen[bytes]
    log: Path

    def call(self, method: str, path: str, body: Any = None, token: str = ADMIN) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.api + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        request.add_header("Authorization", f"Bearer {token}")
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def ok(self, method: str, path: str, body: Any = None, token: str = ADMIN) -> Any:
        status, data = self.call(method, path, body, token)
        assert status < 300, (status, data)
        return data


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data_dir = tmp_path_factory.mktemp("evalkit-serve")
    api, otlp, grpc = free_port(), free_port(), free_port()
    # The tests' HTTP evaluators and judges listen on loopback: allowed for outbound calls.
    env = dict(os.environ, EVALKIT_BOOTSTRAP_TOKEN=ADMIN, EVALKIT_SETTLE_QUIET_SECONDS="0.3",
               EVALKIT_OUTBOUND_ALLOW="127.0.0.0/8,::1,localhost")
    log = data_dir / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(data_dir), "--api-port", str(api),
             "--otlp-http-port", str(otlp), "--grpc-port", str(grpc)], stdout=out, stderr=subprocess.STDOUT,
            env=env)
    service = Served(f"http://127.0.0.1:{api}", f"http://127.0.0.1:{otlp}", process, log)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(service.api + "/healthz", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"evalkit serve did not start:\n{log.read_text()}")
        time.sleep(0.2)
    yield service
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


@dataclass
class Tenant:
    """A workspace with an agent, a user of it, and the environment the SDK reads."""

    workspace: str
    agent: str
    user: str
    token: str
    key: str
    env: dict[str, str]


@pytest.fixture
def tenant(served: Served, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Tenant:
    suffix = uuid.uuid4().hex[:8]
    user = f"u{suffix}"
    token = served.ok("POST", "/api/users", {"name": user})["token"]
    workspace = f"w{suffix}"
    served.ok("POST", "/api/workspaces", {"name": workspace}, token=token)
    agent = served.ok("POST", "/api/agents", {"name": "bot", "workspace": workspace,
                                               "trajectory_wait_seconds": 10})["agent"]
    key = served.ok("POST", f"/api/agents/{agent}/keys", {})["key"]
    env = {"EVALKIT_URL": served.api, "EVALKIT_TOKEN": token, "EVALKIT_OTLP_URL": served.otlp,
           "EVALKIT_AGENT_KEY": key, "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
           "XDG_CACHE_HOME": str(tmp_path / "cache")}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return Tenant(workspace, agent, user, token, key, env)


def write_cases(root: Path, dataset: str, cases: dict[str, str], fixtures: dict[str, str] | None = None) -> Path:
    """An evalkit.yaml project under `root` with one dataset folder."""
    (root / "cases" / dataset).mkdir(parents=True, exist_ok=True)
    (root / "fixtures").mkdir(exist_ok=True)
    (root / "evalkit.yaml").write_text("cases: cases\nfixtures: fixtures\n")
    for name, text in cases.items():
        (root / "cases" / dataset / f"{name}.yaml").write_text(text)
    for name, text in (fixtures or {}).items():
        (root / "fixtures" / name).write_text(text)
    return root


class FakeJudge:
    """An OpenAI-compatible /v1/chat/completions: passes an answer unless it mentions 'zebra'."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.auth: list[str | None] = []
        self.down = False  # answer 503 to everything (an outage), until set back
        judge = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                judge.requests.append(body)
                judge.auth.append(self.headers.get("Authorization"))
                if judge.down:
                    self.send_response(503)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                prompt = " ".join(str(m.get("content")) for m in body.get("messages", []))
                passed = not re.search(r"zebra", prompt, re.IGNORECASE)
                content = json.dumps({"passed": passed, "score": 1.0 if passed else 0.0,
                                      "explanation": "no zebra" if passed else "mentions a zebra"})
                reply = json.dumps({"id": "x", "object": "chat.completion", "model": body.get("model"),
                                    "choices": [{"index": 0, "finish_reason": "stop",
                                                 "message": {"role": "assistant", "content": content}}],
                                    "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}})
                data = reply.encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_judge() -> Iterator[FakeJudge]:
    judge = FakeJudge()
    yield judge
    judge.close()
