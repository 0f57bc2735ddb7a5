"""The OTLP trace export as ClickHouse reads it: a protobuf schema, and the framing that
adds what only evalkit knows (the agent, the arrival time, the limits) to each request.

The schema is a subset of OTLP's `ExportTraceServiceRequest` with the same field
numbers: ClickHouse skips the fields it does not name. Two choices matter:

- An `AnyValue` holding an array or kvlist is read as the nested message's bytes
  (a length-delimited field is the same on the wire as message or bytes), so any
  depth of nesting is kept exactly; `evalkit/attributes.py` decodes it on read.
- `Export` extends the request with fields 1001+: appending encoded fields to a
  serialized message is protobuf's merge, so the exporter's bytes go to ClickHouse
  untouched, with no re-serialisation in Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MESSAGE = "Export"

SCHEMA = """
syntax = "proto3";
package evalkit.ingest;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    bytes array_value = 5;
    bytes kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; }
message InstrumentationScope { string name = 1; string version = 2; }
message Event { fixed64 time_unix_nano = 1; string name = 2; repeated KeyValue attributes = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; repeated KeyValue attributes = 4; }
message Status { string message = 2; int32 code = 3; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  bytes parent_span_id = 4;
  string name = 5;
  int32 kind = 6;
  fixed64 start_time_unix_nano = 7;
  fixed64 end_time_unix_nano = 8;
  repeated KeyValue attributes = 9;
  repeated Event events = 11;
  repeated Link links = 13;
  Status status = 15;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Export {
  repeated ResourceSpans resource_spans = 1;
  string agent_id = 1001;
  uint64 received_ms = 1002;
  string session_attribute = 1003;
  uint64 max_attribute_bytes = 1004;
  uint64 payload_threshold_bytes = 1005;
  uint64 seq = 1006;
  uint64 request_bytes = 1007;
}
"""

# The oneof's presence column (`value.value`): ClickHouse fills it with the number of the
# field that was set, 0 for none. A plain integer, not an Enum: comparing with integer
# constants keeps the view cheap to plan (it is planned on every insert).
NONE, STRING, BOOL, INT, DOUBLE, ARRAY, KVLIST, BYTES = range(8)
KEY_VALUES = ("Array(Tuple(key String, value Tuple(string_value String, bool_value Bool, int_value Int64, "
              "double_value Float64, array_value String, kvlist_value String, bytes_value String, value UInt8)))")
_SPAN = (f"Tuple(trace_id String, span_id String, parent_span_id String, name String, kind Int32, "
         f"start_time_unix_nano UInt64, end_time_unix_nano UInt64, attributes {KEY_VALUES}, "
         f"events Array(Tuple(time_unix_nano UInt64, name String, attributes {KEY_VALUES})), "
         f"links Array(Tuple(trace_id String, span_id String, attributes {KEY_VALUES})), "
         f"status Tuple(message String, code Int32))")
# The staging table's columns: one row per export request.
COLUMNS = (
    ("resource_spans", f"Array(Tuple(resource Tuple(attributes {KEY_VALUES}), "
                       f"scope_spans Array(Tuple(scope Tuple(name String, version String), spans Array({_SPAN})))))"),
    ("agent_id", "String"),
    ("received_ms", "UInt64"),
    ("session_attribute", "String"),
    ("max_attribute_bytes", "UInt64"),
    ("payload_threshold_bytes", "UInt64"),
)
COLUMN_NAMES = tuple(name for name, _ in COLUMNS)
# The staged copy of a request (`span_staging`, ingest/tables.py) adds what the writer knows when it
# inserts: the request's place in the staging sequence and its size (the flattener sizes batches
# by it). Fields 1006-1007 of the same message: a table without these columns skips them.
STAGING_COLUMNS = (*COLUMNS, ("seq", "UInt64"), ("request_bytes", "UInt64"))
STAGING_COLUMN_NAMES = tuple(name for name, _ in STAGING_COLUMNS)


def write_schema_file(directory: Path) -> Path:
    """The schema as a file, for an embedded engine (which reads schema files from anywhere).

    Given as a string instead, ClickHouse caches it as a file under its format schema
    directory, which for chDB is the process's working directory."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "evalkit_span_export.proto"
    if not path.is_file() or path.read_text() != SCHEMA:
        path.write_text(SCHEMA)
    return path


def insert_settings(schema_file: Path | None = None) -> dict[str, str | int]:
    """What an insert of framed exports tells ClickHouse about their format: the schema from
    `schema_file`, or (for a ClickHouse server, which only reads its own schema directory)
    the schema text itself."""
    source: dict[str, str | int] = (
        {"format_schema": f"{schema_file}:{MESSAGE}"} if schema_file is not None else
        {"format_schema_source": "string", "format_schema": SCHEMA, "format_schema_message_name": MESSAGE})
    return {**source, "input_format_protobuf_oneof_presence": 1,
            # The view over these rows is planned on every insert; compiling its expressions
            # to machine code costs more there than it saves on a batch.
            "compile_expressions": 0}


def _varint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _bytes_field(number: int, value: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(value)) + value


def _int_field(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def sequenced_pieces(message: bytes, seq: int) -> tuple[bytes, bytes, bytes]:
    """One export message (`Framing.message`) with its staging sequence number and size appended (a protobuf
    merge: the message is never re-serialised), length-delimited, as pieces: the store writes them to the
    insert as they are, so a request's bytes are not copied again on their way (a 512-span request is
    ~670 KB, and each copy of it a fresh buffer whose pages fault in)."""
    tail = _int_field(1006, seq) + _int_field(1007, len(message))
    return _varint(len(message) + len(tail)), message, tail


def sequenced(message: bytes, seq: int) -> bytes:
    """`sequenced_pieces` joined: one staged row."""
    return b"".join(sequenced_pieces(message, seq))


class NotProtobuf(ValueError):
    """The bytes are not a protobuf message."""


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 63:
            raise NotProtobuf("truncated or overlong varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7


def only_resource_spans(request: bytes) -> bytes:
    """The request without top-level fields other than `resource_spans` (1).

    Fields 1001+ are evalkit's framing: a client sending them would otherwise overwrite or
    shadow the agent and arrival time evalkit appends; other top-level fields are unknown
    to ClickHouse's schema anyway. Walks only the top level, so it costs a few steps per
    `ResourceSpans`, and returns the bytes untouched in the common case."""
    keep: list[tuple[int, int]] = []
    foreign = False
    at = 0
    while at < len(request):
        start = at
        tag, at = _read_varint(request, at)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            _, at = _read_varint(request, at)
        elif wire == 1:
            at += 8
        elif wire == 2:
            length, at = _read_varint(request, at)
            at += length
        elif wire == 5:
            at += 4
        else:
            raise NotProtobuf(f"unsupported wire type {wire} for field {number}")
        if at > len(request) or number == 0:
            raise NotProtobuf("a field runs past the end of the message")
        if number == 1 and wire == 2:
            keep.append((start, at))
        else:
            foreign = True
    if not foreign:
        return request
    return b"".join(request[a:b] for a, b in keep)


@dataclass(frozen=True)
class Framing:
    """What evalkit adds to every request of one agent."""

    agent_id: str
    received_ms: int
    session_attribute: str
    max_attribute_bytes: int
    payload_threshold_bytes: int

    def message(self, request: bytes) -> bytes:
        """One `Export` message, not length-delimited: the request and what evalkit adds to it."""
        return b"".join((
            request,
            _bytes_field(1001, self.agent_id.encode()),
            _int_field(1002, self.received_ms),
            _bytes_field(1003, self.session_attribute.encode()),
            _int_field(1004, self.max_attribute_bytes),
            _int_field(1005, self.payload_threshold_bytes),
        ))

    def frame(self, request: bytes) -> bytes:
        """One length-delimited `Export` message (ClickHouse's `Protobuf` format: a row per message)."""
        message = self.message(request)
        return _varint(len(message)) + message
