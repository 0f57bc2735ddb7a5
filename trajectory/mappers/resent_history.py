"""A JSON message list that re-sends the previous call's messages, decoded by what is new in it.

An agent loop's every LLM call carries the conversation so far (or its last N messages) in one
attribute: a session of n calls holds ~n²/2 messages, nearly all of them text the call before
held too. Parsing each attribute whole made JSON decoding the largest cost of such a session.
Here the previous list decoded is the hint: where this text holds, verbatim, a run of that
list's elements (their text and the separators between them), those elements are taken as
they were decoded (the same objects); only the rest is parsed.

The result is what `json`-decoding the whole text gives (`reader.loads`): a JSON array's
elements do not depend on one another, a run of text equal to elements that parsed before
parses to equal values, and the text around them is checked to be array syntax (separators,
the closing bracket, nothing after it). A text this cannot read so (not strictly JSON, say)
is handed back to be parsed whole as before.

Which elements were taken from the list before is told too (`ResentLists.resent`), so what reads
the elements next (`MessageMemo.parse_all`, the build's fingerprints) can take what it made of
those from what it made of the list before, and do its work only for the rest.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple, TypeVar

from evalkit.trajectory.mappers.reader import orjson

_BLANK = " \t\n\r"
_SCANNER = json.JSONDecoder()  # finds where a new element ends (orjson parses it)
# How many of the previous list's elements may be missing before the next one found here.
_LOOK_AHEAD = 8
# A list longer than this that starts with none of the previous list's elements is parsed whole
# (in C) rather than element by element: it re-sends something else (another agent's history).
_UNHINTED_LIMIT = 65_536
# Lists shorter than this are parsed whole (and are no list before for the next).
_SHORT = 4096
# How much of the start two lists must share for the second to be read against the first.
_SAME_START = 200
# From this long a list that starts otherwise (a window of the last N messages, no task kept) is
# looked for the list before's last message in.
_LONG = 8192

_Value = TypeVar("_Value")


class Resent(NamedTuple):
    """Which of a list's elements are, object for object, elements of the list before it."""

    items: list[Any]
    before: list[Any]
    # (at, first, stop): `items[at : at + stop - first]` is `before[first:stop]`; in order, apart.
    runs: list[tuple[int, int, int]]

    def carry(self, of_before: list[_Value]) -> list[_Value | None]:
        """What `of_before` (one value per element of `before`) says of each re-sent element, at its
        place in `items`; None at the others (`rest`)."""
        carried: list[_Value | None] = [None] * len(self.items)
        for at, first, stop in self.runs:
            carried[at : at + stop - first] = of_before[first:stop]
        return carried

    def rest(self) -> list[int]:
        """The indices of the elements not taken from `before`."""
        rest: list[int] = []
        position = 0
        for at, first, stop in self.runs:
            rest.extend(range(position, at))
            position = at + stop - first
        rest.extend(range(position, len(self.items)))
        return rest


class _Decoded:
    """One decoded list: its text, each element's span of it (None until asked for), the elements,
    the runs of them taken from the list before (`Resent.runs`)."""

    __slots__ = ("ends", "items", "runs", "starts", "text")

    def __init__(self, text: str, starts: list[int] | None, ends: list[int] | None, items: list[Any],
                 runs: list[tuple[int, int, int]] | None = None) -> None:
        self.text = text
        self.starts = starts
        self.ends = ends
        self.items = items
        self.runs = runs or []

    def spans(self) -> bool:
        """Whether each element's span of the text is known, found now if it was not (False: not found)."""
        if self.starts is None:
            try:
                found = _decode(self.text, None, scan_only=True)
            except (ValueError, RecursionError):
                found = None
            if found is None or len(found.starts or ()) != len(self.items):
                self.items = []  # no hint to give
                self.starts = self.ends = []
                return False
            self.starts, self.ends = found.starts, found.ends
        return bool(self.items)


class ResentLists:
    """Decodes message lists one after another, each against the one before (see the module)."""

    def __init__(self) -> None:
        self._last: _Decoded | None = None
        # The list `decode` gave last, if it took elements from the one before.
        self.resent: Resent | None = None

    def decode(self, text: str) -> list[Any] | None:
        """The JSON array `text` decoded, or None: parse it whole (`reader.parse_json`) instead."""
        self.resent = None
        if len(text) < _SHORT or orjson is None or text[:1] != "[":
            return None  # a short list costs less to parse whole than to look for the list before in
        last = self._last
        try:
            if last is not None and _may_resend(text, last.text) and last.spans():
                decoded = _decode(text, last)
                if decoded is not None and decoded.runs:
                    self.resent = Resent(decoded.items, last.items, decoded.runs)
            else:
                # Nothing to take from the list before: parsed whole, in C; where its elements are in
                # the text is found only if the next list re-sends them.
                items = orjson.loads(text)
                decoded = _Decoded(text, None, None, items) if type(items) is list else None
        except (ValueError, RecursionError):  # not strict JSON (NaN, a lone surrogate, ...)
            return None
        if decoded is None:
            return None
        self._last = decoded
        return decoded.items


def _may_resend(text: str, last: str) -> bool:
    """A cheap first look, before finding where the elements of the list before are: a list re-sending
    it starts as it does (the task, the system prompt), or, long, holds its last message."""
    length = min(len(text), len(last), _SAME_START)
    if text[:length] == last[:length]:
        return True
    if len(text) < _LONG or len(last) < _LONG:
        return False  # short lists are parsed whole in C for less than finding their elements costs
    end = last.rstrip(_BLANK)
    return end[-_SAME_START - 1 : -1] in text


def skip_blank(text: str, position: int) -> int:
    while position < len(text) and text[position] in _BLANK:
        position += 1
    return position


def _decode(text: str, last: _Decoded | None, *, scan_only: bool = False) -> _Decoded | None:
    """`text` decoded against `last`'s elements; `scan_only`: where its elements are, not what (no items)."""
    starts: list[int] = []
    ends: list[int] = []
    items: list[Any] = []
    runs: list[tuple[int, int, int]] = []
    position = skip_blank(text, 1)
    if position < len(text) and text[position] == "]":
        return _closed(text, position, starts, ends, items, runs)
    hint = 0  # the next element of `last` that may come next here
    while True:
        run = _run_at(text, position, last, hint) if last is not None else None
        if run is not None:
            assert last is not None
            first, stop = run
            assert last.starts is not None and last.ends is not None
            shift = position - last.starts[first]
            runs.append((len(starts), first, stop))
            starts.extend([s + shift for s in last.starts[first:stop]])
            ends.extend([e + shift for e in last.ends[first:stop]])
            items.extend(last.items[first:stop])
            end = ends[-1]
            hint = stop
        else:
            if not starts and last is not None and len(text) > _UNHINTED_LIMIT:
                return None
            _, end = _SCANNER.raw_decode(text, position)  # ValueError: not JSON here
            if not scan_only:
                items.append(orjson.loads(text[position:end]))  # ValueError: not strict JSON
            starts.append(position)
            ends.append(end)
        position = skip_blank(text, end)
        if position >= len(text):
            return None  # no closing bracket: not an array
        if text[position] == "]":
            return _closed(text, position, starts, ends, items, runs)
        if text[position] != ",":
            return None
        position = skip_blank(text, position + 1)


def _closed(text: str, position: int, starts: list[int], ends: list[int], items: list[Any],
            runs: list[tuple[int, int, int]]) -> _Decoded | None:
    if text[position + 1 :].strip(_BLANK):
        return None  # something after the array: not JSON
    return _Decoded(text, starts, ends, items, runs)


def _run_at(text: str, position: int, last: _Decoded, hint: int) -> tuple[int, int] | None:
    """Elements `first:stop` of `last` whose text (separators included) is `text`'s from `position`:
    the longest such run, `first` the first of `last`'s next `_LOOK_AHEAD` elements from `hint` on
    that is there (a window of the last N messages drops the oldest few each call)."""
    count = len(last.items)
    lasts, starts, ends = last.text, last.starts, last.ends
    assert starts is not None and ends is not None  # `_Decoded.spans` found them
    for first in range(hint, min(count, hint + _LOOK_AHEAD)):
        start = starts[first]
        if not text.startswith(lasts[start : ends[first]], position):
            continue
        # The usual case first: all the rest re-sent, one comparison.
        if first == count - 1 or text.startswith(lasts[start : ends[count - 1]], position):
            return first, count
        matched, failed = first, count - 1  # the run through `matched` is there, through `failed` not
        while failed - matched > 1:
            middle = (matched + failed) // 2
            if text.startswith(lasts[start : ends[middle]], position):
                matched = middle
            else:
                failed = middle
        return first, matched + 1
    return None
