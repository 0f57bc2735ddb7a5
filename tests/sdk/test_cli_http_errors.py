"""What the CLI and the SDK say when a request is refused, against a stand-in server (no evalkit needed): an
address that is not evalkit's API (its OTLP port, another server on the port) named as such, a 401's advice said
once as a command, the next page of spans said as the command's own options."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from evalkit.cli import main as cli_main
from evalkit.sdk.client import ServiceClient, ServiceError
from evalkit.sdk.config import Connection

# What evalkit's OTLP/HTTP port answers a GET of an API route: a 404 whose body is a google.rpc.Status (protobuf).
OTLP_404 = b"\x08\x05\x12\x2fno OTLP endpoint at /api/experiments; POST traces"
SPANS_PAGE = {"agent": "bot@acme", "session_id": "s 1", "next": "?limit=1&offset=1",
              "summary": {"span_count": 2, "mapping_version": "built-in", "unmapped_attributes": []},
              "spans": [{"span_id": "01", "parent_span_id": None, "name": "root", "kind": "INTERNAL",
                         "duration_ms": 1.0, "status_code": "OK"}]}

# An experiment a Ctrl-C stopped, as GET /api/experiments/9 answers it: its reason worded for every client.
STOPPED = {"experiment_id": 9, "status": "stopped", "agent": "bot@acme", "dataset": "capitals@acme", "cases": [],
           "config": {"dataset_version": "7b76", "repetitions": 2}, "can_resume": True,
           "status_reason": "interrupted: sdk:vm:1:ab gave its lease back with 6 of 6 planned runs not finished, and "
                            "nobody runs it now; resume with `run_experiment(..., resume=9)` or "
                            "`evalkit run … --resume 9`"}


class StandIn(BaseHTTPRequestHandler):
    """/otlp/...: as an OTLP port answers; /html/...: a web page with 200; /evalkit/...: evalkit's answers."""

    def do_GET(self) -> None:
        if self.path.startswith("/otlp/"):
            self._answer(404, "application/x-protobuf", OTLP_404)
        elif self.path.startswith("/html/"):
            self._answer(200, "text/html", b"<!doctype html><title>Welcome to nginx</title>")
        elif self.path.startswith("/evalkit/api/agents/bot@acme/sessions/"):
            self._answer(200, "application/json", json.dumps(SPANS_PAGE).encode())
        elif self.path == "/evalkit/api/experiments/9":
            self._answer(200, "application/json", json.dumps(STOPPED).encode())
        elif self.headers.get("Authorization"):
            self._error(401, "the token is unknown or revoked; run `evalkit login URL` with a valid token")
        else:
            self._error(401, "send `Authorization: Bearer <token>`; run `evalkit login URL` or set EVALKIT_TOKEN")

    def _error(self, status: int, message: str) -> None:
        self._answer(status, "application/json", json.dumps({"error": {"status": status, "message": message}}).encode())

    def _answer(self, status: int, content_type: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def stand_in() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(autouse=True)
def no_login(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    for name in ("EVALKIT_URL", "EVALKIT_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def run_cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("where", ["otlp", "html"])
def test_an_address_that_is_not_evalkits_api_is_named_with_where_the_api_is(stand_in: str, where: str) -> None:
    """EVALKIT_URL at the OTLP port (a 404 of its own) or at another server (a page): not "404 Not Found" or a
    JSON traceback, but which address to use."""
    url = f"{stand_in}/{where}"
    code, _, err = run_cli("experiments", "list", "--url", url, "--token", "evk_x")
    assert code == 1, err
    assert f"{url} answered" in err and "not as evalkit's API does" in err and "API on http://" in err, err
    assert "Traceback" not in err


def test_experiments_show_at_an_address_that_is_not_evalkits_api_does_not_say_no_such_experiment(
        stand_in: str) -> None:
    code, _, err = run_cli("experiments", "show", "9", "--url", f"{stand_in}/otlp", "--token", "evk_x")
    assert code == 1 and "not as evalkit's API does" in err and "there is no experiment" not in err, err


def test_experiments_show_says_a_stopped_experiments_reason_with_commands(stand_in: str) -> None:
    code, out, err = run_cli("experiments", "show", "9", "--url", f"{stand_in}/evalkit", "--token", "evk_x")
    assert code == 0, err
    assert "resume with `evalkit run … --resume 9`" in out and "run_experiment(" not in out, out


def test_a_401_says_the_login_command_once(stand_in: str) -> None:
    url = f"{stand_in}/evalkit"
    code, _, err = run_cli("experiments", "list", "--url", url, "--token", "evk_wrong")
    assert code == 1 and "the token is unknown or revoked" in err, err
    assert err.count("evalkit login") == 1 and f"`evalkit login {url} --token TOKEN`" in err, err
    code, _, err = run_cli("experiments", "list", "--url", url)
    assert code == 1 and "no token was given" in err and "Authorization: Bearer" not in err, err
    assert err.count("evalkit login") == 1, err


def test_the_next_page_of_spans_is_said_as_the_commands_options(stand_in: str) -> None:
    code, out, err = run_cli("sessions", "show", "bot@acme", "s 1", "--limit", "1", "--url", f"{stand_in}/evalkit")
    assert code == 0, err
    assert "more spans: `evalkit sessions show bot@acme 's 1' --limit 1 --offset 1`" in out, out
    assert "?limit=" not in out


def test_the_sdk_names_an_address_that_is_not_evalkits_api(stand_in: str) -> None:
    async def ask() -> None:
        async with ServiceClient(Connection(url=f"{stand_in}/otlp", token="evk_x")) as client:
            await client.call("GET", "/api/agents/bot@acme")

    with pytest.raises(ServiceError) as refused:
        asyncio.run(ask())
    assert refused.value.status == 404 and "not as evalkit's API does" in refused.value.message, refused.value
    assert "API on http://" in str(refused.value)
