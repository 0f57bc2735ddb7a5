"""OTLP log export requests -> rows for the store, and the per-item rejections of
OTLP partial success.

Spans are not decoded here: ClickHouse reads span exports itself (see
`ingest/export_schema.py` and `ingest/flatten.py`); `ingest/span_checks.py` only
finds the spans to reject. Log records are few and decoded in Python.
A record (or span) with a wrong-length id is rejected on its own while the rest of
its request is kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from evalkit.attributes import any_value_json, encode_any_value

_MAX_MESSAGES = 5
_MAX_TIME_NS = 2**63 - 1

LOG_COLUMNS = (
    "agent_id", "trace_id", "span_id", "log_id", "time", "observed_time", "severity_number",
    "severity_text", "event_name", "body", "attributes", "attribute_types", "resource_attributes",
    "resource_attribute_types", "scope_name", "received_at",
)


@dataclass(frozen=True)
class Limits:
    max_attribute_bytes: int
    payload_threshold_bytes: int


@dataclass
class Rejections:
    """How many items of a request were rejected, with the first few reasons."""

    rejected: int = 0
    messages: list[str] = field(default_factory=list)

    def reject(self, message: str) -> None:
        self.rejected += 1
        if len(self.messages) < _MAX_MESSAGES:
            self.messages.append(message)

    def merge(self, other: Rejections) -> None:
        """Count another's rejections as this one's (one count and one list of reasons)."""
        self.rejected += other.rejected
        self.messages = (self.messages + other.messages)[:_MAX_MESSAGES]

    @property
    def error_message(self) -> str:
        if not self.rejected:
            return ""
        more = self.rejected - len(self.messages)
        text = "; ".join(self.messages)
        return f"{self.rejected} rejected: {text}" + (f" (and {more} more)" if more > 0 else "")


@dataclass
class Decoded(Rejections):
    """Rows (one tuple per log record) and what was rejected."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)


def _plain(kvs: Iterable[Any], limits: Limits) -> tuple[dict[str, str], dict[str, int]]:
    """An attribute list as the store keeps it: text per key, and the OTLP type of what is not a string.

    A value over the cap is cut at a character boundary."""
    values: dict[str, str] = {}
    types: dict[str, int] = {}
    cap = limits.max_attribute_bytes
    for kv in kvs:
        value = kv.value
        if value.WhichOneof("value") == "string_value":  # the common case, without a call
            text = value.string_value
        else:
            text, types[kv.key] = encode_any_value(value)
        if len(text) * 4 > cap:  # cheap pre-check: a character is at most 4 bytes
            raw = text.encode("utf-8")
            if len(raw) > cap:
                text = raw[:cap].decode("utf-8", errors="ignore")
        values[kv.key] = text
    return values, types


def decode_logs(request: Any, agent_id: str, limits: Limits, received_ms: int) -> Decoded:
    """Rows of an `ExportLogsServiceRequest`, in LOG_COLUMNS order."""
    out = Decoded()
    for resource_logs in request.resource_logs:
        resource_values, resource_types = _plain(resource_logs.resource.attributes, limits)
        for scope_logs in resource_logs.scope_logs:
            scope_name = scope_logs.scope.name
            for record in scope_logs.log_records:
                trace_id, span_id = record.trace_id, record.span_id
                if trace_id and len(trace_id) != 16:
                    out.reject(f"log record: trace_id must be empty or 16 bytes (got {len(trace_id)})")
                    continue
                if span_id and len(span_id) != 8:
                    out.reject(f"log record: span_id must be empty or 8 bytes (got {len(span_id)})")
                    continue
                values, types = _plain(record.attributes, limits)
                event_name = getattr(record, "event_name", "") or values.get("event.name", "")
                time_ns = record.time_unix_nano or record.observed_time_unix_nano
                if time_ns > _MAX_TIME_NS or record.observed_time_unix_nano > _MAX_TIME_NS:
                    # ClickHouse keeps signed 64-bit nanoseconds: later times would wrap to 1969.
                    out.reject(f"log record: times must be below 2^63 ns (year 2262); got {time_ns}")
                    continue
                body = json.dumps(any_value_json(record.body), separators=(",", ":"))
                # Deterministic identity: a re-sent record replaces itself.
                log_id = hashlib.blake2b(record.SerializeToString(deterministic=True),
                                         digest_size=12).hexdigest()
                out.rows.append((
                    agent_id, trace_id.hex(), span_id.hex(), log_id, time_ns,
                    record.observed_time_unix_nano or time_ns, record.severity_number,
                    record.severity_text, event_name, body, values, types, resource_values,
                    resource_types, scope_name, received_ms,
                ))
    return out
