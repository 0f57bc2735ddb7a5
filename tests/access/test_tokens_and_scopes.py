"""API tokens listed and revoked (refused at once), a new bootstrap token retiring the old one, and the
scopes of ingest keys (`ingest` sends spans, `read` reads), against a running service."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
from pathlib import Path
from typing import Any

from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
from opentelemetry.proto.trace.v1 import trace_pb2

from evalkit.cli import main as cli_main
from tests.conftest import ADMIN_TOKEN, Running, chdb_url, fresh_database, serve


def otlp_status(running: Running, key: str) -> int:
    import urllib.error
    import urllib.request

    span = trace_pb2.Span(trace_id=b"\x01" * 16, span_id=b"\x02" * 8, name="s",
                          start_time_unix_nano=1_700_000_000 * 10**9, end_time_unix_nano=1_700_000_001 * 10**9)
    body = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        scope_spans=[trace_pb2.ScopeSpans(spans=[span])])]).SerializeToString()
    request = urllib.request.Request(running.otlp_http + "/v1/traces", data=body, method="POST")
    request.add_header("Content-Type", "application/x-protobuf")
    request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def cli(running: Running, token: str, *argv: str) -> tuple[int, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = cli_main([*argv, "--url", running.api, "--token", token, "--json"])
    return code, json.loads(out.getvalue()) if out.getvalue().strip() else None


async def test_tokens_are_listed_without_secrets_and_revoked_at_once(running: Running) -> None:
    call = running.call
    status, ann = await asyncio.to_thread(call, "POST", "/api/users", {"name": "ann"})
    assert status == 201
    first = ann["token"]
    status, _ = await asyncio.to_thread(call, "GET", "/api/me", None, first)
    assert status == 200
    status, second = await asyncio.to_thread(call, "POST", "/api/users/ann/tokens", {}, first)
    assert status == 201
    await asyncio.to_thread(call, "POST", "/api/users", {"name": "bob"})

    status, listed = await asyncio.to_thread(call, "GET", "/api/users/ann/tokens", None, first)
    assert status == 200, listed
    tokens = listed["tokens"]
    assert len(tokens) == 2 and all(not t["revoked"] for t in tokens)
    assert first not in json.dumps(listed) and second["token"] not in json.dumps(listed)
    assert set(tokens[0]) == {"token_id", "name", "role", "created_at", "last_used_at", "revoked"}
    assert tokens[0]["last_used_at"] is not None and tokens[0]["last_used_at"] >= tokens[0]["created_at"] - 1
    assert tokens[1]["last_used_at"] is None  # the second token was never used

    # Only the admin and the user itself see a user's tokens.
    status, bob_tokens = await asyncio.to_thread(call, "GET", "/api/users/bob/tokens", None, first)
    assert status == 403, bob_tokens

    # Revoked: refused on the very next request (the 10 s recall of this process is dropped).
    status, _ = await asyncio.to_thread(call, "GET", "/api/me", None, first)
    assert status == 200
    code, revoked = await asyncio.to_thread(cli, running, ADMIN_TOKEN, "users", "tokens", "revoke", "ann",
                                            tokens[0]["token_id"])
    assert code == 0 and revoked["token_id"] == tokens[0]["token_id"] and revoked["revoked"] is True
    status, body = await asyncio.to_thread(call, "GET", "/api/me", None, first)
    assert status == 401, body
    status, _ = await asyncio.to_thread(call, "GET", "/api/me", None, second["token"])
    assert status == 200
    code, listed = await asyncio.to_thread(cli, running, second["token"], "users", "tokens", "list", "ann")
    assert code == 0 and [t["revoked"] for t in listed["tokens"]] == [True, False]
    status, body = await asyncio.to_thread(call, "DELETE", "/api/users/ann/tokens/nope", None, ADMIN_TOKEN)
    assert status == 404 and "evalkit users tokens list ann" in body["error"]["message"]
    # The admin's own tokens are listed under "admin".
    status, admin_tokens = await asyncio.to_thread(call, "GET", "/api/users/admin/tokens")
    assert status == 200 and len(admin_tokens["tokens"]) == 1


async def test_a_new_bootstrap_token_revokes_the_previous_one(tmp_path: Path) -> None:
    database = chdb_url(fresh_database())
    async with serve(tmp_path, clickhouse_url=database, bootstrap_token=None) as generated:
        await generated.service.wait_ready(60)
        token = (tmp_path / "admin-token").read_text().strip()
        assert (await asyncio.to_thread(generated.call, "GET", "/api/me", None, token))[0] == 200
    async with serve(tmp_path, clickhouse_url=database, bootstrap_token="evk_first_admin") as first:
        await first.service.wait_ready(60)
        assert (await asyncio.to_thread(first.call, "GET", "/api/me", None, "evk_first_admin"))[0] == 200
        assert (await asyncio.to_thread(first.call, "GET", "/api/me", None, token))[0] == 401
        assert not (tmp_path / "admin-token").exists()  # it held a revoked token
    async with serve(tmp_path, clickhouse_url=database, bootstrap_token="evk_second_admin") as second:
        await second.service.wait_ready(60)
        assert (await asyncio.to_thread(second.call, "GET", "/api/me", None, "evk_second_admin"))[0] == 200
        assert (await asyncio.to_thread(second.call, "GET", "/api/me", None, "evk_first_admin"))[0] == 401
        status, listed = await asyncio.to_thread(second.call, "GET", "/api/users/admin/tokens", None,
                                                 "evk_second_admin")
        assert status == 200 and [t["revoked"] for t in listed["tokens"]] == [True, True, False]


async def test_key_scopes(running: Running) -> None:
    agent, _ = await asyncio.to_thread(running.new_agent)
    status, made = await asyncio.to_thread(running.call, "POST", f"/api/agents/{agent}/keys", {})
    assert status == 201 and made["scopes"] == ["ingest"]
    default_key = made["key"]
    code, reader = await asyncio.to_thread(cli, running, ADMIN_TOKEN, "agents", "keys", "create", agent,
                                           "--scope", "read")
    assert code == 0 and reader["scopes"] == ["read"]
    status, both = await asyncio.to_thread(running.call, "POST", f"/api/agents/{agent}/keys",
                                           {"scopes": ["read", "ingest"]})
    assert status == 201 and both["scopes"] == ["ingest", "read"]
    status, body = await asyncio.to_thread(running.call, "POST", f"/api/agents/{agent}/keys", {"scopes": ["write"]})
    assert status == 400 and "ingest, read" in body["error"]["message"]

    # The default key (ingest only) sends spans but reads nothing: 403 saying how to get a reading key.
    assert await asyncio.to_thread(otlp_status, running, default_key) == 200
    status, body = await asyncio.to_thread(running.call, "GET", f"/api/agents/{agent}/sessions", None, default_key)
    assert status == 403 and "--scope read" in body["error"]["message"], body
    # A read-only key reads, and sends nothing: 403 (the key is known, its scope is not ingest).
    status, _ = await asyncio.to_thread(running.call, "GET", f"/api/agents/{agent}/sessions", None, reader["key"])
    assert status == 200
    assert await asyncio.to_thread(otlp_status, running, reader["key"]) == 403
    assert await asyncio.to_thread(otlp_status, running, both["key"]) == 200
    status, _ = await asyncio.to_thread(running.call, "GET", f"/api/agents/{agent}", None, both["key"])
    assert status == 200
    status, keys = await asyncio.to_thread(running.call, "GET", f"/api/agents/{agent}/keys")
    assert [k["scopes"] for k in keys["keys"]] == [["ingest", "read"], ["ingest"], ["read"], ["ingest", "read"]]


def test_keys_made_before_scopes_keep_both(store: Any) -> None:
    from evalkit.access import Access, hash_secret
    from evalkit.migrations import migrate

    migrate(store)
    access = Access(store)
    access.create_workspace("acme")
    access.create_agent("bot", "acme")
    # A row as the service wrote it before migration 4 (no scopes column given).
    store.insert("ingest_keys", [[hash_secret("ek_old")], ["k1"], ["ek_old"], ["bot@acme"], [0], [False], [1]],
                 ["key_hash", "key_id", "prefix", "agent_id", "created_at", "revoked", "version"])
    holder = access.key_holder("ek_old")
    assert holder is not None and holder.scopes == {"ingest", "read"}
    assert access.list_keys("bot@acme")[0].scopes == ("ingest", "read")
    access.revoke_key("bot@acme", "k1")  # a revocation keeps the scopes it had
    assert access.list_keys("bot@acme")[0].scopes == ("ingest", "read")
    assert access.key_holder("ek_old") is None


async def test_an_archived_agent_takes_no_keys_409(running: Running) -> None:
    agent, _ = await asyncio.to_thread(running.new_agent)
    status, _ = await asyncio.to_thread(running.call, "POST", f"/api/agents/{agent}/archive", {})
    assert status == 200
    status, body = await asyncio.to_thread(running.call, "POST", f"/api/agents/{agent}/keys", {})
    assert status == 409 and "archived" in body["error"]["message"], body  # as docs/api.md says
