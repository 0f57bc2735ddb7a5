"""The session list (sort, filters, paging, time range), the JSONL export and mapping overrides."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from evalkit.scoring.trajectories import from_session
from tests.trajectory_service.conftest import (
    BASE_NS,
    Service,
    assert_schema_and_atif_valid,
    chat,
    root,
    shared_svc,
    span,
)

# One service for the module's tests (each sends to agents of its own): a service per test was ~1 s of each.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture
def svc(module_service: Service) -> Service:
    return shared_svc(module_service)


async def _three_sessions(svc: Service, key: str) -> None:
    # s-a: cheap, early; s-b: dear, with an error; s-c: unpriced, latest.
    await svc.send(key, [chat(1, 11, 10, 1.0, inputs=100, outputs=10), root(1, 10, "s-a", 0.5, 2.0)])
    await svc.send(key, [chat(2, 21, 20, 100.0, inputs=1000, outputs=100),
                         chat(2, 22, 20, 101.0, inputs=2000, outputs=200,
                              **{"gen_ai.usage.cache_read.input_tokens": 500}),
                         span(2, 23, 20, "execute_tool boom", 100.6, 100.7, error=True),
                         root(2, 20, "s-b", 99.5, 102.0)])
    await svc.send(key, [chat(3, 31, 30, 200.0, model="nobody-prices-this"), root(3, 30, "s-c", 199.5, 201.0)])


async def test_list_sorts_filters_and_pages(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await _three_sessions(svc, key)
    base = f"/api/agents/{agent}/sessions"
    listed = (await svc.get(base)).body
    assert [s["session_id"] for s in listed["sessions"]] == ["s-c", "s-b", "s-a"]
    b = next(s for s in listed["sessions"] if s["session_id"] == "s-b")
    assert (b["span_count"], b["steps"], b["errors"], b["status"]) == (4, 2, 1, "valid")
    assert (b["prompt_tokens"], b["completion_tokens"], b["cached_tokens"]) == (3000, 300, 500)
    # $1 in, $0.5 cache read, $4 out per million: (2500 + 250 + 1200) / 1e6
    assert b["cost_usd"] == 0.00395 and b["price_sources"] == ["prices.yaml"]
    assert b["first_seen"].endswith("Z") and b["duration_s"] == 2.5
    a = next(s for s in listed["sessions"] if s["session_id"] == "s-a")
    assert a["cost_usd"] == 0.00014

    by_cost = (await svc.get(base + "?sort=cost")).body["sessions"]
    assert [s["session_id"] for s in by_cost] == ["s-b", "s-a", "s-c"]  # unpriced last, not as $0
    assert [s["session_id"] for s in (await svc.get(base + "?sort=first_seen")).body["sessions"]] == [
        "s-c", "s-b", "s-a"]
    assert (await svc.get(base + "?sort=spans")).body["sessions"][0]["session_id"] == "s-b"
    assert [s["session_id"] for s in (await svc.get(base + "?errors=true")).body["sessions"]] == ["s-b"]
    assert [s["session_id"] for s in (await svc.get(base + "?min_cost=0.001")).body["sessions"]] == ["s-b"]
    assert [s["session_id"] for s in (await svc.get(base + "?model=nobody-prices-this")).body["sessions"]] == [
        "s-c"]
    since = (BASE_NS + 50 * 10**9) / 1e9
    assert [s["session_id"] for s in (await svc.get(base + f"?since={since}&until={since + 100}")).body[
        "sessions"]] == ["s-b"]
    assert [s["session_id"] for s in (await svc.get(base + "?until=2025-10-09T08:53:21Z")).body["sessions"]] == [
        "s-a"]

    page1 = (await svc.get(base + "?limit=2")).body
    assert [s["session_id"] for s in page1["sessions"]] == ["s-c", "s-b"] and page1["has_more"]
    page2 = (await svc.get(base + f"?limit=2&cursor={page1['next_cursor']}")).body
    assert [s["session_id"] for s in page2["sessions"]] == ["s-a"] and not page2["has_more"]
    assert [s["session_id"] for s in (await svc.get(base + "?limit=1&offset=1&sort=cost")).body["sessions"]] == [
        "s-a"]
    bad = await svc.get(base + f"?sort=cost&cursor={page1['next_cursor']}")
    assert bad.status == 400 and "sort" in bad.body["error"]["message"]
    assert (await svc.get(base + "?sort=vibes")).status == 400
    assert (await svc.get(base + "?since=yesterday")).status == 400


async def test_jsonl_export_by_range_and_by_name(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await _three_sessions(svc, key)
    reply = await svc.get(f"/api/agents/{agent}/trajectories.jsonl")
    assert reply.status == 200 and reply.headers["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in reply.text.splitlines()]
    assert [d["session_id"] for d in lines] == ["s-a", "s-b", "s-c"]
    for document in lines:
        assert document["extra"]["status"] == "valid"
        assert_schema_and_atif_valid(document)
    since = (BASE_NS + 50 * 10**9) / 1e9
    ranged = await svc.get(f"/api/agents/{agent}/trajectories.jsonl?since={since}")
    assert [json.loads(line)["session_id"] for line in ranged.text.splitlines()] == ["s-b", "s-c"]
    named = await svc.get(f"/api/agents/{agent}/trajectories.jsonl?session_id=s-c&session_id=s-a&session_id=zz")
    named_lines = [json.loads(line) for line in named.text.splitlines()]
    assert [d["session_id"] for d in named_lines] == ["s-c", "s-a", "zz"]
    assert named_lines[2]["extra"]["status"] == "unavailable"


async def test_mapping_overrides_are_versioned_and_change_the_session_attribute(svc: Service) -> None:
    agent, key = await svc.new_agent()
    first = await svc.get(f"/api/agents/{agent}/mapping")
    assert first.body["version"] == 0 and first.body["mapping_version"] == "built-in"
    assert first.body["overrides"] is None

    put = await svc.put(f"/api/agents/{agent}/mapping", {
        "session_id_attribute": "app.conversation",
        "attribute_map": {"app.customer": "trajectory.extra.customer"},
        "ignore_span_names": ["healthcheck*"]})
    assert put.status == 200, put.text
    assert put.body["version"] == 1 and put.body["mapping_version"] == "v1"
    assert (await svc.put(f"/api/agents/{agent}/mapping", {"attribute_map": {"x": "nowhere"}})).status == 400
    assert (await svc.put(f"/api/agents/{agent}/mapping", {}, token=key)).status == 403

    top = span(1, 10, None, "handle request", 0.5, 2.0, **{"session.id": "conv-7", "app.customer": "acme-co"})
    await svc.send(key, [top, chat(1, 11, 10, 1.0, text="mapped"), span(1, 12, 10, "healthcheck ping", 1.7, 1.8)])
    reply = await svc.trajectory(agent, "conv-7")
    assert reply.status == 200, reply.text
    assert reply.body["extra"]["mapping_version"] == "v1"
    assert reply.body["extra"]["customer"] == "acme-co"
    assert reply.body["extra"]["span_count"] == 2  # the healthcheck span was ignored
    assert_schema_and_atif_valid(reply.body)
    # Scoring reads a run's trajectory with the same mapping.
    scored = await asyncio.to_thread(from_session, svc.running.store, agent, "conv-7", now=time.time() + 60,
                                     quiet_period=0.0)
    assert scored.document is not None
    assert scored.document["extra"]["mapping_version"] == "v1" and scored.document["extra"]["span_count"] == 2
    detail = await svc.get(f"/api/agents/{agent}/sessions/conv-7")
    assert detail.body["summary"]["mapping_version"] == "v1"

    second = await svc.put(f"/api/agents/{agent}/mapping", {"version": "2025-q3", "ignore_span_names": []})
    assert second.body["version"] == 2 and second.body["mapping_version"] == "2025-q3"
    now = await svc.get(f"/api/agents/{agent}/mapping")
    assert now.body["version"] == 2 and [v["mapping_version"] for v in now.body["versions"]] == ["v1", "2025-q3"]
    assert now.body["session_attribute"] is None
    assert put.body["session_attribute"] == "app.conversation"
    old = await svc.get(f"/api/agents/{agent}/mapping?version=1")
    assert old.body["overrides"]["session_id_attribute"] == "app.conversation"
    assert (await svc.get(f"/api/agents/{agent}/mapping?version=9")).status == 404
    rebuilt = await svc.trajectory(agent, "conv-7")
    assert rebuilt.body["extra"]["mapping_version"] == "2025-q3"
    assert rebuilt.body["extra"]["span_count"] == 3


async def test_the_agents_session_attribute_names_sessions_at_ingest(svc: Service) -> None:
    agent, key = await svc.new_agent()
    put = await svc.put(f"/api/agents/{agent}/mapping", {"session_id_attribute": "app.conversation"})
    assert put.status == 200
    agent_record = await svc.get(f"/api/agents/{agent}")
    assert agent_record.body["session_attribute"] == "app.conversation"
    # No session.id anywhere: the agent's own attribute names the session.
    top = span(1, 10, None, "handle request", 0.5, 2.0, **{"app.conversation": "conv-9"})
    await svc.send(key, [top, chat(1, 11, 10, 1.0, text="mapped")])
    reply = await svc.trajectory(agent, "conv-9")
    assert reply.status == 200, reply.text
    assert reply.body["session_id"] == "conv-9"


async def test_a_wrapped_llm_call_is_counted_once_in_the_list(svc: Service) -> None:
    # A framework's chat span wrapping the client library's chat span: both carry the same usage.
    agent, key = await svc.new_agent()
    await svc.send(key, [chat(4, 41, 40, 1.0, inputs=300, outputs=30),
                         chat(4, 42, 41, 1.1, inputs=300, outputs=30),
                         root(4, 40, "s-wrapped", 0.5, 2.0)])
    listed = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    (row,) = [s for s in listed if s["session_id"] == "s-wrapped"]
    assert (row["steps"], row["prompt_tokens"], row["completion_tokens"]) == (1, 300, 30)
    trajectory = (await svc.trajectory(agent, "s-wrapped")).body
    final = trajectory["final_metrics"]
    assert (final["total_prompt_tokens"], final["total_completion_tokens"]) == (300, 30)
