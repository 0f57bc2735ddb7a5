"""The OTLP/JSON encoding -> protobuf bytes, item by item.

OTLP/JSON is the proto3 JSON mapping with two differences: trace and span ids
are hex, not base64, and enums may be integers. Each span (or log record) is read
on its own, so one that cannot be read (an id that is not hex; a value nested too
deep for the JSON mapping; a wrong type) is rejected alone, as OTLP partial success,
and the rest of its request is kept.
Plain functions of their arguments: they run on the decode threads or workers of
`ingest/workers.py`, never on the event loop.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

import orjson
from google.protobuf import json_format
from google.protobuf.message import Message
from opentelemetry.proto.collector.logs.v1 import logs_service_pb2
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

from evalkit.ingest.decode import Rejections

_SPAN_IDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")
_LINK_KEYS = ("links",)


class MalformedRequest(Exception):
    """The body is not a valid OTLP request; the client must not retry it."""


@dataclass(frozen=True)
class Shape:
    """Where a request's items sit: resource list, scope list, item list (both JSON spellings)."""

    new_request: type[Message]
    resources: tuple[str, str]
    scopes: tuple[str, str]
    items: tuple[str, str]
    item_word: str


TRACES = Shape(trace_service_pb2.ExportTraceServiceRequest, ("resourceSpans", "resource_spans"),
               ("scopeSpans", "scope_spans"), ("spans", "spans"), "span")
LOGS = Shape(logs_service_pb2.ExportLogsServiceRequest, ("resourceLogs", "resource_logs"),
             ("scopeLogs", "scope_logs"), ("logRecords", "log_records"), "log record")
SHAPES = {"traces": TRACES, "logs": LOGS}


def _hex_to_base64(node: dict[str, Any]) -> str | None:
    """The node's ids made base64 for the JSON mapping, in place; what is wrong with the first that
    is not hex, or None."""
    problem = None
    for key in _SPAN_IDS:
        value = node.get(key)
        if isinstance(value, str):
            try:
                node[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
            except ValueError:
                # Never emptied and kept: an empty parent id would make the span a root.
                shown = value if len(value) <= 48 else value[:45] + "..."
                problem = problem or (f"{key} {shown!r} is not hex; OTLP/JSON writes ids as hex digits (32 for a "
                                      "trace id, 16 for a span id), not base64")
    return problem


def _item_ids(item: dict[str, Any]) -> str | None:
    problem = _hex_to_base64(item)
    for key in _LINK_KEYS:
        links = item.get(key)
        if isinstance(links, list):
            for link in links:
                if isinstance(link, dict):
                    link_problem = _hex_to_base64(link)
                    problem = problem or (link_problem and f"a link's {link_problem}")
    return problem


def _pop_list(node: dict[str, Any], names: tuple[str, str]) -> list[Any]:
    found: list[Any] = []
    for name in dict.fromkeys(names):
        value = node.pop(name, None)
        if value is None:
            continue
        if not isinstance(value, list):
            raise MalformedRequest(f"`{name}` must be a list")
        found.extend(value)
    return found


def _item_name(item: Any) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return repr(name) if isinstance(name, str) else "(unnamed)"


def parse_json(body: bytes, kind: str) -> tuple[bytes, Rejections]:
    """The request as protobuf bytes, and the items rejected while reading it.

    `kind` is "traces" or "logs"."""
    shape = SHAPES[kind]
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in str(exc):
            raise MalformedRequest(f"body is nested deeper than OTLP/JSON can be read ({exc}); send it as "
                                   "protobuf (application/x-protobuf), which keeps any depth") from exc
        raise MalformedRequest(f"body is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise MalformedRequest("body must be a JSON object (an OTLP export request)")
    rejections = Rejections()
    request = shape.new_request()
    try:
        resources = _pop_list(document, shape.resources)
        json_format.ParseDict(document, request, ignore_unknown_fields=True)
        for resource in resources:
            if not isinstance(resource, dict):
                raise MalformedRequest(f"each of `{shape.resources[0]}` must be an object")
            scopes = _pop_list(resource, shape.scopes)
            resource_message = getattr(request, shape.resources[1]).add()
            json_format.ParseDict(resource, resource_message, ignore_unknown_fields=True)
            for scope in scopes:
                if not isinstance(scope, dict):
                    raise MalformedRequest(f"each of `{shape.scopes[0]}` must be an object")
                items = _pop_list(scope, shape.items)
                scope_message = getattr(resource_message, shape.scopes[1]).add()
                json_format.ParseDict(scope, scope_message, ignore_unknown_fields=True)
                kept = getattr(scope_message, shape.items[1])
                for item in items:
                    _read_item(item, kept, shape, rejections)
    except (json_format.ParseError, RecursionError, ValueError, TypeError) as exc:
        raise MalformedRequest(f"body is not an OTLP export request: {str(exc)[:300]}") from exc
    return request.SerializeToString(), rejections


def _read_item(item: Any, kept: Any, shape: Shape, rejections: Rejections) -> None:
    if not isinstance(item, dict):
        rejections.reject(f"{shape.item_word}: must be a JSON object")
        return
    bad_id = _item_ids(item)
    if bad_id:
        rejections.reject(f"{shape.item_word} {_item_name(item)}: {bad_id}")
        return
    message = kept.add()
    try:
        json_format.ParseDict(item, message, ignore_unknown_fields=True)
    except Exception as exc:  # the JSON mapping raises several kinds (ParseError, RecursionError, ...)
        del kept[len(kept) - 1]
        depth = _depth(item)
        if isinstance(exc, RecursionError) or depth > _MAX_JSON_DEPTH:
            rejections.reject(f"{shape.item_word} {_item_name(item)}: nested too deep to read as OTLP/JSON "
                              f"({depth} levels); send it as protobuf (application/x-protobuf), which keeps "
                              "any depth")
        else:
            # The mapping's message names every enclosing field first; the reason is at its end.
            reason = str(exc)
            reason = reason if len(reason) <= 240 else "..." + reason[-240:]
            rejections.reject(f"{shape.item_word} {_item_name(item)}: not an OTLP {shape.item_word} ({reason})")


# Past this many JSON levels, protobuf's runtime cannot build the message (its depth limit).
_MAX_JSON_DEPTH = 100


def _depth(node: Any) -> int:
    """Nesting depth of JSON data, without recursion."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, level = stack.pop()
        deepest = max(deepest, level)
        if isinstance(current, dict):
            stack.extend((child, level + 1) for child in current.values())
        elif isinstance(current, list):
            stack.extend((child, level + 1) for child in current)
    return deepest
