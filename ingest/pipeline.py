"""One export request, whatever transport brought it: authenticate, decode, write, answer.

The gRPC and HTTP receivers translate the exceptions here into their own
status codes; the semantics (what is retryable, what is rejected) live here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from evalkit.access import Access, Agent
from evalkit.ingest.decode import Limits
from evalkit.ingest.encode import Encoded, encode_logs, encode_spans
from evalkit.ingest.export_schema import Framing
from evalkit.ingest.native import NativeEncoder
from evalkit.ingest.workers import EncodePool
from evalkit.ingest.writer import BatchWriter, Overloaded, WriteFailed
from evalkit.metrics import Metrics
from evalkit.store import StoreError, StoreUnavailable


class Unauthenticated(Exception):
    """No key, or an unknown or revoked one: nothing is stored."""


class Unavailable(Exception):
    """The store cannot take the data now; the client should retry after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Exhausted(Unavailable):
    """Too much is queued; the client should slow down and retry."""


@dataclass(frozen=True)
class Outcome:
    accepted: int
    rejected: int
    message: str


def bearer_key(authorization: str | None) -> str:
    if not authorization:
        raise Unauthenticated(
            "no ingest key: send `Authorization: Bearer <key>` (for OTel exporters: "
            "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20<key>); create one with `evalkit agents keys create`"
        )
    scheme, _, key = authorization.strip().partition(" ")
    if scheme.lower() != "bearer" or not key.strip():
        raise Unauthenticated("the Authorization header must be `Bearer <key>`")
    return key.strip()


class Ingest:
    def __init__(self, access: Access, spans: BatchWriter, logs: BatchWriter, limits: Limits,
                 metrics: Metrics, pool: EncodePool, *, retry_after: int = 2,
                 clock: Callable[[], float] = time.time) -> None:
        self.access = access
        self.spans = spans
        self.logs = logs
        self.limits = limits
        self.metrics = metrics
        self.pool = pool
        self.retry_after = retry_after
        self.clock = clock
        # Key lookups get threads of their own, never queued behind other work on the default executor.
        self._lookups = ThreadPoolExecutor(max_workers=4, thread_name_prefix="evalkit-ingest-keys")
        # Set once the store is migrated; until then every request is answered "retry later".
        self.log_encoder: NativeEncoder | None = None

    def ready(self) -> bool:
        return self.log_encoder is not None

    async def _agent(self, authorization: str | None) -> Agent:
        key = bearer_key(authorization)
        if not self.ready():
            raise Unavailable("evalkit's store is not ready yet", self.retry_after)
        try:
            agent = await asyncio.get_running_loop().run_in_executor(self._lookups, self.access.agent_for_key, key)
        except (StoreUnavailable, StoreError) as exc:
            raise Unavailable(f"cannot check the ingest key: {exc}", self.retry_after) from exc
        if agent is None:
            raise Unauthenticated("the ingest key is unknown or revoked; create a new one with "
                                  "`evalkit agents keys create AGENT`")
        return agent

    async def _write(self, signal: str, writer: BatchWriter, encoded: Encoded) -> Outcome:
        self.metrics.received.labels(signal).inc(encoded.rows + encoded.rejected)
        if encoded.rejected:
            self.metrics.rejected.labels(signal).inc(encoded.rejected)
        try:
            await writer.write(encoded)
        except Overloaded as exc:
            self.metrics.refused.labels("overloaded").inc()
            raise Exhausted(f"evalkit is overloaded ({exc}); retry later", self.retry_after) from exc
        except WriteFailed as exc:
            self.metrics.refused.labels("store").inc()
            raise Unavailable(f"the data could not be stored ({exc}); nothing was kept, retry later",
                              self.retry_after) from exc
        self.metrics.accepted.labels(signal).inc(encoded.rows)
        return Outcome(encoded.rows, encoded.rejected, encoded.message)

    def close(self) -> None:
        self._lookups.shutdown(wait=False)

    async def traces(self, body: bytes, authorization: str | None) -> Outcome:
        """An `ExportTraceServiceRequest` in protobuf bytes."""
        agent = await self._agent(authorization)
        framing = Framing(agent.agent_id, int(self.clock() * 1000), agent.session_attribute,
                          self.limits.max_attribute_bytes, self.limits.payload_threshold_bytes)
        encoded = await self.pool.run(encode_spans, body, framing)
        return await self._write("spans", self.spans, encoded)

    async def logs_export(self, body: bytes, authorization: str | None) -> Outcome:
        """An `ExportLogsServiceRequest` in protobuf bytes."""
        agent = await self._agent(authorization)
        assert self.log_encoder is not None
        encoded = await self.pool.run(encode_logs, body, agent.agent_id, self.limits, int(self.clock() * 1000),
                                      self.log_encoder)
        return await self._write("logs", self.logs, encoded)
