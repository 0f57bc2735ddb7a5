"""A workspace that does not exist is a 404 saying how workspaces are listed, on every route that names one:
the server admin sees every workspace, so its visibility check alone passed a misspelt name and lists
answered 200 with nothing, as if the workspace were empty (and writes landed in no workspace)."""

from __future__ import annotations

import asyncio

from tests.access.test_tokens_and_scopes import cli
from tests.conftest import ADMIN_TOKEN, Running

NO_SUCH = ("workspace 'nosuchws' does not exist; list the workspaces with `evalkit workspaces list` "
           "(GET /api/workspaces)")
ROUTES = [
    ("GET", "/api/workspaces/nosuchws/members", None),
    ("PUT", "/api/workspaces/nosuchws/members/ann", {"role": "reader"}),
    ("DELETE", "/api/workspaces/nosuchws/members/ann", None),
    ("GET", "/api/workspaces/nosuchws/evaluators", None),
    ("PUT", "/api/workspaces/nosuchws/evaluators/same", {"type": "exact"}),
    ("GET", "/api/workspaces/nosuchws/blobs", None),
    ("GET", "/api/agents?workspace=nosuchws", None),
    ("GET", "/api/datasets?workspace=nosuchws", None),
    ("GET", "/api/experiments?workspace=nosuchws", None),
    ("POST", "/api/datasets/capitals@nosuchws", {"cases": [{"id": "france", "input": "France?"}]}),
]


async def test_a_workspace_that_does_not_exist_is_404_saying_how_to_list_them(running: Running) -> None:
    call = running.call
    agent_id, _ = await asyncio.to_thread(running.new_agent, "bot", "acme")
    status, _ = await asyncio.to_thread(call, "POST", "/api/users", {"name": "ann"})
    assert status == 201
    for method, path, body in ROUTES:
        status, reply = await asyncio.to_thread(call, method, path, body)
        assert (status, reply) == (404, {"error": {"status": 404, "message": NO_SUCH}}), (method, path)
    # Nothing was written for it: the member, the evaluator and the dataset were refused, not kept.
    for table in ("workspace_members", "workspace_evaluators", "dataset_versions", "dataset_cases"):
        rows = running.store.query(f"SELECT count() FROM {table} FINAL WHERE workspace = 'nosuchws'")
        assert rows[0][0] == 0, table

    # The command line says the same (with --json, the error on stdout).
    code, printed = await asyncio.to_thread(cli, running, ADMIN_TOKEN, "members", "list", "nosuchws")
    assert code != 0 and NO_SUCH in printed["error"]["message"], printed

    # A workspace that exists still lists.
    status, reply = await asyncio.to_thread(call, "GET", "/api/workspaces/acme/members")
    assert status == 200 and reply["workspace"] == "acme", reply
    status, reply = await asyncio.to_thread(call, "GET", "/api/agents?workspace=acme")
    assert status == 200 and [a["agent"] for a in reply["agents"]] == [agent_id], reply
    for path in ("/api/workspaces/acme/evaluators", "/api/workspaces/acme/blobs", "/api/datasets?workspace=acme",
                 "/api/experiments?workspace=acme"):
        status, reply = await asyncio.to_thread(call, "GET", path)
        assert status == 200, (path, reply)

    # A user sees the same 404 for a workspace it is no member of, whether or not it exists, and the same advice.
    status, user = await asyncio.to_thread(call, "POST", "/api/users", {"name": "bob"})
    for workspace in ("nosuchws", "acme"):
        for path in (f"/api/workspaces/{workspace}/members", f"/api/agents?workspace={workspace}"):
            status, reply = await asyncio.to_thread(call, "GET", path, None, user["token"])
            assert (status, reply["error"]["message"]) == (404, (
                f"workspace {workspace!r} does not exist or is not visible to this token; list yours with "
                "`evalkit workspaces list` (GET /api/workspaces)")), (path, reply)
