"""schemathesis over the whole API, from the OpenAPI document, against `evalkit serve` (real engine,
admin token): no 500, no response outside the document, no invalid JSON. Examples are bounded so the
run stays well under a minute."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis import checks

from evalkit.openapi import build

ADMIN = "evk_schemathesis_admin"
API_SCHEMA = schemathesis.openapi.from_dict(build()).exclude(tag="otlp")
# The same routes with their path naming the things the fixture made, so that query parameters and
# bodies reach the code past the lookup of the agent, dataset or experiment.
SEEDED_SCHEMA = schemathesis.openapi.from_dict(build()).exclude(tag="otlp").exclude(tag="ui")
SEEDED = {"agent": "bot@acme", "dataset": "d@acme", "workspace": "acme", "id": 1, "session_id": "s1",
          "name": "admin"}
OTLP_SCHEMA = schemathesis.openapi.from_dict(build()).include(tag="otlp")
UI_SCHEMA = schemathesis.openapi.from_dict(build()).include(tag="ui")
CHECKS = [checks.not_a_server_error, checks.status_code_conformance, checks.content_type_conformance,
          checks.response_schema_conformance]
# EVALKIT_SCHEMATHESIS_EXAMPLES=50 explores further (with a random seed) when hunting bugs.
EXAMPLES = int(os.environ.get("EVALKIT_SCHEMATHESIS_EXAMPLES", "3"))
BOUNDED = settings(max_examples=EXAMPLES, deadline=None, phases=[Phase.explicit, Phase.generate],
                   derandomize=EXAMPLES <= 3, suppress_health_check=list(HealthCheck))
# Random paths mostly meet a 404 at the first lookup: a couple of examples each find what they can.
FEWER = settings(BOUNDED, max_examples=max(1, EXAMPLES - 1))


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _call(api: str, method: str, path: str, body: Any) -> Any:
    request = urllib.request.Request(api + path, data=json.dumps(body).encode(), method=method)
    request.add_header("Authorization", f"Bearer {ADMIN}")
    request.add_header("Content-Type", "application/json")
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _login(base: str) -> str:
    """Log in to the web UI as the admin, as a browser does (the form's CSRF cookie, then the form)."""
    import requests

    from evalkit.ui.login_sessions import CSRF_COOKIE, SESSION_COOKIE

    browser = requests.Session()
    browser.get(base + "/login", timeout=30)
    reply = browser.post(base + "/login", data={"token": ADMIN, "csrf": browser.cookies[CSRF_COOKIE], "next": "/"},
                         allow_redirects=False, timeout=30)
    assert reply.status_code == 303, reply.text
    return str(browser.cookies[SESSION_COOKIE])


def _send_session(otlp: str, key: str) -> None:
    """Session s1 (a root and a chat) through the OTel SDK's exporter."""
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(
        endpoint=otlp + "/v1/traces", headers={"authorization": f"Bearer {key}"}, timeout=10)))
    tracer = provider.get_tracer("tests")
    with tracer.start_as_current_span("invoke_agent bot", attributes={"session.id": "s1",
                                                                      "gen_ai.operation.name": "invoke_agent"}):
        with tracer.start_as_current_span("chat m", attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.usage.input_tokens": 3,
                "gen_ai.usage.output_tokens": 1, "gen_ai.usage.cost": float("nan")}):
            pass
    provider.shutdown()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    data_dir: Path = tmp_path_factory.mktemp("schemathesis")
    api, otlp = free_port(), free_port()
    log = (data_dir / "serve.log").open("wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "evalkit.cli", "serve", "--data-dir", str(data_dir), "--api-port", str(api),
         "--otlp-http-port", str(otlp), "--grpc-port", str(free_port())], stdout=log, stderr=subprocess.STDOUT,
        env=dict(os.environ, EVALKIT_BOOTSTRAP_TOKEN=ADMIN, EVALKIT_SETTLE_QUIET_SECONDS="0"))
    base = f"http://127.0.0.1:{api}"
    deadline = time.monotonic() + 60
    while True:
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=2) as response:
                if response.status == 200:
                    break
        except OSError:
            pass
        assert process.poll() is None and time.monotonic() < deadline, (data_dir / "serve.log").read_text()
        time.sleep(0.2)
    # Something to find: a workspace, an agent, a dataset and an experiment.
    _call(base, "POST", "/api/workspaces", {"name": "acme"})
    _call(base, "POST", "/api/agents", {"name": "bot", "workspace": "acme"})
    key = _call(base, "POST", "/api/agents/bot@acme/keys", {"scopes": ["ingest", "read"]})["key"]
    _call(base, "POST", "/api/datasets/d@acme", {"cases": [{"id": "a", "input": "q", "expected": "x"}]})
    _call(base, "POST", "/api/experiments", {"agent": "bot@acme", "dataset": "d@acme"})
    _send_session(f"http://127.0.0.1:{otlp}", key)
    yield {"api": base, "otlp": f"http://127.0.0.1:{otlp}", "key": key, "log": str(data_dir / "serve.log"),
           "session": _login(base)}
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


def strict_json(response: Any, case: Any) -> None:
    """Every JSON response parses as strict JSON: no NaN, Infinity or -Infinity."""
    if "json" not in str(response.headers.get("content-type", "")):
        return

    def refuse(constant: str) -> Any:
        raise AssertionError(f"{case.method} {case.formatted_path} answered {constant}, which is not JSON")

    json.loads(response.content or b"null", parse_constant=refuse)


def _validate(case: Any, base_url: str, token: str) -> None:
    response = case.call(base_url=base_url, headers={"Authorization": f"Bearer {token}"}, allow_redirects=False)
    case.validate_response(response, checks=CHECKS)
    strict_json(response, case)


@API_SCHEMA.parametrize()
@FEWER
def test_api(case: Any, served: dict[str, str]) -> None:
    _validate(case, served["api"], ADMIN)


@SEEDED_SCHEMA.parametrize()
@BOUNDED
def test_api_on_seeded_paths(case: Any, served: dict[str, str]) -> None:
    for name in set(case.path_parameters or {}) & set(SEEDED):
        case.path_parameters[name] = SEEDED[name]
    _validate(case, served["api"], ADMIN)


@UI_SCHEMA.parametrize()
@FEWER
def test_ui_pages_logged_in(case: Any, served: dict[str, str]) -> None:
    from evalkit.ui.login_sessions import SESSION_COOKIE

    for name in set(case.path_parameters or {}) & set(SEEDED):
        case.path_parameters[name] = SEEDED[name]
    response = case.call(base_url=served["api"], cookies={SESSION_COOKIE: served["session"]}, allow_redirects=False)
    case.validate_response(response, checks=CHECKS)
    strict_json(response, case)


@OTLP_SCHEMA.parametrize()
@BOUNDED
def test_otlp(case: Any, served: dict[str, str]) -> None:
    _validate(case, served["otlp"], served["key"])
