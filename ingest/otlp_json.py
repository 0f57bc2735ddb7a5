"""The OTLP/JSON encoding -> protobuf messages.

OTLP/JSON is the proto3 JSON mapping with two differences: trace and span ids
are hex, not base64, and enums may be integers. Ids that are not valid hex are
emptied so that the span is rejected on its own rather than failing its request.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id"})


class MalformedRequest(Exception):
    """The body is not a valid OTLP request; the client must not retry it."""


def _hex_ids_to_base64(node: Any) -> Any:
    if isinstance(node, dict):
        out = {}
        for key, value in node.items():
            if key in _ID_KEYS and isinstance(value, str):
                try:
                    out[key] = base64.b64encode(bytes.fromhex(value)).decode("ascii")
                except ValueError:
                    out[key] = ""
            else:
                out[key] = _hex_ids_to_base64(value)
        return out
    if isinstance(node, list):
        return [_hex_ids_to_base64(v) for v in node]
    return node


def parse_json(body: bytes, message: Message) -> Message:
    try:
        document = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise MalformedRequest(f"body is not JSON: {exc}") from exc
    if not isinstance(document, dict):
        raise MalformedRequest("body must be a JSON object (an OTLP export request)")
    try:
        json_format.ParseDict(_hex_ids_to_base64(document), message, ignore_unknown_fields=True)
    except json_format.ParseError as exc:
        raise MalformedRequest(f"body is not an OTLP export request: {exc}") from exc
    return message
