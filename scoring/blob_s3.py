"""The S3-compatible blob store (AWS S3, MinIO, Cloudflare R2, …) through boto3.

boto3 signs (SigV4), retries and splits large uploads into multipart; our own
HTTP code would get one of the three wrong. Its calls block: the routes run
them in threads (`asyncio.to_thread`), as they do the directory store's.
boto3 and botocore are imported where used, so that a server on the directory
store never pays their import (hundreds of milliseconds at start).
"""

from __future__ import annotations

import hashlib
import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from .blobs import BlobMissing, BlobStoreError, blob_key, verify

# "Not there" as S3 and its look-alikes say it: a HEAD has no body, so only the status code.
_ABSENT = {"404", "NoSuchKey", "NotFound"}
_NO_BUCKET = {"NoSuchBucket"}
# HEADs in flight at once for a batch lookup: a push of a thousand fixtures is a thousand round trips,
# seconds when overlapped; botocore's default connection pool holds 10.
_LOOKUPS = 10
_DENIED = {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled"}


@dataclass(frozen=True)
class S3Location:
    bucket: str
    prefix: str  # "" or ends with "/"
    endpoint_url: str | None = None
    region: str | None = None
    access_key_id: str | None = None
    secret_access_key: str | None = None
    session_token: str | None = None

    @property
    def url(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"


def _code(exc: Exception) -> str:
    response = getattr(exc, "response", None) or {}
    return str(response.get("Error", {}).get("Code", ""))


class S3BlobStore:
    """Blobs as objects `<prefix>ab/abcdef…` in one bucket; the same semantics as `BlobDirectory`."""

    def __init__(self, location: S3Location, client: Any = None) -> None:
        self.location = location
        self.client = client if client is not None else make_client(location)
        # HEAD answers a bare 404 for a missing key and a missing bucket alike: the first miss asks
        # which it is, once, so that a wrong bucket name is reported rather than read as "no blob".
        self._bucket_seen = False

    @property
    def description(self) -> str:
        return f"bucket {self.location.url}{self._where()}"

    def key(self, sha256: str) -> str:
        return self.location.prefix + blob_key(sha256)

    def _fail(self, exc: Exception, doing: str) -> BlobStoreError:
        """The error a caller sees when the store itself is at fault: what happened and what to do next."""
        from botocore.exceptions import ClientError

        bucket = self.location.bucket
        code = _code(exc) if isinstance(exc, ClientError) else ""
        if code in _NO_BUCKET:
            return self._no_bucket(doing)
        if code in _DENIED:
            return BlobStoreError(f"blob store: {doing}: access to bucket {bucket!r} denied ({code}); check "
                                  "AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY and the bucket policy, and "
                                  "EVALKIT_S3_REGION")
        return BlobStoreError(f"blob store: {doing} in {self.description} failed ({exc}); check "
                              "EVALKIT_S3_ENDPOINT_URL and that the store is up, then retry")

    def _no_bucket(self, doing: str) -> BlobStoreError:
        bucket = self.location.bucket
        return BlobStoreError(f"blob store: {doing}: bucket {bucket!r} does not exist{self._where()}; "
                              f"create bucket {bucket} or set EVALKIT_BLOB_URL to an existing one")

    def _where(self) -> str:
        return f" at {self.location.endpoint_url}" if self.location.endpoint_url else ""

    def check_bucket(self) -> None:
        """BlobStoreError unless the bucket exists and these credentials may use it."""
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_bucket(Bucket=self.location.bucket)
        except ClientError as exc:
            if _code(exc) in _ABSENT | _NO_BUCKET:  # HEAD on a bucket: a bare 404 means no bucket
                raise self._no_bucket("checking the bucket") from exc
            raise self._fail(exc, "checking the bucket") from exc
        except BotoCoreError as exc:
            raise self._fail(exc, "checking the bucket") from exc
        self._bucket_seen = True

    def has(self, sha256: str) -> bool:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            self.client.head_object(Bucket=self.location.bucket, Key=self.key(sha256))
        except ClientError as exc:
            if _code(exc) in _ABSENT:
                if not self._bucket_seen:
                    self.check_bucket()
                return False
            raise self._fail(exc, f"looking up blob {sha256}") from exc
        except BotoCoreError as exc:
            raise self._fail(exc, f"looking up blob {sha256}") from exc
        return True

    def which_exist(self, hashes: list[str]) -> set[str]:
        if len(hashes) <= 1:
            return {h for h in hashes if self.has(h)}
        with ThreadPoolExecutor(max_workers=_LOOKUPS) as pool:  # boto3 clients are thread-safe
            found = list(pool.map(self.has, hashes))
        return {h for h, there in zip(hashes, found, strict=True) if there}

    def write(self, sha256: str, data: bytes) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        verify(sha256, data)
        if self.has(sha256):  # content-addressed: the same key is the same bytes, never rewritten
            return
        try:
            # The managed transfer: one PUT for small bodies, multipart with retried parts for large ones.
            # A reader never sees half an object: S3 makes an object visible only once it is complete.
            self.client.upload_fileobj(io.BytesIO(data), self.location.bucket, self.key(sha256),
                                       ExtraArgs={"ContentType": "application/octet-stream"})
        except (BotoCoreError, ClientError) as exc:
            raise self._fail(exc, f"storing blob {sha256}") from exc
        except Exception as exc:  # s3transfer wraps client errors in its own failure types
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, BotoCoreError | ClientError):
                raise self._fail(cause, f"storing blob {sha256}") from exc
            raise

    def read(self, sha256: str) -> bytes:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            response = self.client.get_object(Bucket=self.location.bucket, Key=self.key(sha256))
            data: bytes = response["Body"].read()
        except ClientError as exc:
            if _code(exc) in _ABSENT:
                raise BlobMissing(f"{self.description} has no blob {sha256}") from exc
            raise self._fail(exc, f"reading blob {sha256}") from exc
        except BotoCoreError as exc:
            raise self._fail(exc, f"reading blob {sha256}") from exc
        # A bucket is writable by more than evalkit: bytes that no longer match their name are refused,
        # never served as the fixture a dataset pinned.
        actual = hashlib.sha256(data).hexdigest()
        if actual != sha256:
            raise BlobStoreError(f"blob store: object {self.key(sha256)} in {self.description} hashes to {actual}, "
                                 f"not {sha256}: it was changed outside evalkit; delete it and put the file again")
        return data


def make_client(location: S3Location) -> Any:
    import boto3
    from botocore.config import Config

    options: dict[str, Any] = {"retries": {"mode": "standard", "max_attempts": 5}}
    if location.endpoint_url:
        # MinIO, R2 and local servers: path-style URLs (no bucket sub-domain to resolve), and checksums
        # only where S3 requires them: the default CRC headers of recent boto3 are refused by some of them.
        options.update(s3={"addressing_style": "path"}, request_checksum_calculation="when_required",
                       response_checksum_validation="when_required")
    session = boto3.session.Session(aws_access_key_id=location.access_key_id,
                                    aws_secret_access_key=location.secret_access_key,
                                    aws_session_token=location.session_token,
                                    region_name=location.region or "us-east-1")
    return session.client("s3", endpoint_url=location.endpoint_url, config=Config(**options))
