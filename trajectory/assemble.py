"""A stored session -> its ATIF document with a status, and its raw spans as JSON.

What the trajectory routes serve; kept free of HTTP so scoring (and the bench) can
call it directly.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from evalkit.attributes import json_safe
from evalkit.store import Store
from evalkit.trajectory.build import build_trajectory
from evalkit.trajectory.cost import apply_costs
from evalkit.trajectory.overrides import MappingOverrides
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.read import (
    SessionWindow,
    read_spans_to_map,
    read_spans_to_map_settling,
    read_trace_logs,
    session_window,
)
from evalkit.trajectory.settle import INVALID, Settlement, assess, shapes_of
from evalkit.trajectory.span import SPAN_KIND_NAMES, Span
from evalkit.trajectory.validate import ValidationIssue, errors_only, validate_trajectory


@dataclass
class Assembled:
    session_id: str
    settlement: Settlement
    window: SessionWindow | None
    built: Built | None

    @property
    def status(self) -> str:
        if self.built is not None and errors_only(self.built.issues):
            return INVALID
        return self.settlement.status

    def document(self, *, waited_seconds: float | None = None, waited_out: bool | None = None) -> dict[str, Any]:
        assert self.built is not None
        # A shallow copy: the built document may be cached and served again, with other extras.
        document = dict(self.built.document)
        extra = dict(document.get("extra") or {})
        extra["status"] = self.status
        extra["settled"] = self.settlement.settled
        extra["settlement"] = self.settlement.as_extra()
        extra["validated_with"] = self.built.validated_with
        if waited_seconds is not None:
            extra["waited_seconds"] = round(waited_seconds, 3)
        if waited_out is not None:
            extra["wait_ran_out"] = waited_out
        if self.built.issues:
            extra["validation_issues"] = [str(issue) for issue in self.built.issues]
        document["extra"] = extra
        return document


@dataclass
class Built:
    document: dict[str, Any]
    issues: list[ValidationIssue]
    validated_with: str
    mapping_version: str


def assemble(
    store: Store,
    agent_id: str,
    agent_name: str,
    session_id: str,
    *,
    now: float,
    quiet_period: float,
    overrides: MappingOverrides | None,
    prices: PriceBook,
    settlement: Settlement | None = None,
    window: SessionWindow | None = None,
    full_schema: bool = False,
    span_limit: int | None = None,
) -> Assembled:
    """Read, settle, map, price and validate one session (None `built` when it has no spans).

    Without a `settlement`, the session is settled from the spans read for the build (their settle
    facts come in the same query): one round trip fewer than the settle check's. `span_limit`: a
    session of more spans is not built (None `built`, its `span_count` then over the limit but
    not exact: ask `settle.settle_session` for the count).

    Validation is the cross-field rules (the builder types every field, in the shape of the models
    the JSON Schema is generated from); `full_schema` adds the JSON Schema walk, which costs more
    than everything else together on a 3,000-step session.
    """
    window = window or session_window(store, agent_id, session_id)
    if window is None:
        return Assembled(session_id, settlement or assess([], now=now, quiet_period=quiet_period), None, None)
    if settlement is not None and settlement.span_count == 0:
        return Assembled(session_id, settlement, window, None)
    with cyclic_gc_paused():
        if settlement is None:
            limit = None if span_limit is None else span_limit + 1
            spans, facts, log_records = read_spans_to_map_settling(store, agent_id, window.trace_ids, limit)
            settlement = assess(shapes_of(facts), now=now, quiet_period=quiet_period, log_records=log_records)
            if not spans:
                return Assembled(session_id, settlement, window, None)
        else:
            spans = read_spans_to_map(store, agent_id, window.trace_ids)
        # Counted by the settle check: most sessions have no log records, and asking costs a query.
        logs = read_trace_logs(store, agent_id, window.trace_ids) if settlement.log_records != 0 else []
        result = build_trajectory(spans, logs, overrides=overrides, session_id=session_id)
        document = apply_costs(result.document, prices)
        if document["agent"]["name"] == "unknown":
            # No span named the agent: the evalkit agent it was sent for is the best name there is.
            document["agent"]["name"] = agent_name
        issues = validate_trajectory(document, schema=full_schema)
    validated_with = "rules+json-schema" if full_schema else "rules"
    return Assembled(session_id, settlement, window, Built(document, issues, validated_with, result.mapping_version))


@dataclass
class CachedDocument:
    """A served document kept as (UTF-8) text, so the collector never walks it: `head + extra + tail`.

    `built.document` holds only `extra` (what `Assembled.document` adds the per-request fields
    to); everything else of the document is already serialised around it.
    """

    built: Built
    head: bytes  # UTF-8 JSON, as served
    tail: bytes


# agent, session, last arrival (ms), span count, mapping overrides (as JSON), price book, agent name,
# JSON Schema walk asked for, linked log records. Anything that changes what is built changes one of these.
CacheKey = tuple[str, str, int, int, str, int, str, bool, int | None]


class BuiltCache:
    """Served documents of settled sessions, least recently used dropped first.

    Only settled sessions: one still receiving spans changes between requests. A late span
    changes the last arrival and the span count, a late log record the log count, a mapping change
    the overrides, a new price file the price book (held here by identity, kept alive by the entry
    so its id is not reused).
    What each request adds (settlement, wait, status) is added per request by `Assembled.document`.
    """

    def __init__(self, limit: int = 64, max_spans: int = 20_000) -> None:
        # Bounded in entries and in spans: a 3,000-span document holds tens of MB as Python objects.
        self.limit = limit
        self.max_spans = max_spans
        self._entries: OrderedDict[CacheKey, tuple[PriceBook, CachedDocument]] = OrderedDict()
        self._lock = threading.Lock()  # the route builds on worker threads

    @staticmethod
    def key(
        agent_id: str,
        agent_name: str,
        session_id: str,
        window: SessionWindow,
        settlement: Settlement,
        overrides: MappingOverrides | None,
        prices: PriceBook,
        full_schema: bool,
    ) -> CacheKey:
        mapping = overrides.model_dump_json() if overrides is not None else ""
        return (agent_id, session_id, window.last_received_ms, settlement.span_count, mapping, id(prices),
                agent_name, full_schema, settlement.log_records)

    def get(self, key: CacheKey) -> CachedDocument | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[1]

    def may_hold(self, agent_id: str, session_id: str, last_received_ms: int) -> bool:
        """Whether an entry could serve the session as last received: if not, no settle check can find one."""
        with self._lock:
            return any(k[0] == agent_id and k[1] == session_id and k[2] == last_received_ms for k in self._entries)

    def put(self, key: CacheKey, prices: PriceBook, cached: CachedDocument) -> None:
        with self._lock:
            if key[3] > self.max_spans:
                return  # larger than the whole budget: would only evict everything else
            self._entries[key] = (prices, cached)
            self._entries.move_to_end(key)
            while len(self._entries) > self.limit or sum(k[3] for k in self._entries) > self.max_spans:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """No cyclic garbage collection while one session is assembled.

    A 3,000-span session allocates a few hundred thousand objects that all live until the
    document is built; each batch of them makes CPython run full collections that walk every
    object of the service (the genai-prices table alone is many thousands), and that walking was
    about a third of the request's CPU. Reference counting still frees everything as usual; only
    the cycle detector waits, for one call, and catches up after. GC stays as it was when it
    was off on entry (someone else's choice, or another assemble call holding it): only the
    call that turned it off turns it back on, so it is never left off.
    """
    paused = gc.isenabled()
    if paused:
        gc.disable()
    try:
        yield
    finally:
        if paused:
            gc.enable()


_PLAIN = frozenset({str, int, float, bool, type(None)})


def _plain_or_safe(attributes: dict[str, Any]) -> dict[str, Any]:
    """`json_safe(attributes)`: a copy as is when every value is a JSON scalar already (most spans)."""
    plain = _PLAIN
    for value in attributes.values():
        if type(value) not in plain:
            safe: dict[str, Any] = json_safe(attributes)
            return safe
    return dict(attributes)


def span_view(span: Span) -> dict[str, Any]:
    return {
        "trace_id": span.trace_id,
        "span_id": span.span_id,
        "parent_span_id": span.parent_span_id or None,
        "name": span.name,
        "kind": SPAN_KIND_NAMES.get(span.kind, str(span.kind)),
        "start_time_unix_nano": span.start_time_unix_nano,
        "end_time_unix_nano": span.end_time_unix_nano,
        "duration_ms": span.duration_ns / 1e6,
        "status_code": {0: "UNSET", 1: "OK", 2: "ERROR"}.get(span.status_code, str(span.status_code)),
        "status_message": span.status_message or None,
        "session_id": span.session_id or None,
        "attributes": _plain_or_safe(span.attributes),
        "resource_attributes": _plain_or_safe(span.resource_attributes),
        "scope": {"name": span.scope_name, "version": span.scope_version},
        "events": [{"name": e.name, "time_unix_nano": e.time_unix_nano, "attributes": json_safe(e.attributes)}
                   for e in span.events],
        "links": [{"trace_id": link.trace_id, "span_id": link.span_id, "attributes": json_safe(link.attributes)}
                  for link in span.links],
        "truncated": span.truncated or None,
    }
