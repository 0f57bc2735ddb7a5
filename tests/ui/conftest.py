"""One `evalkit serve` for the UI tests, filled through the real paths, and a real Chromium driven by Playwright.

Data goes in as users' data does: OTLP protobuf spans to the receiver, experiments through the SDK's
`run_experiment` (a task function, a Python evaluator), users and workspaces through the API. The
browser is Debian's /usr/bin/chromium (`apt-get install chromium`; `.ci/run` installs it), never a
downloaded one. Screenshots land in $EVALKIT_TEST_ARTIFACTS (default: the test run's temporary folder).
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.trajectory_service.conftest import PRICES_YAML, chat, http, kv, root, span

ADMIN = "evk_ui_tests_admin"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Untrusted agent content: each would set window.__xss (or open a dialog) if it ever ran.
XSS_SCRIPT = "<script>window.__xss = 'script'; alert('script')</script>"
XSS_IMG = "<img src=x onerror=\"window.__xss='img'; alert('img')\">"
XSS_LINK = "[click me](javascript:window.__xss='link';alert('link'))"
XSS_HTML_MD = ("**bold** <b onmouseover=\"window.__xss='hover'\">html in markdown</b> "
               "<iframe src=\"javascript:alert(1)\">")
XSS_TEXT = "\n\n".join([XSS_SCRIPT, XSS_IMG, XSS_LINK, XSS_HTML_MD])


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    api: str
    otlp: str
    process: subprocess.Popen[bytes]
    log: Path

    def ok(self, method: str, path: str, body: Any = None, token: str = ADMIN) -> Any:
        reply = http(method, self.api + path, body, token)
        assert reply.status < 300, (method, path, reply.status, reply.text)
        return reply.body

    def send(self, key: str, spans: list[Any]) -> None:
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
        from opentelemetry.proto.common.v1 import common_pb2
        from opentelemetry.proto.resource.v1 import resource_pb2
        from opentelemetry.proto.trace.v1 import trace_pb2

        request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
            resource=resource_pb2.Resource(attributes=[kv("service.name", "agent")]),
            scope_spans=[trace_pb2.ScopeSpans(scope=common_pb2.InstrumentationScope(name="tests"), spans=spans)])])
        reply = http("POST", self.otlp + "/v1/traces", None, key, request.SerializeToString(),
                     "application/x-protobuf")
        assert reply.status == 200, reply.text


@dataclass
class World:
    """What the tests look at: two tenants, their sessions and experiments."""

    served: Served
    token: str  # alice, writer of acme
    agent: str  # bot@acme
    key: str
    other_token: str  # mallory, who sees only the workspace "elsewhere"
    other_agent: str
    xss_session: str
    long_session: str
    printed_url: str
    experiment_id: int
    baseline_id: int
    run_ids: list[str] = field(default_factory=list)
    dataset: str = ""
    other_experiment_id: int = 0


def _serve(data_dir: Path) -> Served:
    (data_dir / "prices.yaml").write_text(PRICES_YAML)
    api, otlp, grpc = _free_port(), _free_port(), _free_port()
    env = dict(os.environ, EVALKIT_BOOTSTRAP_TOKEN=ADMIN, EVALKIT_SETTLE_QUIET_SECONDS="0.3")
    log = data_dir / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(data_dir), "--api-port", str(api),
             "--otlp-http-port", str(otlp), "--grpc-port", str(grpc)], stdout=out, stderr=subprocess.STDOUT,
            env=env)
    served = Served(f"http://127.0.0.1:{api}", f"http://127.0.0.1:{otlp}", process, log)
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(served.api + "/healthz", timeout=2) as response:
                if response.status == 200:
                    return served
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"evalkit serve did not start:\n{log.read_text()}")
        time.sleep(0.2)


def _xss_spans(session: str) -> list[Any]:
    tool_args = json.dumps({"query": XSS_SCRIPT})
    return [
        root(1, 1, session, 0, 5),
        chat(1, 2, 1, 0.5, text=XSS_TEXT, user=f"user says {XSS_IMG}"),
        span(1, 3, 1, "execute_tool search", 1.5, 2.0, error=True, **{
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "gen_ai.tool.call.id": "call_1",
            "gen_ai.tool.call.arguments": tool_args, "gen_ai.tool.call.result": XSS_IMG}),
        chat(1, 4, 1, 3.0, text="Done. " + XSS_LINK, user="next"),
    ]


def _long_session(session: str, turns: int) -> list[Any]:
    spans = [root(2, 1, session, 0, turns + 1.0)]
    spans += [chat(2, 10 + i, 1, 0.5 + i, text=f"turn {i}: **answer** {i}", user=f"question {i}") for i in range(turns)]
    return spans


def _many_sessions(count: int) -> list[Any]:
    spans = []
    for i in range(count):
        trace = 100 + i
        spans += [root(trace, 1, f"paged-{i:03d}", i, i + 1), chat(trace, 2, 1, i + 0.2, text=f"reply {i}")]
    return spans


CASES = {
    "capital": "input: {q: 'capital of France'}\nexpected: Paris\nevaluators: [same_answer]\n",
    "sum": "input: {q: '2+2'}\nexpected: '4'\nevaluators: [same_answer]\n",
    "color": "input: {q: 'sky colour'}\nexpected: blue\nevaluators: [same_answer]\n",
    "xss": "input: {q: 'say hi'}\nexpected: hi\nevaluators: [same_answer]\n",
}


def _experiments(served: Served, token: str, key: str, agent: str, workdir: Path) -> tuple[str, int, int, str]:
    import evalkit

    (workdir / "cases" / "qa").mkdir(parents=True)
    (workdir / "fixtures").mkdir()
    (workdir / "evalkit.yaml").write_text("cases: cases\nfixtures: fixtures\n")
    for name, text in CASES.items():
        (workdir / "cases" / "qa" / f"{name}.yaml").write_text(text)

    @evalkit.evaluator
    def same_answer(answer: str | None, expected: Any) -> dict[str, Any]:
        ok = answer is not None and answer.strip() == str(expected)
        return {"passed": ok, "label": "exact" if ok else "different",
                "explanation": f"{answer!r} vs {expected!r} " + XSS_SCRIPT}

    def task_of(good: bool) -> Any:
        def task(input: dict[str, Any], metadata: dict[str, Any]) -> str:
            q = input["q"]
            if q == "say hi":
                return "hi" if good else XSS_TEXT
            if q == "2+2":
                return "4" if good or metadata["repetition"] == 0 else "5"
            if q == "sky colour":
                return "blue" if good else "grey"
            return "Paris"
        return task

    env = {"EVALKIT_URL": served.api, "EVALKIT_TOKEN": token, "EVALKIT_OTLP_URL": served.otlp,
           "EVALKIT_AGENT_KEY": key, "XDG_CONFIG_HOME": str(workdir / "xdg"), "XDG_CACHE_HOME": str(workdir / "c")}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.chdir(workdir)
        out = io.StringIO()
        baseline = evalkit.run_experiment(dataset="qa", agent=agent, task=task_of(True), evaluators=[same_answer],
                                          repetitions=2, concurrency=4, output=io.StringIO())
        candidate = evalkit.run_experiment(dataset="qa", agent=agent, task=task_of(False), evaluators=[same_answer],
                                           repetitions=2, concurrency=4, output=out)
    assert baseline.experiment_id is not None and candidate.experiment_id is not None
    printed = out.getvalue().strip().splitlines()
    url = next(line.split(": ", 1)[1] for line in reversed(printed)
               if line.startswith(f"experiment {candidate.experiment_id}: "))
    return url, candidate.experiment_id, baseline.experiment_id, "qa@acme"


@pytest.fixture(scope="session")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    served = _serve(tmp_path_factory.mktemp("evalkit-ui"))
    try:
        token = served.ok("POST", "/api/users", {"name": "alice"})["token"]
        served.ok("POST", "/api/workspaces", {"name": "acme"}, token=token)
        agent = served.ok("POST", "/api/agents", {"name": "bot", "workspace": "acme",
                                                   "trajectory_wait_seconds": 10})["agent"]
        key = served.ok("POST", f"/api/agents/{agent}/keys", {})["key"]
        other_token = served.ok("POST", "/api/users", {"name": "mallory"})["token"]
        served.ok("POST", "/api/workspaces", {"name": "elsewhere"}, token=other_token)
        other_agent = served.ok("POST", "/api/agents", {"name": "spy", "workspace": "elsewhere"})["agent"]

        served.send(key, _xss_spans("xss-session"))
        served.send(key, _long_session("long-session", 230))
        served.send(key, _many_sessions(60))
        url, candidate, baseline, dataset = _experiments(served, token, key, agent,
                                                         tmp_path_factory.mktemp("project"))
        runs = served.ok("GET", f"/api/experiments/{candidate}/runs", token=token)["runs"]
        yield World(served, token, agent, key, other_token, other_agent, "xss-session", "long-session", url,
                    candidate, baseline, [r["run_id"] for r in runs], dataset)
    finally:
        served.process.send_signal(signal.SIGTERM)
        try:
            served.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            served.process.kill()


@pytest.fixture(scope="session")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    chosen = os.environ.get("EVALKIT_TEST_ARTIFACTS")
    folder = Path(chosen) / "ui" if chosen else tmp_path_factory.mktemp("ui-screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="package")
def browser(world: World) -> Iterator[Any]:
    # After `world`: Playwright's sync API keeps an event loop running, and the SDK's run_experiment
    # (which builds the world) refuses to start inside one. Package scope: the loop ends with tests/ui,
    # so async tests collected after it (another order, `-p randomly`) run as they do alone.
    if not (os.path.exists(CHROMIUM) or shutil.which("chromium")):
        pytest.fail(f"the UI tests need Debian's Chromium at {CHROMIUM}: run `apt-get install chromium` "
                    "(as root; .ci/run does it in CI)", pytrace=False)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        # launch() gives every run a fresh, throw-away profile (user-data-dir) of its own.
        launched = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
        yield launched
        launched.close()


@dataclass
class Tab:
    """A logged-out browser context's page, with what ran in it recorded."""

    page: Any
    base: str
    artifacts: Path
    dialogs: list[str] = field(default_factory=list)
    console_errors: list[str] = field(default_factory=list)

    def go(self, path: str) -> Any:
        response = self.page.goto(path if path.startswith("http") else self.base + path)
        return response

    def login(self, token: str, next_path: str = "/") -> None:
        self.go("/login?next=" + urllib.parse.quote(next_path, safe=""))
        self.page.fill("#token", token)
        self.page.click("form.login button[type=submit]")
        self.page.wait_for_load_state()

    def shot(self, name: str) -> Path:
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path

    def xss_ran(self) -> Any:
        return self.page.evaluate("window.__xss === undefined ? null : window.__xss")


@pytest.fixture
def tab(browser: Any, world: World, artifacts: Path) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1360, "height": 900})
    page = context.new_page()
    result = Tab(page, world.served.api, artifacts)

    def on_dialog(dialog: Any) -> None:
        result.dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("console", lambda m: result.console_errors.append(m.text) if m.type == "error" else None)
    yield result
    context.close()
