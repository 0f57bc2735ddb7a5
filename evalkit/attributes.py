"""How OTLP attribute values are kept in the store, losslessly, and read back.

A value is stored as text in a `Map(String, String)`; its OTLP type goes in a
parallel `Map(String, UInt8)` unless it is a string (the common case, so the
type map stays small). Arrays and kvlists keep every nested type, bytes included:
spans store them as the base64 of their protobuf message (ClickHouse reads span
exports itself and keeps the nested bytes as they came, see
`ingest/export_schema.py`); log records, decoded in Python, as OTLP/JSON
`AnyValue`s. Both decode to the same Python values.
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

STRING, INT, DOUBLE, BOOL, BYTES, ARRAY, KVLIST = 1, 2, 3, 4, 5, 6, 7
ARRAY_PROTOBUF, KVLIST_PROTOBUF = 8, 9
def encode_any_value(value: Any) -> tuple[str, int]:
    """(text, type) of a protobuf `AnyValue`."""
    which = value.WhichOneof("value")
    if which == "string_value":
        return value.string_value, STRING
    if which == "int_value":
        return str(value.int_value), INT
    if which == "double_value":
        return repr(value.double_value), DOUBLE
    if which == "bool_value":
        return ("true" if value.bool_value else "false"), BOOL
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value).decode("ascii"), BYTES
    if which == "array_value":
        return json.dumps(any_value_json(value), separators=(",", ":")), ARRAY
    if which == "kvlist_value":
        return json.dumps(any_value_json(value), separators=(",", ":")), KVLIST
    return "", STRING  # an empty AnyValue


def any_value_json(value: Any) -> dict[str, Any]:
    which = value.WhichOneof("value")
    if which == "string_value":
        return {"stringValue": value.string_value}
    if which == "int_value":
        return {"intValue": str(value.int_value)}
    if which == "double_value":
        d = value.double_value
        return {"doubleValue": d if math.isfinite(d) else repr(d)}
    if which == "bool_value":
        return {"boolValue": value.bool_value}
    if which == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode("ascii")}
    if which == "array_value":
        return {"arrayValue": {"values": [any_value_json(v) for v in value.array_value.values]}}
    if which == "kvlist_value":
        return {"kvlistValue": {"values": [{"key": kv.key, "value": any_value_json(kv.value)}
                                           for kv in value.kvlist_value.values]}}
    return {}


def json_any_value_to_python(node: dict[str, Any]) -> Any:
    if "stringValue" in node:
        return node["stringValue"]
    if "intValue" in node:
        return int(node["intValue"])
    if "doubleValue" in node:
        return float(node["doubleValue"])
    if "boolValue" in node:
        return bool(node["boolValue"])
    if "bytesValue" in node:
        return base64.b64decode(node["bytesValue"])
    if "arrayValue" in node:
        return [json_any_value_to_python(v) for v in node["arrayValue"].get("values", [])]
    if "kvlistValue" in node:
        return {kv["key"]: json_any_value_to_python(kv.get("value", {}))
                for kv in node["kvlistValue"].get("values", [])}
    return None


def _protobuf_value_to_python(data: bytes, type_code: int) -> Any:
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.common.v1 import common_pb2

    value = common_pb2.AnyValue()
    try:
        if type_code == ARRAY_PROTOBUF:
            value.array_value.ParseFromString(data)
        else:
            value.kvlist_value.ParseFromString(data)
    except DecodeError:
        # Nested past protobuf's recursion limit (ingest keeps any depth): read the wire format.
        return _wire_list(data) if type_code == ARRAY_PROTOBUF else _wire_kvlist(data)
    return json_any_value_to_python(any_value_json(value))


def _wire_fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of one protobuf message: varints as int, fixed64 as
    bytes, length-delimited as bytes."""
    fields: list[tuple[int, int, Any]] = []
    at = 0

    def varint() -> int:
        nonlocal at
        value = shift = 0
        while True:
            byte = data[at]
            at += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    while at < len(data):
        tag = varint()
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            fields.append((number, wire, varint()))
        elif wire == 1:
            fields.append((number, wire, data[at:at + 8]))
            at += 8
        elif wire == 2:
            length = varint()
            fields.append((number, wire, data[at:at + length]))
            at += length
        elif wire == 5:
            at += 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    return fields


def _wire_any_value(data: bytes) -> Any:
    import struct

    value: Any = None
    for number, _, field in _wire_fields(data):
        if number == 1:
            value = field.decode("utf-8", "replace")
        elif number == 2:
            value = bool(field)
        elif number == 3:
            value = field - (1 << 64) if field >= 1 << 63 else field
        elif number == 4:
            value = struct.unpack("<d", field)[0]
        elif number == 5:
            value = _wire_list(field)
        elif number == 6:
            value = _wire_kvlist(field)
        elif number == 7:
            value = bytes(field)
    return value


def _wire_list(data: bytes) -> list[Any]:
    return [_wire_any_value(field) for number, _, field in _wire_fields(data) if number == 1]


def _wire_kvlist(data: bytes) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, _, field in _wire_fields(data):
        if number != 1:
            continue
        key, value = "", None
        for inner_number, _, inner in _wire_fields(field):
            if inner_number == 1:
                key = inner.decode("utf-8", "replace")
            elif inner_number == 2:
                value = _wire_any_value(inner)
        out[key] = value
    return out


def decode_value(text: str, type_code: int) -> Any:
    """Inverse of `encode_any_value`."""
    if type_code == STRING or type_code == 0:
        return text
    if type_code == INT:
        return int(text)
    if type_code == DOUBLE:
        return float(text)
    if type_code == BOOL:
        return text == "true"
    if type_code == BYTES:
        return base64.b64decode(text)
    if type_code in (ARRAY, KVLIST):
        return json_any_value_to_python(json.loads(text))
    if type_code in (ARRAY_PROTOBUF, KVLIST_PROTOBUF):
        return _protobuf_value_to_python(base64.b64decode(text), type_code)
    raise ValueError(f"unknown attribute type {type_code}")


def decode_attributes(values: dict[str, str], types: dict[str, int], *more: dict[str, str]) -> dict[str, Any]:
    """Attributes as Python values; `more` are further text maps (payloads) under the same types."""
    # Most values are strings (no entry in `types`): copy the maps whole, then decode the typed
    # few, rather than look every key up. Same keys, order and values as a key-by-key loop.
    out: dict[str, Any] = dict(values)
    for source in more:
        out.update(source)
    for key, type_code in types.items():
        if type_code != STRING and type_code != 0 and key in out:
            try:
                out[key] = decode_value(out[key], type_code)
            except ValueError:
                # A key sent twice under two types (OTLP forbids it; the Codex CLI's tool spans send `thread.id` as an
                # int, then as a string): the text map keeps the last value, the type map the last non-string type.
                # The text is the last value as sent: kept, as a collector's last-wins attribute map would.
                pass
    return out


def json_safe(value: Any) -> Any:
    """An attribute value as JSON data: bytes become {"bytes_base64": ...}, containers recursed.

    Attribute values are anyone's input and OTLP allows bytes at any depth; a document that
    carries one (a step's `extra`, a tool call's arguments) must still serialise.
    """
    kind = type(value)
    if kind is str or kind is int or kind is float or kind is bool or value is None:
        return value  # most values: checked first, as the fall-through below returns them
    if isinstance(value, bytes):
        return {"bytes_base64": base64.b64encode(value).decode("ascii")}
    if kind is dict:
        for k, v in value.items():
            item = type(v)
            if type(k) is not str or not (item is str or item is int or item is float or item is bool or v is None):
                break
        else:
            return dict(value)  # string keys, scalar values (tool arguments, mostly): what the comprehension makes
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    return value
