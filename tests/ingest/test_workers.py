"""Encoding in worker processes (how `evalkit serve` runs by default) stores exactly what the
inline path stores."""

from __future__ import annotations

import asyncio
from pathlib import Path

from opentelemetry.sdk.trace.export import SpanExportResult

from evalkit.trajectory.read import read_session_spans
from tests.conftest import serve
from tests.ingest.test_otlp import bad_and_good_request, export_grpc, make_spans, post


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
