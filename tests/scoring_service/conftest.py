"""A running service tuned for scoring tests (short quiet period), users with roles, and span senders."""

from __future__ import annotations

import asyncio
import hashlib
import json
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tests.conftest import Running, make_settings


@dataclass
class Scoring(Running):
    def ok(self, method: str, path: str, body: Any = None, token: str | None = None, status: int | None = None
           ) -> Any:
        got, reply = self.call(method, path, body, token or self.admin)
        expected = status or (201 if method in ("POST", "PUT") and got == 201 else 200)
        assert got == expected, (method, path, got, reply)
        return reply

    @property
    def admin(self) -> str:
        from tests.conftest import ADMIN_TOKEN

        return ADMIN_TOKEN

    def raw(self, method: str, path: str, data: bytes | None, token: str | None = None) -> tuple[int, bytes]:
        request = urllib.request.Request(self.api + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {token or self.admin}")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def user(self, name: str, workspace: str | None = None, role: str | None = None) -> str:
        token = self.ok("POST", "/api/users", {"name": name})["token"]
        if workspace and role:
            self.ok("PUT", f"/api/workspaces/{workspace}/members/{name}", {"role": role})
        return str(token)

    def send_session(self, key: str, session_id: str, answer: str = "42", tool: str | None = None) -> None:
        """A small agent session through the real OTel SDK exporter: root + one chat (+ one tool)."""
        exporter = OTLPSpanExporter(endpoint=self.otlp_http + "/v1/traces", headers={"authorization": f"Bearer {key}"},
                                    timeout=10)
        provider = TracerProvider(resource=Resource.create({"service.name": "bot"}))
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        tracer = provider.get_tracer("tests")
        with tracer.start_as_current_span("invoke_agent bot", attributes={
                "gen_ai.operation.name": "invoke_agent", "session.id": session_id}):
            with tracer.start_as_current_span("chat gpt-4o", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.usage.input_tokens": 100, "gen_ai.usage.output_tokens": 10,
                    "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [
                        {"type": "text", "content": "question"}]}]),
                    "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                        {"type": "text", "content": answer}], "finish_reason": "stop"}])}):
                pass
            if tool:
                with tracer.start_as_current_span(f"execute_tool {tool}", attributes={
                        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}):
                    pass
        provider.shutdown()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


async def start_service(tmp_path: Path, **overrides: Any) -> Scoring:
    from evalkit.serve import Service

    settings = make_settings(tmp_path, **{"settle_quiet_seconds": 0.2, **overrides})
    service = Service(settings, say=lambda _line: None)
    await service.start()
    await service.wait_ready(60)
    return Scoring(service, service.store, settings)


@pytest.fixture
async def scoring(tmp_path: Path) -> AsyncIterator[Scoring]:
    s = await start_service(tmp_path)
    yield s
    await s.service.stop()


async def serve_app(app: web.Application) -> tuple[str, web.AppRunner]:
    """An aiohttp app on 127.0.0.1, an ephemeral port; returns (base URL, runner to clean up)."""
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return f"http://127.0.0.1:{port}", runner


async def call(s: Scoring, method: str, path: str, body: Any = None, token: str | None = None) -> tuple[int, Any]:
    return await asyncio.to_thread(s.call, method, path, body, token or s.admin)
