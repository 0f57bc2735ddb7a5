"""`evalkit run` for a harness agent: the local dataset folder is synced, and --retries, --concurrency,
--timeout, --trajectory-wait-seconds and --evaluator reach the service's driver and the scores."""

from __future__ import annotations

import json
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.sdk.conftest import Served, Tenant, write_cases
from tests.sdk.test_cli_e2e import evalkit_cli

EVALUATOR = '''
import evalkit

@evalkit.evaluator
def says_ok(answer):
    return answer == "ok"
'''


class Harness:
    """The harness contract (docs/harness.md): `flaky` fails its first attempt, `slow` outlives the timeout."""

    def __init__(self, on_run: Callable[[dict[str, Any]], None] | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.running = 0
        self.most = 0
        self.lock = threading.Lock()
        harness = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                self._reply({"name": "cli-test-harness"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                # A slow call goes on here after the service gave up on it (its timeout): it is not counted
                # as running, only the calls the service still waits for are.
                counted = body["input"] != "slow"
                with harness.lock:
                    harness.calls.append(body)
                    harness.running += counted
                    harness.most = max(harness.most, harness.running)
                try:
                    time.sleep(0.3)
                    if on_run is not None:
                        on_run(body)
                    case = body["input"]
                    if case == "slow":
                        time.sleep(4)
                    if case == "flaky" and body["attempt"] == 1:
                        self._reply({"error": "ConnectionError: rate limited"})
                    else:
                        self._reply({"answer": "ok"})
                finally:
                    with harness.lock:
                        harness.running -= counted

            def _reply(self, data: dict[str, Any]) -> None:
                payload = json.dumps(data).encode()
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the service gave up on a slow run (its timeout)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def test_harness_run_honours_the_run_flags(served: Served, tenant: Tenant, tmp_path: Path) -> None:
    harness = Harness()
    try:
        agent = served.ok("POST", "/api/agents", {"name": "harness", "workspace": tenant.workspace, "kind": "harness",
                                                   "harness_url": harness.url, "max_concurrent_runs": 4})["agent"]
        write_cases(tmp_path, "mixed", {name: f"input: {name}\nevaluators: [says_ok]\n"
                                        for name in ("fine", "flaky", "slow")})
        (tmp_path / "evals.py").write_text(EVALUATOR)
        ran = evalkit_cli("run", "mixed", "--agent", agent, "--evaluator", "evals:says_ok", "--retries", "1",
                          "--concurrency", "1", "--timeout", "2", "--trajectory-wait-seconds", "0",
                          "--poll-seconds", "0.3", "--json", env=dict(os.environ), cwd=tmp_path)
        data = json.loads(ran.stdout)  # JSON only on stdout; progress on stderr
        assert "runs recorded" in ran.stderr
        experiment = data["experiment_id"]
        assert data["url"].endswith(f"/experiments/{experiment}")
        assert harness.most == 1  # --concurrency 1, not the agent's 4
        attempts = Counter(c["input"] for c in harness.calls)
        # --retries 1: flaky's first attempt failed, its second completed; slow timed out twice.
        assert attempts == {"fine": 1, "flaky": 2, "slow": 2}, attempts
        runs = served.ok("GET", f"/api/experiments/{experiment}/runs?attempts=all&evaluations=true",
                         token=tenant.token)["runs"]
        final = {r["case_id"]: r["status"] for r in runs if r["final"]}
        assert final == {"fine": "completed", "flaky": "completed", "slow": "timeout"}
        # The Python evaluator scored the completed runs here, after the service's pass.
        scored = {r["case_id"]: [e["passed"] for e in r["evaluations"]] for r in runs if r["final"]}
        assert scored["fine"] == [True] and scored["flaky"] == [True]
        shown = served.ok("GET", f"/api/experiments/{experiment}", token=tenant.token)
        assert shown["dataset"] == f"mixed@{tenant.workspace}"  # the local folder, synced to the agent's workspace
        assert shown["config"]["run_settings"] == {"timeout_seconds": 2.0, "retries": 1, "concurrency": 1,
                                                   "trajectory_wait_seconds": 0.0}
        assert shown["status"] == "completed" and ran.returncode == 0, ran.stderr
    finally:
        harness.close()


def send_session(otlp: str, key: str, session_id: str) -> None:
    """What a harness's agent sends: a root and one chat call of 100 + 10 tokens, through the OTel SDK."""
    provider = TracerProvider(resource=Resource.create({"service.name": "harness-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=otlp + "/v1/traces", headers={"authorization": f"Bearer {key}"}, timeout=10)))
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("invoke_agent bot", attributes={
            "gen_ai.operation.name": "invoke_agent", "session.id": session_id}):
        with tracer.start_as_current_span("chat gpt-4o", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.provider.name": "openai",
                "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
                "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                    {"type": "text", "content": "ok"}], "finish_reason": "stop"}])}):
            pass
    provider.shutdown()


@pytest.mark.parametrize(("limit", "said"), [
    (["--max-tokens", "150"], "max_tokens 150 reached (220 used)"),
    # gpt-4o: 100 input + 10 output tokens are $0.00035 a run.
    (["--max-cost-usd", "0.0005"], "budget $0.0005 reached ($0.0007 spent by priced runs)")])
def test_harness_run_stops_at_its_budget_and_says_so(served: Served, tenant: Tenant, tmp_path: Path,
                                                     limit: list[str], said: str) -> None:
    agent = served.ok("POST", "/api/agents", {"name": "spender", "workspace": tenant.workspace, "kind": "harness",
                                               "harness_url": "http://127.0.0.1:9"})["agent"]
    key = served.ok("POST", f"/api/agents/{agent}/keys", {})["key"]
    harness = Harness(on_run=lambda body: send_session(served.otlp, key, body["session_id"]))
    try:
        served.ok("PATCH", f"/api/agents/{agent}", {"harness_url": harness.url})
        write_cases(tmp_path, "three", {name: f"input: {name}\nevaluators: [contains]\nexpected: ok\n"
                                        for name in ("a", "b", "c")})
        # One call at a time: the limit is not reached after the first run, it is after the second, so the
        # third never starts.
        ran = evalkit_cli("run", "three", "--agent", agent, "--concurrency", "1", *limit,
                          "--trajectory-wait-seconds", "10", "--poll-seconds", "0.3", env=dict(os.environ),
                          cwd=tmp_path)
        assert ran.returncode == 1, ran.stdout + ran.stderr
        assert len(harness.calls) == 2
        assert f"(stopped: {said}; 1 of 3 run(s) not run" in ran.stdout
        assert f"--resume {ran.stdout.split('experiment ')[-1].split(':')[0]}" in ran.stdout
    finally:
        harness.close()
