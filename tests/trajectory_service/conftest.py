"""A running service per test with the trajectory routes, and helpers to send spans to it.

Spans go in through the real OTLP receivers (the SDK's exporters, or hand-built
OTLP protobuf requests when a test needs exact ids, times or arrival order).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.error
import urllib.request
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.common.v1 import common_pb2
from opentelemetry.proto.resource.v1 import resource_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.trajectory.validate import errors_only, validate_trajectory
from tests.conftest import ADMIN_TOKEN, Running, databases_dropped_after, make_settings, own_workspaces

# A price file every test service loads from its data directory: exact, round numbers.
PRICES_YAML = """
rules:
  - provider: "*"
    model: "test-model*"
    input: 1
    output: 4
    cache_read: 0.5
  - provider: "function"
    model: "function:*"
    input: 2
    output: 8
"""

BASE_NS = 1_760_000_000_000_000_000


@dataclass
class Reply:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    text: str = ""


def http(method: str, url: str, body: Any = None, token: str | None = ADMIN_TOKEN, raw: bytes | None = None,
         content_type: str = "application/json") -> Reply:
    """A blocking call; run it with asyncio.to_thread from async tests."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    request = urllib.request.Request(url, data=data, method=method)
    request.add_header("Content-Type", content_type)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            text = response.read().decode()
            status, headers = response.status, dict(response.headers)
    except urllib.error.HTTPError as exc:
        text, status, headers = exc.read().decode(), exc.code, dict(exc.headers)
    try:
        parsed = json.loads(text) if text else None
    except json.JSONDecodeError:
        parsed = None
    return Reply(status, parsed, headers, text)


class Service:
    """The running service plus the calls these tests make."""

    def __init__(self, running: Running) -> None:
        self.running = running

    @property
    def api(self) -> str:
        return self.running.api

    async def get(self, path: str, token: str | None = ADMIN_TOKEN) -> Reply:
        return await asyncio.to_thread(http, "GET", self.api + path, None, token)

    async def put(self, path: str, body: Any, token: str | None = ADMIN_TOKEN) -> Reply:
        return await asyncio.to_thread(http, "PUT", self.api + path, body, token)

    async def new_agent(self, name: str = "bot", workspace: str = "acme") -> tuple[str, str]:
        return await asyncio.to_thread(self.running.new_agent, name, workspace)

    async def send(self, key: str, spans: list[trace_pb2.Span], service_name: str = "agent") -> None:
        """POST one OTLP/HTTP protobuf request to the receiver; it answers once the spans are durable."""
        request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
            resource=resource_pb2.Resource(attributes=[kv("service.name", service_name)]),
            scope_spans=[trace_pb2.ScopeSpans(scope=common_pb2.InstrumentationScope(name="tests"), spans=spans)])])
        reply = await asyncio.to_thread(http, "POST", self.running.otlp_http + "/v1/traces", None, key,
                                        request.SerializeToString(), "application/x-protobuf")
        assert reply.status == 200, reply.text

    async def trajectory(self, agent: str, session: str, query: str = "", token: str | None = ADMIN_TOKEN) -> Reply:
        return await self.get(f"/api/agents/{agent}/sessions/{session}/trajectory{query}", token)


def kv(key: str, value: Any) -> common_pb2.KeyValue:
    if isinstance(value, bool):
        any_value = common_pb2.AnyValue(bool_value=value)
    elif isinstance(value, int):
        any_value = common_pb2.AnyValue(int_value=value)
    elif isinstance(value, float):
        any_value = common_pb2.AnyValue(double_value=value)
    elif isinstance(value, bytes):
        any_value = common_pb2.AnyValue(bytes_value=value)
    else:
        any_value = common_pb2.AnyValue(string_value=str(value))
    return common_pb2.KeyValue(key=key, value=any_value)


def span(trace: int, span_id: int, parent: int | None, name: str, start_s: float, end_s: float,
         error: bool = False, **attributes: Any) -> trace_pb2.Span:
    """A protobuf span with readable ids: trace 1 -> 000…01, span 5 -> 000…05."""
    return trace_pb2.Span(
        trace_id=trace.to_bytes(16, "big"), span_id=span_id.to_bytes(8, "big"),
        parent_span_id=parent.to_bytes(8, "big") if parent else b"", name=name, kind=trace_pb2.Span.SPAN_KIND_INTERNAL,
        start_time_unix_nano=BASE_NS + int(start_s * 1e9), end_time_unix_nano=BASE_NS + int(end_s * 1e9),
        attributes=[kv(k.replace("__", "."), v) for k, v in attributes.items()],
        status=trace_pb2.Status(code=trace_pb2.Status.STATUS_CODE_ERROR if error else trace_pb2.Status.STATUS_CODE_OK))


def chat(trace: int, span_id: int, parent: int | None, start_s: float, model: str = "test-model",
         inputs: int = 100, outputs: int = 10, text: str = "ok", user: str = "hi",
         **more: Any) -> trace_pb2.Span:
    """An OTel GenAI (current generation) chat span."""
    messages_in = json.dumps([{"role": "user", "parts": [{"type": "text", "content": user}]}])
    messages_out = json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}],
                                "finish_reason": "stop"}])
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": model, "gen_ai.provider.name": "openai",
        "gen_ai.usage.input_tokens": inputs, "gen_ai.usage.output_tokens": outputs,
        "gen_ai.input.messages": messages_in, "gen_ai.output.messages": messages_out, **more}
    result = span(trace, span_id, parent, f"chat {model}", start_s, start_s + 0.5)
    result.attributes.extend(kv(k, v) for k, v in attributes.items())
    return result


def root(trace: int, span_id: int, session: str, start_s: float, end_s: float, **more: Any) -> trace_pb2.Span:
    result = span(trace, span_id, None, "invoke_agent bot", start_s, end_s)
    result.attributes.extend([kv("session.id", session), kv("gen_ai.operation.name", "invoke_agent"),
                              kv("gen_ai.agent.name", "bot")])
    result.attributes.extend(kv(k, v) for k, v in more.items())
    return result


def assert_schema_and_atif_valid(document: dict[str, Any]) -> None:
    import atif

    assert not errors_only(validate_trajectory(document)), errors_only(validate_trajectory(document))
    atif.Trajectory.model_validate(document)


ServiceFactory = Callable[..., Awaitable[Service]]


@contextlib.asynccontextmanager
async def running_service(data_dir: Path, **overrides: Any) -> AsyncIterator[Service]:
    """A service on a data directory of its own (made here), with these tests' settings: quiet period 0 unless
    told; no session rows kept unless told, so that the list's pages are read from the spans as the tests of those
    reads expect (the kept rows are compared with them in test_session_rows.py). Stopped on the way out."""
    from evalkit.serve import Service as EvalkitService

    data_dir.mkdir()
    (data_dir / "prices.yaml").write_text(PRICES_YAML)
    settings = make_settings(data_dir, **{"settle_quiet_seconds": 0.0, "session_rows_interval_seconds": 0.0,
                                             **overrides})
    service = EvalkitService(settings, say=lambda _line: None)
    await service.start()
    try:
        await service.wait_ready(60)
        yield Service(Running(service, service.store, settings))
    finally:
        await service.stop()


@pytest.fixture
async def start_service(tmp_path: Path) -> AsyncIterator[ServiceFactory]:
    """Start services with settings of the test's choosing (`running_service`), all stopped when the test ends."""
    count = 0
    async with contextlib.AsyncExitStack() as started:

        async def start(**overrides: Any) -> Service:
            nonlocal count
            count += 1
            return await started.enter_async_context(running_service(tmp_path / f"svc{count}", **overrides))

        yield start


@pytest.fixture
async def svc(start_service: ServiceFactory) -> Service:
    return await start_service()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def module_service(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Service]:
    """One service (`running_service`, these tests' settings) for a module's tests, each seeing it through
    `shared_svc`; its database dropped once the module is done. The module's tests run in the module's event loop
    (`pytest.mark.asyncio(loop_scope="module")`), the service's."""
    with databases_dropped_after():
        async with running_service(tmp_path_factory.mktemp("module") / "service") as started:
            yield started


def shared_svc(shared: Service) -> Service:
    """The module's service as one more test sees it: the workspaces it names are its own (`OwnWorkspaces`)."""
    return Service(own_workspaces(shared.running))


@pytest_asyncio.fixture(loop_scope="module")
async def own_service(tmp_path: Path) -> AsyncIterator[Service]:
    """A service of the test's own (`running_service`), for a test in a module whose others share `module_service`
    (started in the module's event loop, which that module's tests run in)."""
    async with running_service(tmp_path / "own") as started:
        yield started
