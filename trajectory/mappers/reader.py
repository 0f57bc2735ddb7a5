"""Attribute access that remembers which attributes a mapper used, so the rest can be reported."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from evalkit.trajectory.span import Span

if TYPE_CHECKING:
    from evalkit.trajectory.mappers.messages import MessageMemo

try:  # part of the server install; the standard library reads the same JSON, about three times slower
    import orjson
except ImportError:  # pragma: no cover - a client-only install
    orjson = None  # type: ignore[assignment]

_INDEX_SEGMENT = re.compile(r"(?<=\.)\d+(?=\.|$)")


def loads(text: str) -> Any:
    """`json.loads`, through orjson when it takes the text.

    orjson refuses what the standard library accepts beyond strict JSON (NaN, Infinity, lone
    surrogates): those go to `json.loads`. One difference remains: an integer outside the 64-bit
    range comes back from orjson as a float (as JavaScript reads it; the standard library keeps it
    exact). Checking every payload for such digits would cost more than the parse saves, and
    instrumentations in JavaScript cannot write one exactly anyway. Message payloads are most of
    a session's bytes: this is where they are parsed.
    """
    if orjson is not None:
        try:
            return orjson.loads(text)
        except ValueError:
            pass
    return json.loads(text)


def parse_json(value: Any) -> Any:
    """The value decoded if it is a JSON string of an object or array (or JSON scalar), else unchanged."""
    if type(value) is not str:  # the usual value is text: one check for it, not two
        if not isinstance(value, bytes | str):
            return value
        if isinstance(value, bytes):
            try:
                value = value.decode("utf-8")
            except UnicodeDecodeError:
                return value
    if isinstance(value, str):
        if value[:1] in ("{", "["):
            # The usual case (a JSON message list or object, no leading blank): skip copying a
            # payload of many kilobytes just to strip it; json.loads allows surrounding whitespace.
            try:
                return loads(value)
            except ValueError:
                return value
        stripped = value.strip()
        if stripped[:1] in ("{", "[", '"') or stripped in ("null", "true", "false"):
            try:
                return loads(stripped)
            except ValueError:
                return value
    return value


def as_text(value: Any) -> str | None:
    """An attribute value as text (None stays None): strings as they are, bytes decoded, else JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return json.dumps(value, ensure_ascii=False, default=str)


def as_int(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            try:
                number = float(value)
            except ValueError:
                return None
            return int(number) if number.is_integer() else None
    return None


def as_decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | str):
        try:
            # Through str so 0.1 stays 0.1 and not its binary expansion.
            number = Decimal(str(value))
        except InvalidOperation:
            return None
        return number if number.is_finite() else None  # NaN / ±Infinity: unknown
    return None


def pattern_of(key: str) -> str:
    """`llm.input_messages.3.message.role` -> `llm.input_messages.*.message.role`."""
    return _INDEX_SEGMENT.sub("*", key)


def unflatten(flat: dict[str, Any]) -> dict[str, Any]:
    """Nest dotted keys: {"0.message.role": "user"} -> {"0": {"message": {"role": "user"}}}.

    Numeric segments stay dict keys, so sparse indices (OpenInference writes
    `tool_calls.1` when it dropped part 0) survive; `indexed()` lists them in order.
    """
    root: dict[str, Any] = {}
    for key, value in flat.items():
        node = root
        segments = key.split(".")
        for segment in segments[:-1]:
            child = node.get(segment)
            if not isinstance(child, dict):
                child = {} if child is None else {"": child}
                node[segment] = child
            node = child
        last = segments[-1]
        if isinstance(node.get(last), dict):
            node[last][""] = value
        else:
            node[last] = value
    return root


def indexed(node: Any) -> list[Any]:
    """The values of a dict keyed by list indices, in index order (gaps skipped)."""
    if isinstance(node, list):
        return node
    if not isinstance(node, dict):
        return []
    numbered = [(int(key), value) for key, value in node.items() if key.isdigit()]
    return [value for _, value in sorted(numbered, key=lambda item: item[0])]


def dig(node: Any, *path: str) -> Any:
    for segment in path:
        if not isinstance(node, dict):
            return None
        node = node.get(segment)
    if isinstance(node, dict) and "" in node:
        return node[""]
    return node


class SpanReader:
    """Reads a span's attributes and records every key read, consumed or deliberately ignored."""

    def __init__(self, span: Span, memo: MessageMemo | None = None) -> None:
        self.span = span
        self.attributes = span.attributes
        self.used: set[str] = set()
        # Names of the span's events a mapper read: the attributes of the others are unmapped.
        self.events_read: set[str] = set()
        # The session's messages read so far, for the mappers' `parse_messages(..., memo=reader.memo)`.
        self.memo = memo

    def read_events(self, *names: str) -> None:
        self.events_read.update(names)

    def has(self, *keys: str) -> bool:
        return any(key in self.attributes for key in keys)

    def has_prefix(self, prefix: str) -> bool:
        return any(key.startswith(prefix) for key in self.attributes)

    def get(self, *keys: str) -> Any:
        """The first of `keys` present (all of them are marked used)."""
        found = None
        for key in keys:
            if key in self.attributes:
                self.used.add(key)
                if found is None:
                    found = self.attributes[key]
        return found

    def text(self, *keys: str) -> str | None:
        return as_text(self.get(*keys))

    def integer(self, *keys: str) -> int | None:
        found = None
        for key in keys:
            if key in self.attributes:
                # The keys are spellings of one value: reading one accounts for all of them.
                self.used.add(key)
                if found is None:
                    found = as_int(self.attributes[key])
        return found

    def decoded(self, *keys: str) -> Any:
        return parse_json(self.get(*keys))

    def prefixed(self, prefix: str) -> dict[str, Any]:
        """Attributes under `prefix` with the prefix removed (all marked used)."""
        found = {
            key[len(prefix) :]: value for key, value in self.attributes.items() if key.startswith(prefix)
        }
        self.used.update(prefix + suffix for suffix in found)
        return found

    def consume(self, *keys: str) -> None:
        attributes, used = self.attributes, self.used
        for key in keys:
            if key in attributes:
                used.add(key)

    def consume_prefix(self, *prefixes: str) -> None:
        for prefix in prefixes:
            self.used.update(key for key in self.attributes if key.startswith(prefix))

    def unused(self) -> set[str]:
        return set(self.attributes) - self.used


def first_present(values: Iterable[Any]) -> Any:
    for value in values:
        if value is not None and value != "":
            return value
    return None
