"""OTLP export requests -> rows for the store, with each bad span rejected on its own.

A span with a missing or wrong-length id, or one that ends before it starts, is
rejected (OTLP partial success) while the rest of its request is kept.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from evalkit.attributes import any_value_json, encode_any_value
from evalkit.ingest.attribution import WANTED_KEYS, attribute

_ZERO_TRACE = b"\x00" * 16
_ZERO_SPAN = b"\x00" * 8
_MAX_MESSAGES = 5
_SCALARS = frozenset({"int_value", "double_value", "bool_value"})

SPAN_COLUMNS = (
    "agent_id", "trace_id", "span_id", "parent_span_id", "session_id", "name", "kind", "start_time",
    "end_time", "status_code", "status_message", "service_name", "scope_name", "scope_version",
    "operation", "provider", "model", "is_llm_call", "input_tokens", "output_tokens", "cache_read_tokens",
    "cache_write_tokens", "reasoning_tokens", "reported_cost_usd", "tool_name", "tool_call_id",
    "attributes", "payloads", "attribute_types", "truncated", "resource_attributes",
    "resource_attribute_types", "event_times", "event_names", "event_attributes", "event_attribute_types",
    "link_trace_ids", "link_span_ids", "link_attributes", "link_attribute_types", "received_at",
)
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
class Decoded:
    """Rows (one tuple per span or log record) and what was rejected."""

    rows: list[tuple[Any, ...]] = field(default_factory=list)
    rejected: int = 0
    messages: list[str] = field(default_factory=list)

    def reject(self, message: str) -> None:
        self.rejected += 1
        if len(self.messages) < _MAX_MESSAGES:
            self.messages.append(message)

    @property
    def error_message(self) -> str:
        if not self.rejected:
            return ""
        more = self.rejected - len(self.messages)
        text = "; ".join(self.messages)
        return f"{self.rejected} rejected: {text}" + (f" (and {more} more)" if more > 0 else "")


class AttributeSet:
    """One attribute list encoded for the store, with the few values attribution reads."""

    __slots__ = ("payloads", "picked", "truncated", "types", "values")

    def __init__(self, kvs: Iterable[Any], limits: Limits, pick: bool = False, also_pick: str = "") -> None:
        values: dict[str, str] = {}
        payloads: dict[str, str] = {}
        types: dict[str, int] = {}
        truncated: dict[str, int] = {}
        picked: dict[str, Any] = {}
        cap = limits.max_attribute_bytes
        threshold = limits.payload_threshold_bytes
        for kv in kvs:
            key = kv.key
            value = kv.value
            which = value.WhichOneof("value")
            if which == "string_value":  # the common case, without a call
                text = value.string_value
            else:
                text, type_code = encode_any_value(value)
                types[key] = type_code
            if len(text) * 4 > cap:  # cheap pre-check: a character is at most 4 bytes
                raw = text.encode("utf-8")
                if len(raw) > cap:
                    truncated[key] = len(raw)
                    text = raw[:cap].decode("utf-8", errors="ignore")
            if len(text) >= threshold:
                payloads[key] = text
            else:
                values[key] = text
            if pick and (key in WANTED_KEYS or key == also_pick):
                picked[key] = text if which == "string_value" else (
                    getattr(value, which) if which in _SCALARS else None)
        self.values, self.payloads, self.types = values, payloads, types
        self.truncated, self.picked = truncated, picked


def _plain(kvs: Iterable[Any], limits: Limits) -> tuple[dict[str, str], dict[str, int]]:
    encoded = AttributeSet(kvs, limits)
    encoded.values.update(encoded.payloads)
    return encoded.values, encoded.types


def decode_spans(request: Any, agent_id: str, limits: Limits, received_ms: int,
                 session_attribute: str = "") -> Decoded:
    """Rows of an `ExportTraceServiceRequest`, in SPAN_COLUMNS order."""
    out = Decoded()
    rows = out.rows
    for resource_spans in request.resource_spans:
        resource_values, resource_types = _plain(resource_spans.resource.attributes, limits)
        service_name = resource_values.get("service.name", "")
        for scope_spans in resource_spans.scope_spans:
            scope_name = scope_spans.scope.name
            scope_version = scope_spans.scope.version
            for span in scope_spans.spans:
                trace_id, span_id, parent = span.trace_id, span.span_id, span.parent_span_id
                if len(trace_id) != 16 or trace_id == _ZERO_TRACE:
                    out.reject(f"span {span.name!r}: trace_id must be 16 bytes and not all zero "
                               f"(got {len(trace_id)} bytes)")
                    continue
                if len(span_id) != 8 or span_id == _ZERO_SPAN:
                    out.reject(f"span {span.name!r}: span_id must be 8 bytes and not all zero "
                               f"(got {len(span_id)} bytes)")
                    continue
                if parent and len(parent) != 8:
                    out.reject(f"span {span.name!r}: parent_span_id must be empty or 8 bytes "
                               f"(got {len(parent)} bytes)")
                    continue
                start, end = span.start_time_unix_nano, span.end_time_unix_nano
                if start == 0:
                    out.reject(f"span {span.name!r}: start_time_unix_nano is missing")
                    continue
                if end < start:
                    out.reject(f"span {span.name!r}: ends before it starts ({end} < {start})")
                    continue
                attrs = AttributeSet(span.attributes, limits, pick=True, also_pick=session_attribute)
                who = attribute(span.name, attrs.picked, session_attribute)
                event_times, event_names, event_values, event_types = [], [], [], []
                # Most spans have neither events nor links; iterating an empty repeated field still costs.
                for event in span.events if len(span.events) else ():
                    values, types = _plain(event.attributes, limits)
                    event_times.append(event.time_unix_nano)
                    event_names.append(event.name)
                    event_values.append(values)
                    event_types.append(types)
                link_traces, link_spans, link_values, link_types = [], [], [], []
                for link in span.links if len(span.links) else ():
                    values, types = _plain(link.attributes, limits)
                    link_traces.append(link.trace_id.hex())
                    link_spans.append(link.span_id.hex())
                    link_values.append(values)
                    link_types.append(types)
                rows.append((
                    agent_id, trace_id.hex(), span_id.hex(), parent.hex() if parent else "", who.session_id,
                    span.name, span.kind, start, end, span.status.code, span.status.message,
                    service_name, scope_name, scope_version,
                    who.operation, who.provider, who.model, who.is_llm_call, who.input_tokens,
                    who.output_tokens, who.cache_read_tokens, who.cache_write_tokens, who.reasoning_tokens,
                    who.reported_cost_usd, who.tool_name, who.tool_call_id,
                    attrs.values, attrs.payloads, attrs.types, attrs.truncated, resource_values,
                    resource_types, event_times, event_names, event_values, event_types,
                    link_traces, link_spans, link_values, link_types, received_ms,
                ))
    return out


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
