"""Which blob store the scoring service uses, read once at start from settings passed in.

- `EVALKIT_BLOB_URL`: unset, the directory `<data-dir>/blobs`; a path or `file:///path`, that
  directory; `s3://bucket/prefix`, an S3-compatible bucket.
- `EVALKIT_S3_ENDPOINT_URL`: the S3 API of MinIO, R2, … (unset: AWS S3).
- `EVALKIT_S3_REGION`: the signing region (default `us-east-1`; R2 takes `auto`).
- `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_SESSION_TOKEN`: credentials (unset: boto3's
  own chain: profile, instance role).

Each is looked up in the settings' `extra` first (`blob_url` or the variable's name), then the environment.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from .blob_s3 import S3BlobStore, S3Location
from .blobs import BlobDirectory, BlobStore


class BlobSettingsError(ValueError):
    """A blob setting that names no usable store; the message says how to write it."""


def _getter(extra: Mapping[str, str], env: Mapping[str, str]) -> Callable[[str], str | None]:
    def get(name: str) -> str | None:
        return extra.get(name.lower().removeprefix("evalkit_")) or extra.get(name) or env.get(name) or None
    return get


def blob_store_from(env: Mapping[str, str], data_dir: Path, extra: Mapping[str, str] | None = None) -> BlobStore:
    """The blob store these settings name; BlobSettingsError for a URL that names none."""
    get = _getter(extra or {}, env)
    url = get("EVALKIT_BLOB_URL")
    if not url:
        return BlobDirectory(data_dir / "blobs")
    parts = urlsplit(url)
    if parts.scheme == "s3":
        if not parts.netloc:
            raise BlobSettingsError(f"EVALKIT_BLOB_URL={url!r} names no bucket; write s3://bucket/prefix")
        prefix = parts.path.strip("/")
        return S3BlobStore(S3Location(
            bucket=parts.netloc, prefix=f"{prefix}/" if prefix else "",
            endpoint_url=get("EVALKIT_S3_ENDPOINT_URL"), region=get("EVALKIT_S3_REGION"),
            access_key_id=get("AWS_ACCESS_KEY_ID"), secret_access_key=get("AWS_SECRET_ACCESS_KEY"),
            session_token=get("AWS_SESSION_TOKEN")))
    if parts.scheme == "file":
        return BlobDirectory(Path(parts.path))
    if parts.scheme == "":
        return BlobDirectory(Path(url))
    raise BlobSettingsError(f"EVALKIT_BLOB_URL={url!r}: a blob store is a directory (a path or file:///path) or "
                            "an S3-compatible bucket (s3://bucket/prefix, with EVALKIT_S3_ENDPOINT_URL for "
                            "MinIO, R2, …)")
