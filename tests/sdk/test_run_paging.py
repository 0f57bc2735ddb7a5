"""The SDK and the CLI against the paged `GET /api/experiments/{id}/runs` (a stand-in server, no evalkit): the SDK
reads every page (resume and the summary need every run), the CLI shows one and says the command for the next."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from evalkit.cli import main as cli_main
from evalkit.sdk.client import ServiceClient
from evalkit.sdk.config import Connection
from evalkit.sdk.service import Service


def _run(case: str) -> dict[str, object]:
    return {"run_id": case, "case_id": case, "repetition": 0, "attempt": 1, "final": True, "status": "completed",
            "trajectory_status": "valid", "evaluations": []}


# Three pages of runs, as the service pages them: each names the cursor of the next.
PAGES = {None: ([_run("a"), _run("b")], "p2"), "p2": ([_run("c"), _run("d")], "p3"), "p3": ([_run("e")], None)}
EXPERIMENT = {"experiment_id": 9, "status": "completed", "agent": "bot@acme", "dataset": "d@acme", "cases": []}


class StandIn(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        url = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/api/experiments/9":
            body: object = EXPERIMENT
        elif url.path == "/api/experiments/9/runs":
            runs, following = PAGES[query.get("cursor")]
            body = {"runs": runs, "limit": int(query.get("limit", 50)), "offset": 0,
                    "has_more": following is not None, "next_cursor": following}
        else:
            self.send_error(404)
            return
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

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


def test_the_sdk_reads_every_page_of_runs(stand_in: str) -> None:
    async def every_run() -> list[dict[str, object]]:
        async with ServiceClient(Connection(url=stand_in, token="evk_x")) as client:
            return await Service(client).runs(9, attempts="all")

    assert [r["case_id"] for r in asyncio.run(every_run())] == ["a", "b", "c", "d", "e"]


def test_the_cli_shows_a_page_and_the_command_for_the_next(stand_in: str) -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["experiments", "runs", "9", "--failed", "--limit", "2", "--url", stand_in,
                         "--token", "evk_x"])
    assert code == 0
    text = out.getvalue()
    assert "2 run(s) on this page" in text, text
    assert "`evalkit experiments runs 9 --failed --limit 2 --cursor p2`" in text, text
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main(["experiments", "runs", "9", "--cursor", "p3", "--url", stand_in, "--token", "evk_x"])
    assert code == 0 and "1 run(s); export them" in out.getvalue() and "--cursor" not in out.getvalue()
