"""Content-addressed blobs (fixture files, artifacts): bytes in a blob store, an index per workspace in ClickHouse.

The bytes live once under `ab/abcdef…` in the store (a directory, `<data-dir>/blobs`
by default, or an S3-compatible bucket: `scoring/blob_s3.py`, chosen by
`scoring/blob_settings.py`) whatever the number of workspaces holding them; the
`blobs` table says which workspace may read which hash, so a hash learnt
elsewhere opens nothing.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from evalkit.api import ApiError
from evalkit.store import Store

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class BlobError(ValueError):
    """A blob request that cannot work; the message says why."""


def check_sha256(value: str) -> str:
    if not _SHA256.match(value):
        raise BlobError(f"{value!r} is not a SHA-256 in hex (64 lower-case hex digits)")
    return value


class BlobMissing(BlobError):
    """The store has no object under that hash (it was indexed, then removed behind our back)."""


class BlobStoreError(ApiError):
    """The blob store cannot be used as configured (bucket missing, access denied, unreachable).

    An ApiError (503) so that any route touching blobs answers with what to fix, not a 500.
    """

    def __init__(self, message: str) -> None:
        super().__init__(503, message)


def verify(sha256: str, data: bytes) -> None:
    """Refuse bytes that do not hash to their name: the one rule every store keeps."""
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise BlobError(f"the body hashes to {actual}, not {sha256}; upload the file under its own hash")


def blob_key(sha256: str) -> str:
    """`ab/abcdef…`: the same layout in a directory and a bucket, so one copies to the other as is."""
    return f"{sha256[:2]}/{sha256}"


class BlobStore(Protocol):
    """Where the bytes are. Keys are SHA-256 hashes already checked by `check_sha256`."""

    @property
    def description(self) -> str: ...

    def has(self, sha256: str) -> bool: ...

    def which_exist(self, hashes: list[str]) -> set[str]:
        """The hashes among `hashes` the store has (a dataset push asks for all its fixtures at once)."""
        ...

    def write(self, sha256: str, data: bytes) -> None:
        """Store `data` under `sha256`; BlobError when it does not hash to it; a no-op when present."""

    def read(self, sha256: str) -> bytes:
        """The bytes; BlobMissing when absent."""
        ...


@dataclass(frozen=True)
class BlobInfo:
    sha256: str
    size: int
    created_at: float


class BlobDirectory:
    """Where the bytes are: a directory, two-level fan-out by hash prefix."""

    def __init__(self, root: Path) -> None:
        self.root = root

    @property
    def description(self) -> str:
        return f"directory {self.root}"

    def path(self, sha256: str) -> Path:
        return self.root / blob_key(sha256)

    def has(self, sha256: str) -> bool:
        return self.path(sha256).is_file()

    def which_exist(self, hashes: list[str]) -> set[str]:
        return {h for h in hashes if self.has(h)}

    def write(self, sha256: str, data: bytes) -> None:
        verify(sha256, data)
        target = self.path(sha256)
        if target.is_file():
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        # Write then rename: a reader never sees half a file under a hash.
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".tmp-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, target)

    def read(self, sha256: str) -> bytes:
        try:
            return self.path(sha256).read_bytes()
        except FileNotFoundError as exc:
            raise BlobMissing(f"{self.description} has no blob {sha256}") from exc


class Blobs:
    def __init__(self, store: Store, objects: BlobStore) -> None:
        self.store = store
        self.objects = objects

    def put(self, workspace: str, sha256: str, data: bytes, *, by: str, now: float) -> tuple[BlobInfo, bool]:
        check_sha256(sha256)
        # Hash first: a wrong body is refused before any store (or network) is touched.
        verify(sha256, data)
        existing = self.info(workspace, sha256)
        self.objects.write(sha256, data)
        if existing is not None:
            return existing, False
        self.store.insert("blobs", [[workspace], [sha256], [len(data)], [by], [int(now * 1000)]],
                          ["workspace", "sha256", "size", "created_by", "created_at"])
        return BlobInfo(sha256, len(data), now), True

    def info(self, workspace: str, sha256: str) -> BlobInfo | None:
        check_sha256(sha256)
        rows = self.store.query(
            "SELECT sha256, size, toUnixTimestamp64Milli(created_at) FROM blobs FINAL "
            "WHERE workspace = {w:String} AND sha256 = {h:String}", {"w": workspace, "h": sha256})
        if not rows or not self.objects.has(sha256):
            return None
        return BlobInfo(rows[0][0], int(rows[0][1]), rows[0][2] / 1000)

    def present(self, workspace: str, hashes: list[str]) -> set[str]:
        if not hashes:
            return set()
        rows = self.store.query("SELECT sha256 FROM blobs FINAL WHERE workspace = {w:String} "
                                "AND sha256 IN {h:Array(String)}", {"w": workspace, "h": hashes})
        return self.objects.which_exist([r[0] for r in rows])

    def read(self, workspace: str, sha256: str) -> bytes | None:
        if self.info(workspace, sha256) is None:
            return None
        try:
            return self.objects.read(sha256)
        except BlobMissing:  # removed between the check and the read: absent, as for info()
            return None

    def list(self, workspace: str, prefix: str = "", limit: int = 1000) -> list[BlobInfo]:
        rows = self.store.query(
            "SELECT sha256, size, toUnixTimestamp64Milli(created_at) FROM blobs FINAL WHERE workspace = {w:String} "
            "AND startsWith(sha256, {p:String}) ORDER BY sha256 LIMIT {n:UInt32}",
            {"w": workspace, "p": prefix, "n": limit})
        return [BlobInfo(r[0], int(r[1]), r[2] / 1000) for r in rows]
