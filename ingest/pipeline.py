"""One export request, whatever transport brought it: authenticate, decode, write, answer.

The gRPC and HTTP receivers translate the exceptions here into their own
status codes; the semantics (what is retryable, what is rejected) live here.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalkit.ingest.decode import Decoded, Limits, decode_logs, decode_spans
from evalkit.ingest.writer import BatchWriter, Overloaded, WriteFailed

from evalkit.access import Access, Agent
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
                 metrics: Metrics, *, retry_after: int = 2, ready: Callable[[], bool] = lambda: True,
                 clock: Callable[[], float] = time.time) -> None:
        self.access = access
        self.spans = spans
        self.logs = logs
        self.limits = limits
        self.metrics = metrics
        self.retry_after = retry_after
        self.ready = ready
        self.clock = clock

    async def _agent(self, authorization: str | None) -> Agent:
        key = bearer_key(authorization)
        if not self.ready():
            raise Unavailable("evalkit's store is not ready yet", self.retry_after)
        try:
            agent = await asyncio.to_thread(self.access.agent_for_key, key)
        except (StoreUnavailable, StoreError) as exc:
            raise Unavailable(f"cannot check the ingest key: {exc}", self.retry_after) from exc
        if agent is None:
            raise Unauthenticated("the ingest key is unknown or revoked; create a new one with "
                                  "`evalkit agents keys create AGENT`")
        return agent

    async def _write(self, signal: str, writer: BatchWriter, decoded: Decoded, total: int) -> Outcome:
        self.metrics.received.labels(signal).inc(total)
        if decoded.rejected:
            self.metrics.rejected.labels(signal).inc(decoded.rejected)
        try:
            await writer.write(decoded.rows)
        except Overloaded as exc:
            self.metrics.refused.labels("overloaded").inc()
            raise Exhausted(f"evalkit is overloaded ({exc}); retry later", self.retry_after) from exc
        except WriteFailed as exc:
            self.metrics.refused.labels("store").inc()
            raise Unavailable(f"the spans could not be stored ({exc}); nothing was kept, retry later",
                              self.retry_after) from exc
        self.metrics.accepted.labels(signal).inc(len(decoded.rows))
        return Outcome(len(decoded.rows), decoded.rejected, decoded.error_message)

    async def traces(self, request: Any, authorization: str | None) -> Outcome:
        agent = await self._agent(authorization)
        decoded = decode_spans(request, agent.agent_id, self.limits, int(self.clock() * 1000),
                               agent.session_attribute)
        total = len(decoded.rows) + decoded.rejected
        return await self._write("spans", self.spans, decoded, total)

    async def logs_export(self, request: Any, authorization: str | None) -> Outcome:
        agent = await self._agent(authorization)
        decoded = decode_logs(request, agent.agent_id, self.limits, int(self.clock() * 1000))
        total = len(decoded.rows) + decoded.rejected
        return await self._write("logs", self.logs, decoded, total)
