"""Stored attributes read back as the values and types that were sent (the read side of evalkit/attributes.py)."""

from __future__ import annotations

from opentelemetry.proto.common.v1.common_pb2 import AnyValue, ArrayValue, KeyValue, KeyValueList

from evalkit.attributes import STRING, decode_attributes, encode_any_value


def _stored(values: dict[str, AnyValue]) -> tuple[dict[str, str], dict[str, int]]:
    """As ingest writes them: the text map, and a type map without the strings."""
    texts: dict[str, str] = {}
    types: dict[str, int] = {}
    for key, value in values.items():
        texts[key], type_code = encode_any_value(value)
        if type_code != STRING:
            types[key] = type_code
    return texts, types


def test_every_type_round_trips_and_keeps_its_order() -> None:
    sent = {
        "s": AnyValue(string_value="hello"),
        "i": AnyValue(int_value=-42),
        "d": AnyValue(double_value=0.1),
        "b": AnyValue(bool_value=False),
        "y": AnyValue(bytes_value=b"\x00\xff"),
        "a": AnyValue(array_value=ArrayValue(values=[AnyValue(int_value=1), AnyValue(string_value="x")])),
        "k": AnyValue(kvlist_value=KeyValueList(values=[KeyValue(key="n", value=AnyValue(double_value=2.5))])),
        "numeric-looking string": AnyValue(string_value="12"),
    }
    texts, types = _stored(sent)
    decoded = decode_attributes(texts, types)
    assert decoded == {
        "s": "hello", "i": -42, "d": 0.1, "b": False, "y": b"\x00\xff", "a": [1, "x"], "k": {"n": 2.5},
        "numeric-looking string": "12",
    }
    assert list(decoded) == list(sent)
    assert type(decoded["i"]) is int and type(decoded["d"]) is float


def test_payloads_join_the_map_under_the_same_types() -> None:
    # Large values are kept in a second map (payloads); their types are in the one type map.
    texts, types = _stored({"small": AnyValue(int_value=1), "typed big": AnyValue(int_value=7)})
    payload_texts, _ = _stored({"big": AnyValue(string_value="x" * 10_000)})
    del texts["typed big"]
    payload_texts["typed big"] = "7"
    decoded = decode_attributes(texts, types, payload_texts)
    assert decoded == {"small": 1, "big": "x" * 10_000, "typed big": 7}
    assert list(decoded) == ["small", "big", "typed big"]
    # A type for a key that is in neither map changes nothing.
    assert decode_attributes({"a": "1"}, {"gone": 2}) == {"a": "1"}
    # Type code 0 (unset) reads as a string.
    assert decode_attributes({"a": "1"}, {"a": 0}) == {"a": "1"}


def test_a_text_its_type_cannot_read_is_kept_as_sent() -> None:
    # A key sent twice under two types (the Codex CLI's `thread.id`: an int, then a string) leaves the last text
    # beside the int's type: the text is kept, not a ValueError for the whole session.
    assert decode_attributes({"thread.id": "01a25304-8846", "n": "3"}, {"thread.id": 2, "n": 2}) == {
        "thread.id": "01a25304-8846", "n": 3}
