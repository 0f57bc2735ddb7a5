"""A trace with no session attribute is a session of its own, named by its trace id; one whose root
carrying a session id arrives last joins that session instead."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evalkit.migrations import all_migrations, migrate
from evalkit.store import Store
from evalkit.trajectory import session_rows, tables
from evalkit.trajectory.mappers import mcp_semconv, openlit_pydantic_ai
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.session_list import SessionQuery, list_sessions
from evalkit.trajectory.session_rows import page_of_kept_rows
from tests.captures import corpus
from tests.trajectory_service.conftest import Service, assert_schema_and_atif_valid, chat, root, shared_svc, span
from tests.trajectory_service.test_session_rows import _keep_all

# One service for the module's tests that send to agents of their own (a service per test was ~1 s of each); the
# migration's test, which rewinds the database and keeps every agent's rows, has its own.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)

TRACE_7 = f"{7:032x}"
TRACE_8 = f"{8:032x}"


async def test_a_trace_without_a_session_id_is_listed_read_and_exported_as_its_own_session(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(7, 71, 70, 1.0, user="no session here", text="still answered")])
    await svc.send(key, [span(7, 70, None, "workflow", 0.5, 2.0)])
    await svc.send(key, [chat(1, 11, 10, 1.0, text="named"), root(1, 10, "s-named", 0.5, 2.0)])

    listed = await svc.get(f"/api/agents/{agent}/sessions")
    assert listed.status == 200, listed.text
    rows = {row["session_id"]: row for row in listed.body["sessions"]}
    assert set(rows) == {TRACE_7, "s-named"}
    assert rows[TRACE_7]["span_count"] == 2 and rows[TRACE_7]["trace_count"] == 1
    assert rows[TRACE_7]["steps"] == 1 and rows[TRACE_7]["prompt_tokens"] == 100
    assert rows[TRACE_7]["cost_usd"] == 0.00014

    reply = await svc.trajectory(agent, TRACE_7)
    assert reply.status == 200, reply.text
    assert reply.body["session_id"] == TRACE_7
    assert [(s["source"], s["message"]) for s in reply.body["steps"]] == [
        ("user", "no session here"), ("agent", "still answered")]
    assert_schema_and_atif_valid(reply.body)

    detail = await svc.get(f"/api/agents/{agent}/sessions/{TRACE_7}")
    assert detail.status == 200, detail.text
    assert {s["span_id"] for s in detail.body["spans"]} == {f"{70:016x}", f"{71:016x}"}

    exported = await svc.get(f"/api/agents/{agent}/trajectories.jsonl")
    assert exported.status == 200, exported.text
    assert TRACE_7 in exported.text and "s-named" in exported.text

    # The named session's trace is not a session of its own too; an unknown id is still unknown.
    assert (await svc.get(f"/api/agents/{agent}/sessions/{1:032x}")).status == 404
    assert (await svc.get(f"/api/agents/{agent}/sessions/{9:032x}")).status == 404


async def test_a_trace_whose_root_with_the_session_id_arrives_last_joins_that_session(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(8, 81, 80, 1.0, user="first", text="answer one")])
    # Until its root arrives, the trace is listed on its own.
    early = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert [row["session_id"] for row in early] == [TRACE_8]

    await svc.send(key, [root(8, 80, "s-late-root", 0.5, 3.0)])
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert [(row["session_id"], row["span_count"], row["steps"]) for row in listed] == [("s-late-root", 2, 1)]
    assert (await svc.get(f"/api/agents/{agent}/sessions/{TRACE_8}")).status == 404

    reply = await svc.trajectory(agent, "s-late-root")
    assert reply.status == 200, reply.text
    assert [s["message"] for s in reply.body["steps"]] == ["first", "answer one"]
    assert reply.body["extra"]["status"] == "valid"


async def test_a_trace_of_no_agent_work_is_no_session(svc: Service) -> None:
    agent, key = await svc.new_agent()
    # An application span alone, and an agent being set up (OpenLLMetry's create_agent traces).
    await svc.send(key, [span(3, 30, None, "GET /health", 0.0, 0.1)])
    await svc.send(key, [span(4, 40, None, "create_agent helper", 0.0, 0.1, gen_ai__operation__name="create_agent")])
    await svc.send(key, [chat(5, 51, 50, 1.0), span(5, 50, None, "app", 0.5, 2.0)])
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert [row["session_id"] for row in listed] == [f"{5:032x}"]
    assert (await svc.get(f"/api/agents/{agent}/sessions/{3:032x}")).status == 404



async def test_a_nested_run_with_a_session_id_of_its_own_does_not_make_the_trace_its_session(svc: Service) -> None:
    agent, key = await svc.new_agent()
    # A run in session "outer" whose tool runs a nested agent carrying session id "inner".
    nested = span(1, 12, 11, "invoke_agent helper", 1.0, 2.0, session__id="inner",
                  gen_ai__operation__name="invoke_agent")
    await svc.send(key, [chat(1, 13, 12, 1.2, text="nested answer"), nested, span(1, 11, 10, "tool", 0.9, 2.1)])
    await svc.send(key, [root(1, 10, "outer", 0.5, 3.0)])
    # Two conversations side by side in one trace (a batch job's root names none): each is a session.
    await svc.send(key, [chat(2, 21, 20, 1.0, text="a", **{"session.id": "side-a"}),
                         chat(2, 22, 20, 2.0, text="b", **{"session.id": "side-b"}),
                         span(2, 20, None, "batch", 0.5, 3.0)])
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    assert sorted(row["session_id"] for row in listed) == ["outer", "side-a", "side-b"]
    assert (await svc.get(f"/api/agents/{agent}/sessions/inner")).status == 404
    reply = await svc.trajectory(agent, "outer")
    assert reply.status == 200 and reply.body["session_id"] == "outer"


async def test_a_trace_whose_spans_all_carry_the_session_id_has_no_sessionless_index_row(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(6, 61, 60, 1.0, **{"session.id": "s-all"}), root(6, 60, "s-all", 0.5, 2.0)])
    await svc.send(key, [chat(7, 71, 70, 1.0), span(7, 70, None, "workflow", 0.5, 2.0)])
    rows = await asyncio.to_thread(
        svc.running.store.query,
        "SELECT session_id, trace_id FROM session_traces FINAL WHERE agent_id = {a:String} ORDER BY trace_id",
        {"a": agent})
    assert rows == [("s-all", f"{6:032x}"), ("", TRACE_7)]


# OpenLIT's pydantic-ai capture: its `run_stream` turn's graph-node spans (`user_prompt_processing`, `model_request`,
# `execute_tool <model>`) are one-span traces that carry no session id (trajectory/tables.py, migration 218).
_PYDANTIC_AI_OPENLIT = "pydantic-ai_openlit"
_SORTS = ("", "?sort=first_seen", "?sort=spans", "?sort=cost")


def _graph_node_traces(store: Store, agent: str) -> list[str]:
    """The agent's stored traces made of OpenLIT's pydantic-ai spans other than an agent's run or set-up (which the
    index never took), with no session id."""
    return [str(t) for t, in store.query(
        "SELECT trace_id FROM spans WHERE agent_id = {a:String} GROUP BY trace_id "
        "HAVING min(scope_name = {scope:String} AND operation NOT IN ({run:String}, 'create_agent') "
        "AND session_id = '') ORDER BY trace_id",
        {"a": agent, "scope": openlit_pydantic_ai.SCOPE, "run": openlit_pydantic_ai.RUN_OPERATION})]


async def _listed(svc: Service, agent: str) -> dict[str, list[str]]:
    """The session ids each sort lists."""
    return {sort: [row["session_id"] for row in (await svc.get(f"/api/agents/{agent}/sessions{sort}")).body["sessions"]]
            for sort in _SORTS}


async def test_openlit_pydantic_ai_graph_node_traces_are_no_sessions(svc: Service) -> None:
    capture = corpus.load(_PYDANTIC_AI_OPENLIT)
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    assert (await svc.trajectory(agent, session, "?wait=10")).body["extra"]["status"] == "valid"
    # The streamed turn's three node spans are stored, each a trace of its own ...
    nodes = await asyncio.to_thread(_graph_node_traces, svc.running.store, agent)
    assert len(nodes) == 3
    # ... and listed by no sort, nor found as a session.
    assert await _listed(svc, agent) == {sort: [session] for sort in _SORTS}
    for trace in nodes:
        assert (await svc.get(f"/api/agents/{agent}/sessions/{trace}")).status == 404


async def test_migration_218_drops_the_graph_node_traces_stored_before_it_from_the_list(
        own_service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexed by the view before migration 218, the node traces were listed as sessions; once it has run they are
    not, whether the page is read from the index or from rows kept before it (kept again first)."""
    svc = own_service
    store = svc.running.store
    # The data directory as a service before migration 218 left it: 203's view.
    store.command(f"DROP VIEW {store.database}.{tables.SESSIONLESS_TRACES_FEED.name}")
    for statement in tables.SESSIONLESS_TRACES_FEED.statements(store.database, store.cluster):
        store.command(statement)
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version >= 218")
    capture = corpus.load(_PYDANTIC_AI_OPENLIT)
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    await svc.trajectory(agent, session, "?wait=10")
    nodes = await asyncio.to_thread(_graph_node_traces, store, agent)
    assert len(nodes) == 3
    before = await _listed(svc, agent)
    assert all(sorted(ids) == sorted([session, *nodes]) for ids in before.values()), before
    (named_before,) = [r for r in (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
                       if r["session_id"] == session]
    # ... and its session rows kept in the format before (`session_rows._ROW_FORMAT`).
    prices = PriceBook.from_file(svc.running.settings.data_dir / "prices.yaml")
    monkeypatch.setattr(session_rows, "_ROW_FORMAT", "rows-9")
    assert _keep_all(store, prices) == 4
    monkeypatch.undo()

    def kept_ids() -> list[str] | None:
        page = page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [row.session_id for row in page.rows]

    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= 218)
    assert await _listed(svc, agent) == {sort: [session] for sort in _SORTS}
    # The named session is listed as it was: its figures are its spans'.
    assert (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"] == [named_before]
    # Not one index row of theirs is left, by session, by trace or in list order.
    index: list[tuple[Any, ...]] = []
    for table, column in (("session_traces", "trace_id"), ("trace_sessions", "trace_id"),
                          ("session_order", "session_key")):
        index += store.query(f"SELECT {column} FROM {table} WHERE agent_id = {{a:String}} "
                             f"AND {column} IN {{t:Array(String)}}", {"a": agent, "t": nodes})
    assert index == []
    # The rows kept before are not used until kept again, and then list the session alone.
    assert kept_ids() is None
    _keep_all(store, prices)  # the node traces' keys list nothing now: their rows cancelled
    assert kept_ids() == [session]
    assert [row.session_id for row in list_sessions(store, agent, SessionQuery(), prices).rows] == [session]


# The Claude Agent SDK's capture under OpenLIT: the in-process MCP server's spans (mcp 2's own, the Claude Code CLI
# its client, which sends no trace context) are under OpenLIT's `create_agent` span of the client connecting, in a
# trace with no session id; its `tools/call` spans are the calls the session's `execute_tool` spans record
# (trajectory/tables.py, migration 224).
_CLAUDE_AGENT_SDK_OPENLIT = "claude-agent-sdk_openlit"


def _mcp_server_traces(store: Store, agent: str) -> dict[str, int]:
    """The agent's stored traces holding an MCP server's span of a tool call with no session id, and how many."""
    return {str(t): int(n) for t, n in store.query(
        "SELECT trace_id, countIf(kind = 2 AND attributes[{method:String}] = 'tools/call' AND session_id = '') AS n "
        "FROM spans WHERE agent_id = {a:String} GROUP BY trace_id HAVING n > 0 ORDER BY trace_id",
        {"a": agent, "method": mcp_semconv.METHOD})}


async def test_an_mcp_servers_trace_of_calls_its_client_sent_no_context_for_is_no_session(svc: Service) -> None:
    capture = corpus.load(_CLAUDE_AGENT_SDK_OPENLIT)
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    assert (await svc.trajectory(agent, session, "?wait=10")).body["extra"]["status"] == "valid"
    # The server's four calls are stored, in one trace of their own ...
    servers = await asyncio.to_thread(_mcp_server_traces, svc.running.store, agent)
    assert list(servers.values()) == [4]
    # ... which no sort lists, nor is found as a session.
    assert await _listed(svc, agent) == {sort: [session] for sort in _SORTS}
    for trace in servers:
        assert (await svc.get(f"/api/agents/{agent}/sessions/{trace}")).status == 404


async def test_migration_224_drops_the_mcp_server_traces_stored_before_it_from_the_list(
        own_service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """Indexed by the view before migration 224, the MCP server's trace was listed as a session; once it has run it
    is not, whether the page is read from the index or from rows kept before it (kept again first)."""
    svc = own_service
    store = svc.running.store
    # The data directory as a service before migration 224 left it: 218's view.
    store.command(f"DROP VIEW {store.database}.{tables.SESSIONLESS_TRACES_FEED.name}")
    for statement in tables.SESSIONLESS_AGENT_WORK_FEED.statements(store.database, store.cluster):
        store.command(statement)
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version >= 224")
    capture = corpus.load(_CLAUDE_AGENT_SDK_OPENLIT)
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    await svc.trajectory(agent, session, "?wait=10")
    servers = list(await asyncio.to_thread(_mcp_server_traces, store, agent))
    assert len(servers) == 1
    before = await _listed(svc, agent)
    assert all(sorted(ids) == sorted([session, *servers]) for ids in before.values()), before
    (named_before,) = [r for r in (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
                       if r["session_id"] == session]
    # ... and its session rows kept in the format before (`session_rows._ROW_FORMAT`).
    prices = PriceBook.from_file(svc.running.settings.data_dir / "prices.yaml")
    monkeypatch.setattr(session_rows, "_ROW_FORMAT", "rows-15")
    assert _keep_all(store, prices) == 2
    monkeypatch.undo()

    def kept_ids() -> list[str] | None:
        page = page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [row.session_id for row in page.rows]

    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= 224)
    assert await _listed(svc, agent) == {sort: [session] for sort in _SORTS}
    # The named session is listed as it was: its figures are its spans'.
    assert (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"] == [named_before]
    # Not one index row of the server's trace is left, by session, by trace or in list order.
    index: list[tuple[Any, ...]] = []
    for table, column in (("session_traces", "trace_id"), ("trace_sessions", "trace_id"),
                          ("session_order", "session_key")):
        index += store.query(f"SELECT {column} FROM {table} WHERE agent_id = {{a:String}} "
                             f"AND {column} IN {{t:Array(String)}}", {"a": agent, "t": servers})
    assert index == []
    assert (await svc.get(f"/api/agents/{agent}/sessions/{servers[0]}")).status == 404
    # The rows kept before are not used until kept again, and then list the session alone.
    assert kept_ids() is None
    _keep_all(store, prices)  # the server trace's key lists nothing now: its row cancelled
    assert kept_ids() == [session]
    assert [row.session_id for row in list_sessions(store, agent, SessionQuery(), prices).rows] == [session]
