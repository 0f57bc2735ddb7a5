"""The access matrix: every role × every route that writes. A role below the route's need gets 403
(404 when the workspace is not visible at all); a role that may gets anything but those."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from evalkit.access import role_rank
from tests.scoring_service.conftest import Scoring, call, sha

BLOB = b"matrix"


def routes(eid: int) -> list[tuple[str, str, str, Any]]:
    """(needed role, method, path, body); experiment `eid` was started by someone else."""
    return [
        ("writer", "PUT", f"/api/workspaces/acme/blobs/{sha(BLOB)}", None),
        ("writer", "POST", "/api/datasets/d@acme", {"cases": [{"id": "a", "input": "x", "expected": "y"}]}),
        ("reviewer", "PUT", "/api/datasets/d@acme/cases/a/review", {"state": "approved"}),
        ("admin", "PUT", "/api/workspaces/acme/evaluators/tone", {"type": "contains", "value": "y"}),
        ("writer", "POST", "/api/experiments", {"agent": "bot@acme", "dataset": "d@acme"}),
        ("writer", "POST", f"/api/experiments/{eid}/lease", {"holder": "someone", "ttl_seconds": 1}),
        ("writer", "DELETE", f"/api/experiments/{eid}/lease?holder=nobody", None),
        ("writer", "POST", f"/api/experiments/{eid}/runs",
         {"case_id": "a", "repetition": 0, "session_id": "s", "status": "completed", "lease_holder": "x"}),
        ("writer", "POST", f"/api/experiments/{eid}/evaluations", {"evaluations": []}),
        ("writer", "POST", f"/api/experiments/{eid}/evaluate", {}),
        ("writer", "POST", f"/api/experiments/{eid}/trajectories/refetch", {}),
        ("admin", "PATCH", f"/api/experiments/{eid}", {"model": "m"}),
        ("admin", "POST", f"/api/experiments/{eid}/resume", {"holder": "h"}),
        ("admin", "PATCH", "/api/agents/bot@acme", {"description": "d"}),
        ("admin", "POST", "/api/agents/bot@acme/keys", {}),
        ("admin", "POST", "/api/agents", {"name": "other", "workspace": "acme"}),
        ("admin", "PUT", "/api/workspaces/acme/members/dummy", {"role": "reader"}),
        ("owner", "PUT", "/api/workspaces/acme/members/dummy2", {"role": "admin"}),
    ]


@pytest.mark.parametrize("role", ["outsider", "key", "reader", "reviewer", "writer", "admin", "owner"])
async def test_access_matrix(scoring: Scoring, role: str) -> None:
    s = scoring
    _, key = await asyncio.to_thread(s.new_agent, "bot", "acme")
    await call(s, "POST", "/api/datasets/d@acme", {"cases": [{"id": "a", "input": "x", "expected": "y"}]})
    status, exp = await call(s, "POST", "/api/experiments", {"agent": "bot@acme", "dataset": "d@acme"})
    eid = exp["experiment_id"]
    for name in ("dummy", "dummy2"):
        await asyncio.to_thread(s.user, name)
    if role == "key":
        token = key
    elif role == "outsider":
        token = await asyncio.to_thread(s.user, "outsider")
    else:
        token = await asyncio.to_thread(s.user, "member", "acme", role)
    for needed, method, path, body in routes(eid):
        if path.startswith("/api/workspaces/acme/blobs"):
            status, raw = await asyncio.to_thread(s.raw, method, path, BLOB, token)
            reply: Any = json.loads(raw) if raw else None
        else:
            status, reply = await call(s, method, path, body, token)
        allowed = role not in ("outsider", "key") and role_rank(role) >= role_rank(needed)
        if allowed:
            assert status not in (401, 403, 404), (role, method, path, status, reply)
        elif role == "outsider":
            assert status == 404, (role, method, path, status, reply)
        else:
            assert status == 403, (role, method, path, status, reply)
            message = reply["error"]["message"] if isinstance(reply, dict) else ""
            assert "role" in message or "ingest key" in message or "admin of" in message, message


async def test_personal_workspace_and_members(scoring: Scoring) -> None:
    s = scoring
    token = await asyncio.to_thread(s.user, "alice")
    status, pushed = await call(s, "POST", "/api/datasets/mine", {"cases": [{"id": "a", "input": 1}]}, token)
    assert status == 201 and pushed["dataset"] == "mine@alice"
    status, me = await call(s, "GET", "/api/me", None, token)
    assert me["personal_workspace"] == "alice" and me["workspaces"][0]["role"] == "owner"
    bob = await asyncio.to_thread(s.user, "bob")
    status, _ = await call(s, "GET", "/api/datasets/mine@alice", None, bob)
    assert status == 404
    status, err = await call(s, "PUT", "/api/workspaces/alice/members/bob", {"role": "reader"}, token)
    assert status == 400 and "personal" in err["error"]["message"]
    status, _ws = await call(s, "POST", "/api/workspaces", {"name": "team"}, token)
    assert status == 201
    status, _ = await call(s, "PUT", "/api/workspaces/team/members/bob", {"role": "reviewer"}, token)
    status, members = await call(s, "GET", "/api/workspaces/team/members", None, bob)
    assert {m["user"]: m["role"] for m in members["members"]} == {"alice": "owner", "bob": "reviewer"}
    status, err = await call(s, "DELETE", "/api/workspaces/team/members/alice", None, token)
    assert status == 409 and "last owner" in err["error"]["message"]
    # Reviews belong to the case's content: a changed case is pending again.
    await call(s, "POST", "/api/datasets/qa@team", {"cases": [{"id": "a", "input": 1}]}, token)
    status, review = await call(s, "PUT", "/api/datasets/qa@team/cases/a/review", {"state": "approved"}, bob)
    assert status == 200 and review["state"] == "approved"
    status, shown = await call(s, "GET", "/api/datasets/qa@team", None, bob)
    assert shown["cases"][0]["review"]["state"] == "approved"
    await call(s, "POST", "/api/datasets/qa@team", {"cases": [{"id": "a", "input": 2}]}, token)
    status, shown = await call(s, "GET", "/api/datasets/qa@team", None, bob)
    assert shown["cases"][0]["review"]["state"] == "pending"
    status, versions = await call(s, "GET", "/api/datasets/qa@team/versions", None, bob)
    assert len(versions["versions"]) == 2


async def test_a_missing_dataset_says_how_to_push_it_to_its_own_workspace(scoring: Scoring) -> None:
    token = await asyncio.to_thread(scoring.user, "carol")
    await call(scoring, "POST", "/api/workspaces", {"name": "shared"}, token)
    status, _ = await call(scoring, "POST", "/api/agents", {"name": "helper", "workspace": "shared"}, token)
    assert status == 201
    status, err = await call(scoring, "POST", "/api/experiments",
                             {"agent": "helper@shared", "dataset": "absent@shared"}, token)
    assert status == 404
    # `evalkit datasets push absent` alone would push to carol's personal workspace, not to "shared".
    assert "`evalkit datasets push absent --workspace shared`" in err["error"]["message"], err
