"""Loading captured spans (simplified JSON, OTLP/JSON, OTLP protobuf) and live SDK spans as `Span`s."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from google.protobuf.json_format import Parse
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

from evalkit.ingest.otlp_json import parse_json
from evalkit.trajectory.span import STATUS_ERROR, STATUS_OK, STATUS_UNSET, LogRecord, Span, SpanEvent

if TYPE_CHECKING:
    from tests.captures.corpus import GroundTruth

DATA = Path(__file__).resolve().parent / "data"
SPANS = DATA / "spans"
ATIF = DATA / "atif"

_KINDS = {"UNSPECIFIED": 0, "INTERNAL": 1, "SERVER": 2, "CLIENT": 3, "PRODUCER": 4, "CONSUMER": 5}
_STATUS = {"UNSET": STATUS_UNSET, "OK": STATUS_OK, "ERROR": STATUS_ERROR}
BASE_NS = 1_795_937_800_000_000_000


def _kind(value: Any) -> int:
    if isinstance(value, int):
        return value
    return _KINDS.get(str(value or "INTERNAL").split(".")[-1].removeprefix("SPAN_KIND_"), 1)


def span_from_dict(raw: dict[str, Any], index: int = 0, trace_id: str = "ab" * 16) -> Span:
    """A span of the simplified capture format; ids and times are made up when the capture has none."""
    start = raw.get("start_time_unix_nano") or BASE_NS + index * 1_000_000_000
    end = raw.get("end_time_unix_nano") or start + 500_000_000
    return Span(
        trace_id=raw.get("trace_id") or trace_id,
        span_id=raw.get("span_id") or f"{index + 1:016x}",
        parent_span_id=raw.get("parent_span_id") or "",
        name=raw.get("name", ""),
        kind=_kind(raw.get("kind")),
        start_time_unix_nano=int(start),
        end_time_unix_nano=int(end),
        status_code=_STATUS.get(str(raw.get("status", "UNSET")).upper(), STATUS_UNSET),
        status_message=raw.get("status_message", ""),
        attributes=dict(raw.get("attributes", {})),
        scope_name=raw.get("scope") or "",
        events=tuple(
            SpanEvent(e["name"], int(e.get("time_unix_nano", start)), dict(e.get("attributes", {})))
            for e in raw.get("events", [])
        ),
    )


def load_simple(name: str) -> list[Span]:
    data = json.loads((SPANS / name).read_text())
    if isinstance(data, dict):
        # An attribute-only fixture: one span.
        return [span_from_dict({"name": "fixture", "attributes": data}, 0)]
    return [span_from_dict(raw, index) for index, raw in enumerate(data)]


def any_value(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value
    if which == "int_value":
        return value.int_value
    if which == "double_value":
        return value.double_value
    if which == "bool_value":
        return value.bool_value
    if which == "bytes_value":
        return value.bytes_value
    if which == "array_value":
        return [any_value(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: any_value(kv.value) for kv in value.kvlist_value.values}
    return None


def spans_from_request(request: ExportTraceServiceRequest) -> list[Span]:
    spans = []
    for resource_spans in request.resource_spans:
        resource = {kv.key: any_value(kv.value) for kv in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                spans.append(
                    Span(
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(),
                        name=span.name,
                        kind=span.kind,
                        start_time_unix_nano=span.start_time_unix_nano,
                        end_time_unix_nano=span.end_time_unix_nano,
                        status_code=span.status.code,
                        status_message=span.status.message,
                        attributes={kv.key: any_value(kv.value) for kv in span.attributes},
                        resource_attributes=resource,
                        scope_name=scope_spans.scope.name,
                        scope_version=scope_spans.scope.version,
                        events=tuple(
                            SpanEvent(
                                e.name, e.time_unix_nano, {kv.key: any_value(kv.value) for kv in e.attributes}
                            )
                            for e in span.events
                        ),
                    )
                )
    return spans


def load_pb(name: str) -> list[Span]:
    request = ExportTraceServiceRequest()
    request.ParseFromString((SPANS / name).read_bytes())
    return spans_from_request(request)


def capture_spans(name: str) -> list[Span]:
    """The spans of a recorded capture's trace exports (tests/captures/<name>), as its exporter sent them."""
    from tests.captures import corpus  # the corpus module, only for tests that read captures

    spans: list[Span] = []
    for export in corpus.load(name).exports:
        if export.signal == "traces":
            request = ExportTraceServiceRequest()
            # The Langfuse SDK gzips its exports (the capture keeps the body as sent).
            body = gzip.decompress(export.body) if export.content_encoding == "gzip" else export.body
            if "json" in export.content_type:  # Langfuse's JS processor posts OTLP/JSON: read as ingest reads it
                body, _ = parse_json(body, "traces")
            request.ParseFromString(body)
            spans.extend(spans_from_request(request))
    return spans


def capture_document(name: str, session_id: str) -> dict[str, Any]:
    """A capture's session built offline from all its spans, checked valid, as its ATIF document."""
    from evalkit.trajectory import from_spans  # the builder, only for tests that build a capture

    result = from_spans.trajectory_from_spans(capture_spans(name), session_id=session_id)
    assert result.valid, [str(issue) for issue in result.issues]
    return result.document()


def capture_truth(name: str) -> GroundTruth:
    """A recorded capture's ground truth: what the fake LLM was asked and answered (`corpus.GroundTruth`)."""
    from tests.captures import corpus  # the corpus module, only for tests that read captures

    return corpus.GroundTruth.of(corpus.load(name).llm_log)


def results_by_call(step: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """An ATIF step's observation results by the call id each answers."""
    return {r["source_call_id"]: r for r in (step.get("observation") or {}).get("results") or ()}


def capture_logs(name: str) -> list[LogRecord]:
    """The log records of a recorded capture's log exports, named and timed as ingest reads them (ingest/decode.py):
    the record's EventName, else its `event.name` attribute; its time, else the time it was observed."""
    from tests.captures import corpus  # the corpus module, only for tests that read captures

    logs = []
    for export in corpus.load(name).exports:
        if export.signal != "logs":
            continue
        request = ExportLogsServiceRequest()
        # Gemini CLI posts OTLP/JSON logs (`otlpProtocol: http`): read as ingest reads them.
        request.ParseFromString(parse_json(export.body, "logs")[0] if "json" in export.content_type else export.body)
        for resource_logs in request.resource_logs:
            for scope_logs in resource_logs.scope_logs:
                for record in scope_logs.log_records:
                    attributes = {kv.key: any_value(kv.value) for kv in record.attributes}
                    logs.append(LogRecord(record.time_unix_nano or record.observed_time_unix_nano,
                                          record.trace_id.hex(), record.span_id.hex(),
                                          record.event_name or str(attributes.get("event.name", "")),
                                          any_value(record.body), attributes, scope_name=scope_logs.scope.name))
    return logs


def load_otlp_json(name: str) -> list[Span]:
    """OTLP/JSON as the capture wrote it: hex ids, which protobuf's JSON parser reads as base64."""
    import base64

    data = json.loads((SPANS / name).read_text())

    def to_b64(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                    node[key] = base64.b64encode(bytes.fromhex(value)).decode()
                else:
                    to_b64(value)
        elif isinstance(node, list):
            for item in node:
                to_b64(item)

    to_b64(data)
    return spans_from_request(Parse(json.dumps(data), ExportTraceServiceRequest()))


def by_trace(spans: Iterable[Span]) -> dict[str, list[Span]]:
    grouped: dict[str, list[Span]] = {}
    for span in spans:
        grouped.setdefault(span.trace_id, []).append(span)
    return grouped


def readable_to_span(readable: Any) -> Span:
    """An OpenTelemetry SDK ReadableSpan as the store would give it back."""
    context = readable.context
    parent = readable.parent
    return Span(
        trace_id=f"{context.trace_id:032x}",
        span_id=f"{context.span_id:016x}",
        parent_span_id=f"{parent.span_id:016x}" if parent else "",
        name=readable.name,
        kind=readable.kind.value + 1,
        start_time_unix_nano=readable.start_time,
        end_time_unix_nano=readable.end_time,
        status_code=readable.status.status_code.value,
        status_message=readable.status.description or "",
        attributes={
            k: (list(v) if isinstance(v, tuple) else v) for k, v in (readable.attributes or {}).items()
        },
        resource_attributes=dict(readable.resource.attributes),
        scope_name=readable.instrumentation_scope.name if readable.instrumentation_scope else "",
        scope_version=(readable.instrumentation_scope.version or "")
        if readable.instrumentation_scope
        else "",
        events=tuple(
            SpanEvent(
                e.name,
                e.timestamp,
                {k: (list(v) if isinstance(v, tuple) else v) for k, v in e.attributes.items()},
            )
            for e in readable.events
        ),
    )
