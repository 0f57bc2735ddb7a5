"""A span and a log record as the trajectory code sees them, read back from the store.

Attribute values keep their OTLP type as Python values: string -> str, int -> int,
double -> float, bool -> bool, bytes -> bytes, array -> list, kvlist -> dict.
Values the receiver truncated (over the configured cap) are listed in
`truncated` with their original length in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# OTLP SpanKind numbers, kept as the wire sends them.
SPAN_KIND_NAMES = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}
STATUS_UNSET, STATUS_OK, STATUS_ERROR = 0, 1, 2


@dataclass(frozen=True)
class SpanEvent:
    name: str
    time_unix_nano: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class SpanLink:
    trace_id: str
    span_id: str
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Span:
    trace_id: str  # 32 lower-case hex digits
    span_id: str  # 16 lower-case hex digits
    parent_span_id: str  # "" for a root
    name: str
    kind: int  # OTLP SpanKind number
    start_time_unix_nano: int
    end_time_unix_nano: int
    status_code: int  # STATUS_UNSET / STATUS_OK / STATUS_ERROR
    status_message: str = ""
    attributes: dict[str, Any] = field(default_factory=dict)
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    scope_name: str = ""
    scope_version: str = ""
    events: tuple[SpanEvent, ...] = ()
    links: tuple[SpanLink, ...] = ()
    truncated: dict[str, int] = field(default_factory=dict)
    session_id: str = ""  # as attributed at ingest; "" when this span carried none

    @property
    def is_root(self) -> bool:
        return not self.parent_span_id

    @property
    def duration_ns(self) -> int:
        return max(0, self.end_time_unix_nano - self.start_time_unix_nano)


@dataclass(frozen=True)
class LogRecord:
    """An OTLP log record; older GenAI instrumentations put message content here."""

    time_unix_nano: int
    trace_id: str  # "" when not linked
    span_id: str  # "" when not linked
    event_name: str  # `event.name` attribute or the record's EventName
    body: Any  # the AnyValue body as a Python value
    attributes: dict[str, Any] = field(default_factory=dict)
    severity_number: int = 0
    severity_text: str = ""
    resource_attributes: dict[str, Any] = field(default_factory=dict)
    scope_name: str = ""
