"""A page of a dataset's versions (`GET /api/datasets/{dataset}/versions`): at most `limit` versions, newest first,
from a keyset cursor (the page's last version) or an offset, as the API's other lists page."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from .datasets import Datasets, DatasetVersion

# A push time in milliseconds is an Int64 column value: a cursor naming more is none this service gave out.
_MAX_INT64 = 2**63 - 1


class BadCursor(ValueError):
    pass


@dataclass
class VersionPage:
    versions: list[DatasetVersion]
    more: bool

    @property
    def next_cursor(self) -> str | None:
        return encode_cursor(self.versions[-1]) if self.more and self.versions else None


def encode_cursor(version: DatasetVersion) -> str:
    raw = json.dumps({"p": round(version.pushed_at * 1000), "v": version.version}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[int, str]:
    """The (push time in milliseconds, version) after which the next page starts, from `encode_cursor`'s cursor."""
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        pushed_ms, version = data["p"], data["v"]
    except (ValueError, TypeError, KeyError, binascii.Error) as exc:
        raise BadCursor("cursor is not one this service gave out; start again without it") from exc
    if not (type(pushed_ms) is int and 0 <= pushed_ms <= _MAX_INT64 and isinstance(version, str)):
        raise BadCursor("cursor is not one this service gave out; start again without it")
    return pushed_ms, version


def read_page(datasets: Datasets, workspace: str, name: str, *, limit: int, after: tuple[int, str] | None,
              offset: int) -> VersionPage:
    got = datasets.versions_page(workspace, name, limit=limit + 1, after=after, offset=offset)
    return VersionPage(got[:limit], len(got) > limit)
