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

from evalkit.access import KEY_PREFIX, TOKEN_PREFIX, Access, Agent, KeyHolder
from evalkit.ingest.decode import Limits, Rejections
from evalkit.ingest.encode import Encoded, encode_logs, encode_spans
from evalkit.ingest.export_schema import Framing
from evalkit.ingest.native import NativeEncoder
from evalkit.ingest.workers import EncodePool
from evalkit.ingest.writer import BatchWriter, Overloaded, WriteFailed, WriteRefused
from evalkit.metrics import Metrics
from evalkit.store import StoreError, StoreUnavailable


class Unauthenticated(Exception):
    """No key, or an unknown or revoked one: nothing is stored."""


class Forbidden(Exception):
    """The key is known but may not write now (its agent is archived): nothing is stored."""


class Unavailable(Exception):
    """The store cannot take the data now; the client should retry after `retry_after` seconds."""

    def __init__(self, message: str, retry_after: int) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class Exhausted(Unavailable):
    """Too much is queued or in flight; the client should slow down and retry."""


class Refused(Exception):
    """The store refuses this request's data for what it is; re-sending it would fail again."""


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


class MemoryLimiter:
    """Bytes of export requests in flight (read, decoding, queued or being inserted), bounded
    like the OpenTelemetry Collector's memory_limiter: a request that would pass the limit is
    refused before it is decoded. One request alone is always admitted (the request size
    limit bounds it), so a limit below the largest request never blocks a client for good."""

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.in_flight_bytes = 0

    def reserve(self, size: int, retry_after: int) -> Reservation:
        """Hold `size` bytes until the returned reservation is released (it is a context manager)."""
        if self.in_flight_bytes and self.in_flight_bytes + size > self.limit_bytes:
            raise Exhausted(
                f"evalkit is over its memory limit ({self.in_flight_bytes} bytes of requests in flight, "
                f"limit {self.limit_bytes}, EVALKIT_MEMORY_LIMIT_BYTES); retry later", retry_after)
        self.in_flight_bytes += size
        return Reservation(self, size)


class Reservation:
    def __init__(self, limiter: MemoryLimiter, size: int) -> None:
        self._limiter = limiter
        self.size = size

    def resize(self, size: int) -> None:
        """Count what the request turned out to be (a body larger once decompressed)."""
        self._limiter.in_flight_bytes += size - self.size
        self.size = size

    def release(self) -> None:
        self._limiter.in_flight_bytes -= self.size
        self.size = 0

    def __enter__(self) -> Reservation:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()


class Ingest:
    def __init__(self, access: Access, spans: BatchWriter, logs: BatchWriter, limits: Limits,
                 metrics: Metrics, pool: EncodePool, *, retry_after: int = 2,
                 memory_limit_bytes: int = 128 * 1024 * 1024,
                 clock: Callable[[], float] = time.time) -> None:
        self.access = access
        self.spans = spans
        self.logs = logs
        self.limits = limits
        self.metrics = metrics
        self.pool = pool
        self.retry_after = retry_after
        self.clock = clock
        self.memory = MemoryLimiter(memory_limit_bytes)
        metrics.watch_memory(lambda: self.memory.in_flight_bytes, memory_limit_bytes)
        # Key lookups get threads of their own, never queued behind other work on the default executor.
        self._lookups = ThreadPoolExecutor(max_workers=4, thread_name_prefix="evalkit-ingest-keys")
        # Set once the store is migrated; until then every request is answered "retry later".
        self.log_encoder: NativeEncoder | None = None

    def ready(self) -> bool:
        return self.log_encoder is not None

    async def authenticate(self, authorization: str | None) -> Agent:
        """The agent the request's key writes for; checked before the body is read or decoded."""
        key = bearer_key(authorization)
        if not self.ready():
            raise Unavailable("evalkit's store is not ready yet", self.retry_after)
        try:
            holder = await asyncio.get_running_loop().run_in_executor(self._lookups, self._key_holder, key)
        except (StoreUnavailable, StoreError) as exc:
            raise Unavailable(f"cannot check the ingest key: {exc}", self.retry_after) from exc
        if holder is None:
            if key.startswith(TOKEN_PREFIX):
                # The admin token `evalkit serve` prints is the one a new user has at hand: say it is the wrong
                # kind of token, not an unknown one (told by its prefix, no lookup).
                raise Unauthenticated(f"this is an API token ({TOKEN_PREFIX}…), not an ingest key: spans are sent "
                                      f"with an agent's ingest key ({KEY_PREFIX}…); create one with "
                                      "`evalkit agents keys create AGENT`")
            raise Unauthenticated("the ingest key is unknown or revoked; create a new one with "
                                  "`evalkit agents keys create AGENT`")
        agent = holder.agent
        if "ingest" not in holder.scopes:
            self.metrics.refused.labels("scope").inc()
            raise Forbidden(f"this key of agent {agent.agent_id} has the scopes {', '.join(sorted(holder.scopes))} "
                            "but not ingest, so it cannot send spans; send with a key made with the ingest scope "
                            f"(`evalkit agents keys create {agent.agent_id}`: ingest is the default)")
        if agent.archived:
            self.metrics.refused.labels("archived").inc()
            raise Forbidden(f"agent {agent.agent_id} is archived, so its keys no longer ingest; unarchive it "
                            f"(PATCH /api/agents/{agent.agent_id} with {{\"archived\": false}}) or send with "
                            "another agent's key")
        return agent

    def _key_holder(self, key: str) -> KeyHolder | None:
        # A key lookup reads no spans: it never waits at the read barrier behind the flattener.
        with self.access.store.unfenced():
            return self.access.key_holder(key)

    def admit(self, size: int) -> Reservation:
        """Hold `size` bytes of the memory limit while a request is handled (`with` the result);
        raises Exhausted (retryable) when the limit is reached."""
        try:
            return self.memory.reserve(size, self.retry_after)
        except Exhausted:
            self.metrics.refused.labels("memory").inc()
            raise

    async def _write(self, signal: str, writer: BatchWriter, encoded: Encoded, before: Rejections) -> Outcome:
        rejections = Rejections(before.rejected, list(before.messages))
        rejections.merge(Rejections(encoded.rejected, list(encoded.reasons)))
        rejected = rejections.rejected
        self.metrics.received.labels(signal).inc(encoded.rows + rejected)
        if rejected:
            self.metrics.rejected.labels(signal).inc(rejected)
        try:
            await writer.write(encoded)
        except Overloaded as exc:
            self.metrics.refused.labels("overloaded").inc()
            raise Exhausted(f"evalkit is overloaded ({exc}); retry later", self.retry_after) from exc
        except WriteFailed as exc:
            self.metrics.refused.labels("store").inc()
            raise Unavailable(f"the data could not be stored ({exc}); nothing was kept, retry later",
                              self.retry_after) from exc
        except WriteRefused as exc:
            self.metrics.refused.labels("refused").inc()
            raise Refused(f"the store refused this request's {signal} ({exc}); nothing of it was kept and "
                          "sending it again will fail the same way") from exc
        self.metrics.accepted.labels(signal).inc(encoded.rows)
        return Outcome(encoded.rows, rejected, rejections.error_message)

    def close(self) -> None:
        self._lookups.shutdown(wait=False)

    async def traces(self, body: bytes, agent: Agent, before: Rejections | None = None) -> Outcome:
        """An `ExportTraceServiceRequest` in protobuf bytes, from an authenticated agent;
        `before` counts spans rejected while the body was decoded (OTLP/JSON)."""
        framing = Framing(agent.agent_id, int(self.clock() * 1000), agent.session_attribute,
                          self.limits.max_attribute_bytes, self.limits.payload_threshold_bytes)
        encoded = await self.pool.run(encode_spans, body, framing)
        return await self._write("spans", self.spans, encoded, before or Rejections())

    async def logs_export(self, body: bytes, agent: Agent, before: Rejections | None = None) -> Outcome:
        """An `ExportLogsServiceRequest` in protobuf bytes, from an authenticated agent."""
        assert self.log_encoder is not None
        encoded = await self.pool.run(encode_logs, body, agent.agent_id, self.limits, int(self.clock() * 1000),
                                      self.log_encoder)
        return await self._write("logs", self.logs, encoded, before or Rejections())
