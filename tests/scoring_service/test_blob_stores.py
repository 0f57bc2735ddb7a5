"""The blob stores: one set of behaviours run against the directory and an S3-compatible bucket.

The bucket is moto's S3 in server mode, started here on 127.0.0.1 and an ephemeral port: a real
HTTP S3 API standing in for the paid service (AWS S3, R2), reached through the same boto3 code
as in production.
"""

from __future__ import annotations

import asyncio
import hashlib
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto.server import ThreadedMotoServer

from evalkit.migrations import migrate
from evalkit.scoring.blob_s3 import S3BlobStore
from evalkit.scoring.blob_settings import BlobSettingsError, blob_store_from
from evalkit.scoring.blobs import BlobDirectory, BlobError, BlobMissing, Blobs, BlobStore, BlobStoreError
from evalkit.store import Store
from tests.scoring_service.conftest import start_service

CREDENTIALS = {"AWS_ACCESS_KEY_ID": "evalkit-test", "AWS_SECRET_ACCESS_KEY": "evalkit-test-secret"}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def s3_client(endpoint: str) -> Any:
    return boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                        aws_secret_access_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"])


def s3_env(endpoint: str, bucket: str, prefix: str = "fixtures") -> dict[str, str]:
    return {"EVALKIT_BLOB_URL": f"s3://{bucket}/{prefix}", "EVALKIT_S3_ENDPOINT_URL": endpoint,
            "EVALKIT_S3_REGION": "us-east-1", **CREDENTIALS}


def new_bucket(endpoint: str) -> str:
    bucket = "evalkit-" + uuid.uuid4().hex[:12]
    s3_client(endpoint).create_bucket(Bucket=bucket)
    return bucket


@pytest.fixture(params=["directory", "s3"])
def blob_store(request: pytest.FixtureRequest, tmp_path: Path) -> BlobStore:
    """Each backend as the settings build it: the default directory, or `s3://bucket/prefix`."""
    if request.param == "directory":
        made = blob_store_from({}, tmp_path)
        assert isinstance(made, BlobDirectory)
        return made
    endpoint = request.getfixturevalue("s3_endpoint")
    made = blob_store_from(s3_env(endpoint, new_bucket(endpoint)), tmp_path)
    assert isinstance(made, S3BlobStore)
    return made


# -- the same behaviours, both backends ---------------------------------------------------
def test_write_then_has_and_read(blob_store: BlobStore) -> None:
    data = b"fixture bytes \x00\xff"
    assert not blob_store.has(sha(data))
    blob_store.write(sha(data), data)
    assert blob_store.has(sha(data))
    assert blob_store.read(sha(data)) == data


def test_write_refuses_bytes_under_another_hash(blob_store: BlobStore) -> None:
    wrong = sha(b"something else")
    with pytest.raises(BlobError, match="upload the file under its own hash"):
        blob_store.write(wrong, b"the body")
    assert not blob_store.has(wrong)


def test_write_is_idempotent(blob_store: BlobStore) -> None:
    data = b"twice"
    blob_store.write(sha(data), data)
    blob_store.write(sha(data), data)
    assert blob_store.read(sha(data)) == data


def test_which_exist_of_many(blob_store: BlobStore) -> None:
    stored = [str(i).encode() for i in range(25)]
    for data in stored:
        blob_store.write(sha(data), data)
    asked = [sha(d) for d in stored] + [sha(b"absent %d" % i) for i in range(5)]
    assert blob_store.which_exist(asked) == {sha(d) for d in stored}
    assert blob_store.which_exist([]) == set()


def test_read_of_an_absent_blob_says_missing(blob_store: BlobStore) -> None:
    with pytest.raises(BlobMissing, match="has no blob"):
        blob_store.read(sha(b"never written"))


def test_empty_and_multipart_sized_blobs(blob_store: BlobStore) -> None:
    # 20 MiB is past boto3's multipart threshold (8 MiB): the S3 store uploads it in parts.
    for data in (b"", bytes(range(256)) * (20 * 1024 * 4)):
        blob_store.write(sha(data), data)
        assert blob_store.read(sha(data)) == data


def test_index_per_workspace(blob_store: BlobStore, store: Store) -> None:
    """Blobs (the ClickHouse index over a store): put, info, present, read and list, per workspace."""
    migrate(store)
    blobs = Blobs(store, blob_store)
    a, b = b"alpha", b"beta"
    info, created = blobs.put("acme", sha(a), a, by="alice", now=1_700_000_000.0)
    assert created and info.size == 5
    again, created = blobs.put("acme", sha(a), a, by="alice", now=1_700_000_100.0)
    assert not created and again.created_at == 1_700_000_000.0
    blobs.put("acme", sha(b), b, by="alice", now=1_700_000_000.0)
    with pytest.raises(BlobError, match="hashes to"):
        blobs.put("acme", sha(b"other"), a, by="alice", now=1.0)
    assert blobs.read("acme", sha(a)) == a
    # The bytes are stored once, but another workspace never put them: it sees nothing.
    assert blobs.read("other", sha(a)) is None and blobs.info("other", sha(a)) is None
    assert blobs.present("acme", [sha(a), sha(b), sha(b"absent")]) == {sha(a), sha(b)}
    assert [x.sha256 for x in blobs.list("acme")] == sorted([sha(a), sha(b)])
    assert [x.sha256 for x in blobs.list("acme", prefix=sha(a)[:3])] == [sha(a)]


# -- S3 only: what the bucket can do that a directory cannot ------------------------------
def test_missing_bucket_says_what_to_do(s3_endpoint: str, tmp_path: Path) -> None:
    made = blob_store_from(s3_env(s3_endpoint, "no-such-bucket-here"), tmp_path)
    with pytest.raises(BlobStoreError, match="create bucket no-such-bucket-here or set EVALKIT_BLOB_URL") as caught:
        made.has(sha(b"x"))
    assert caught.value.status == 503
    with pytest.raises(BlobStoreError, match="create bucket no-such-bucket-here"):
        made.write(sha(b"x"), b"x")


def test_unreachable_store_says_what_to_check(tmp_path: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port just freed: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    made = blob_store_from(s3_env(f"http://127.0.0.1:{port}", "bkt"), tmp_path)
    with pytest.raises(BlobStoreError, match="check EVALKIT_S3_ENDPOINT_URL and that the store is up"):
        made.has(sha(b"x"))


def test_objects_live_under_the_prefix_in_the_directory_layout(s3_endpoint: str, tmp_path: Path) -> None:
    bucket = new_bucket(s3_endpoint)
    made = blob_store_from(s3_env(s3_endpoint, bucket, "team/fixtures/"), tmp_path)
    made.write(sha(b"laid out"), b"laid out")
    keys = [o["Key"] for o in s3_client(s3_endpoint).list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys == [f"team/fixtures/{sha(b'laid out')[:2]}/{sha(b'laid out')}"]


def test_object_changed_outside_evalkit_is_refused(s3_endpoint: str, tmp_path: Path) -> None:
    bucket = new_bucket(s3_endpoint)
    made = blob_store_from(s3_env(s3_endpoint, bucket, ""), tmp_path)
    h = sha(b"original")
    made.write(h, b"original")
    s3_client(s3_endpoint).put_object(Bucket=bucket, Key=f"{h[:2]}/{h}", Body=b"tampered")
    with pytest.raises(BlobStoreError, match="changed outside evalkit"):
        made.read(h)


def test_settings_choose_the_store(tmp_path: Path) -> None:
    assert isinstance(blob_store_from({}, tmp_path), BlobDirectory)
    elsewhere = blob_store_from({"EVALKIT_BLOB_URL": str(tmp_path / "b")}, tmp_path)
    assert isinstance(elsewhere, BlobDirectory) and elsewhere.root == tmp_path / "b"
    # `extra` (the settings) wins over the environment.
    s3 = blob_store_from({"EVALKIT_BLOB_URL": str(tmp_path)}, tmp_path,
                         {"blob_url": "s3://bkt/a/b", "EVALKIT_S3_REGION": "auto"})
    assert isinstance(s3, S3BlobStore)
    assert (s3.location.bucket, s3.location.prefix, s3.location.region) == ("bkt", "a/b/", "auto")
    with pytest.raises(BlobSettingsError, match="names no bucket"):
        blob_store_from({"EVALKIT_BLOB_URL": "s3:///x"}, tmp_path)
    with pytest.raises(BlobSettingsError, match="s3://bucket/prefix"):
        blob_store_from({"EVALKIT_BLOB_URL": "gs://bkt/x"}, tmp_path)


# -- end to end: a service on the S3 backend ----------------------------------------------
async def test_service_on_s3_keeps_fixtures_in_the_bucket(s3_endpoint: str, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    bucket = new_bucket(s3_endpoint)
    for name, value in s3_env(s3_endpoint, bucket, "evalkit").items():
        monkeypatch.setenv(name, value)
    s = await start_service(tmp_path)
    try:
        data = b"invoice: 42 EUR"
        h = sha(data)
        await asyncio.to_thread(s.ok, "POST", "/api/workspaces", {"name": "acme"}, status=201)
        status, body = await asyncio.to_thread(s.raw, "PUT", f"/api/workspaces/acme/blobs/{h}", data)
        assert status == 201, body
        status, body = await asyncio.to_thread(s.raw, "PUT", f"/api/workspaces/acme/blobs/{sha(b'no')}", data)
        assert status == 400 and b"upload the file under its own hash" in body
        cases = [{"id": "c1", "input": {"q": "total?"}, "expected": "42",
                  "files": [{"name": "invoice.txt", "sha256": h}]},
                 {"id": "c2", "input": {"q": "gone"}, "files": [{"name": "gone.bin", "sha256": sha(b"gone")}]}]
        pushed = await asyncio.to_thread(s.ok, "POST", "/api/datasets/qa@acme", {"cases": cases}, status=201)
        assert [m["case_id"] for m in pushed["missing_files"]] == ["c2"]

        # Served back over the blob routes, and kept in the bucket, not in the data directory.
        status, got = await asyncio.to_thread(s.raw, "GET", f"/api/workspaces/acme/blobs/{h}", None)
        assert status == 200 and got == data
        status, _ = await asyncio.to_thread(s.raw, "HEAD", f"/api/workspaces/acme/blobs/{h}", None)
        assert status == 200
        status, _ = await asyncio.to_thread(s.raw, "HEAD", f"/api/workspaces/acme/blobs/{sha(b'gone')}", None)
        assert status == 404
        listed = await asyncio.to_thread(s.ok, "GET", "/api/workspaces/acme/blobs")
        assert [(b["sha256"], b["size"]) for b in listed["blobs"]] == [(h, len(data))]
        keys = [o["Key"] for o in s3_client(s3_endpoint).list_objects_v2(Bucket=bucket)["Contents"]]
        assert keys == [f"evalkit/{h[:2]}/{h}"]
        assert not (tmp_path / "blobs").exists()
    finally:
        await s.service.stop()


async def test_service_with_a_missing_bucket_answers_503_saying_what_to_do(
        s3_endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in s3_env(s3_endpoint, "evalkit-not-created").items():
        monkeypatch.setenv(name, value)
    s = await start_service(tmp_path)
    try:
        await asyncio.to_thread(s.ok, "POST", "/api/workspaces", {"name": "acme"}, status=201)
        status, body = await asyncio.to_thread(s.raw, "PUT", f"/api/workspaces/acme/blobs/{sha(b'x')}", b"x")
        assert status == 503 and b"create bucket evalkit-not-created or set EVALKIT_BLOB_URL" in body
    finally:
        await s.service.stop()
