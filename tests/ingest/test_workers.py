"""Encoding in worker processes (how `evalkit serve` runs by default) stores exactly what the
inline path stores."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export import SpanExportResult

from evalkit.trajectory.read import read_session_spans
from tests.conftest import serve
from tests.ingest.test_otlp import DATA, bad_and_good_request, export_grpc, make_spans, post


async def test_spans_encoded_in_worker_processes_are_stored(tmp_path: Path) -> None:
    async with serve(tmp_path, ingest_workers=2) as running:
        agent_id, key = await asyncio.to_thread(running.new_agent)
        spans = make_spans(6, session_id="sess-workers")
        results = await asyncio.gather(*(export_grpc(running, [span], key) for span in spans))
        assert results == [SpanExportResult.SUCCESS] * 6
        stored = await asyncio.to_thread(read_session_spans, running.store, agent_id, "sess-workers")
        assert len(stored) == 6
        chat = next(s for s in stored if s.name == "chat gpt-4o #0")
        assert chat.attributes["gen_ai.usage.input_tokens"] == 100
        assert chat.attributes["stop"] == ["a", "b"]
        status, _, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", bad_and_good_request().SerializeToString(),
            "application/x-protobuf", key)
        assert status == 200
        status, _, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", b"\xff\xff\xff", "application/x-protobuf", key)
        assert status == 400
        # OTLP/JSON is decoded in the workers too.
        status, reply, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", (DATA / "pydantic-ai_offline_v5.otlp.json").read_bytes(),
            "application/json", key)
        assert status == 200, reply
        status, _, _ = await asyncio.to_thread(
            post, f"{running.otlp_http}/v1/traces", b"{not json", "application/json", key)
        assert status == 400


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found |= {int(c) for c in (task / "children").read_text().split()}
        except OSError:
            continue
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")  # a zombie has ended; only its reaping is left to its new parent


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc to find the worker processes")
def test_workers_end_when_the_server_is_killed(tmp_path: Path) -> None:
    """`evalkit serve` with worker processes, SIGKILLed: no worker outlives it."""
    env = {**os.environ, "EVALKIT_INGEST_WORKERS": "2", "EVALKIT_BOOTSTRAP_TOKEN": "evk_workers_test"}
    server = subprocess.Popen(
        [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(tmp_path / "data"), "--grpc-port", "0",
         "--otlp-http-port", "0", "--api-port", "0"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True)
    try:
        assert server.stdout is not None
        workers: set[int] = set()
        for line in server.stdout:  # the service says when it listens; the workers start once it is ready
            match = re.search(r"API on http://127\.0\.0\.1:(\d+)", line)
            if match:
                api = f"http://127.0.0.1:{match.group(1)}"
                break
        else:
            pytest.fail("evalkit serve ended before it listened")
        for _ in range(600):
            try:
                with urllib.request.urlopen(f"{api}/healthz", timeout=5) as response:
                    if response.status == 200:
                        workers = _children(server.pid)
                        if len(workers) >= 2:
                            break
            except OSError:
                pass
            time.sleep(0.1)
        assert len(workers) >= 2, workers
        server.send_signal(signal.SIGKILL)
        server.wait()
        for _ in range(300):  # the kernel signals them at once; allow for a loaded machine
            if not any(_alive(pid) for pid in workers):
                break
            time.sleep(0.1)
        assert [pid for pid in workers if _alive(pid)] == []
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
