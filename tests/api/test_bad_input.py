"""Bad input is a 400 that names the parameter and its range; an oversized body a 413; never a 500."""

from __future__ import annotations

import asyncio
import json

from tests.trajectory_service.conftest import Service, chat, http, root

BAD_SESSION_QUERIES = {
    "offset=1e20": "offset", "offset=100000000000000000000": "offset", "offset=-1": "offset",
    "since=nan": "since", "since=1e30": "since", "until=inf": "until", "since=-5": "since",
    "min_cost=nan": "min_cost", "min_cost=-inf": "min_cost", "min_cost=abc": "min_cost",
    "limit=abc": "limit", "limit=-1": "limit", "limit=0": "limit", "limit=99999999999999999999999": "limit",
    "cursor=eyJvIjogMWUyMCwgInMiOiAibGFzdF9zZWVuIn0": "cursor",  # {"o": 1e20, "s": "last_seen"}
    "wait=nan": "wait",
}


async def test_bad_query_parameters_are_400s_naming_them(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [root(1, 1, "s1", 0, 3), chat(1, 2, 1, 1)])
    for query, name in BAD_SESSION_QUERIES.items():
        path = f"/api/agents/{agent}/sessions" if name != "wait" else f"/api/agents/{agent}/sessions/s1/trajectory"
        reply = await svc.get(f"{path}?{query}")
        assert reply.status == 400, (query, reply.status, reply.text)
        assert name in reply.body["error"]["message"], (query, reply.body)
    for query in ("offset=1e20", "limit=-1", "since=nan"):
        reply = await svc.get(f"/api/agents/{agent}/sessions/s1?{query}" if "since" not in query
                              else f"/api/agents/{agent}/trajectories.jsonl?{query}")
        assert reply.status == 400, (query, reply.text)
    for path in ("/api/experiments?limit=abc", "/api/experiments?limit=-1", "/api/experiments/99999999999999999999999",
                 "/api/experiments/1e5"):
        reply = await svc.get(path)
        assert reply.status == 400, (path, reply.text)
    # An unknown experiment status would list nothing, as if there were no experiments: refused, naming the statuses.
    reply = await svc.get("/api/experiments?status=scoring")
    assert reply.status == 400 and "evaluating" in reply.body["error"]["message"], reply.text
    assert (await svc.get("/api/experiments?status=stopped")).status == 200
    reply = await svc.get("/api/agents/bot@acme/sessions?limit=5")  # the good form still works
    assert reply.status == 200 and [s["session_id"] for s in reply.body["sessions"]] == ["s1"]


async def test_bad_yes_no_and_choice_parameters_are_400s_naming_the_accepted_values(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await svc.send(key, [root(1, 1, "s1", 0, 3), chat(1, 2, 1, 1)])
    trajectory = f"/api/agents/{agent}/sessions/s1/trajectory"
    # Served as if absent before: `validate=true` looked like a schema check and was none.
    for bad in ("maybe", "true", "Schema"):
        reply = await svc.get(f"{trajectory}?validate={bad}")
        assert reply.status == 400, (bad, reply.status, reply.text[:200])
        assert "validate" in reply.body["error"]["message"] and "validate=schema" in reply.body["error"]["message"]
    reply = await svc.get(f"{trajectory}?validate=schema")
    assert reply.status == 200 and reply.body["extra"]["validated_with"] == "rules+json-schema", reply.text[:300]
    assert (await svc.get(f"{trajectory}?validate=")).status == 200
    reply = await svc.get(f"/api/agents/{agent}/sessions?errors=maybe")
    assert reply.status == 400, reply.text
    assert "errors=true" in reply.body["error"]["message"] and "errors=false" in reply.body["error"]["message"]
    # The spellings the OpenAPI document lists for a yes/no parameter all work.
    for word, listed in (("yes", []), ("TRUE", []), ("no", ["s1"]), ("0", ["s1"])):
        reply = await svc.get(f"/api/agents/{agent}/sessions?errors={word}")
        assert reply.status == 200 and [s["session_id"] for s in reply.body["sessions"]] == listed, (word, reply.text)


async def _two_experiments(svc: Service, agent: str) -> list[int]:
    """Two experiments of `agent` over a one-case dataset (to compare one with the other)."""
    cases = [{"id": "a", "input": "x", "expected": "y"}]
    assert (await asyncio.to_thread(svc.running.call, "POST", "/api/datasets/d@acme", {"cases": cases}))[0] == 201
    ids = []
    for _ in range(2):
        status, body = await asyncio.to_thread(svc.running.call, "POST", "/api/experiments",
                                               {"agent": agent, "dataset": "d@acme"})
        assert status == 201, body
        ids.append(body["experiment_id"])
    return ids


async def test_alpha_out_of_range(svc: Service) -> None:
    agent, _ = await svc.new_agent()
    ids = await _two_experiments(svc, agent)
    for alpha in ("5", "nan", "-1", "0", "abc"):
        reply = await svc.get(f"/api/experiments/{ids[0]}/compare?baseline_id={ids[1]}&alpha={alpha}")
        assert reply.status == 400 and "alpha" in reply.body["error"]["message"], (alpha, reply.text)


async def test_experiment_yes_no_and_format_parameters_refuse_unknown_values(svc: Service) -> None:
    agent, _ = await svc.new_agent()
    ids = await _two_experiments(svc, agent)
    base = f"/api/experiments/{ids[0]}"
    # Each was read as "no" (include_trajectory as "yes") or as the default format, without a word.
    for path, name in ((f"{base}/runs?failed=maybe", "failed"), (f"{base}/runs?evaluations=y", "evaluations"),
                       (f"{base}/export?failed=on", "failed"), (f"{base}/runs/to-score?rescore=2", "rescore"),
                       (f"{base}/runs/to-score?include_trajectory=nope", "include_trajectory"),
                       (f"{base}/compare?baseline_id={ids[1]}&allow_incomplete=maybe", "allow_incomplete"),
                       (f"{base}/compare?baseline_id={ids[1]}&allow_incomplete=true&format=html", "format"),
                       (f"{base}/scorecard?format=xml", "format")):
        reply = await svc.get(path)
        assert reply.status == 400, (path, reply.status, reply.text[:300])
        message = reply.body["error"]["message"]
        assert message.startswith(f"{name}=") and (f"{name}=true" in message or f"{name}=json" in message), message
    for path in (f"{base}/runs?failed=yes&evaluations=1", f"{base}/runs/to-score?include_trajectory=false",
                 f"{base}/compare?baseline_id={ids[1]}&allow_incomplete=TRUE&format=json",
                 f"{base}/scorecard?format=text"):
        reply = await svc.get(path)
        assert reply.status == 200, (path, reply.status, reply.text[:300])


async def test_bad_bodies_are_400s(svc: Service) -> None:
    for raw in (b"{", b"[1, 2]", b"", b'{"name": NaN}', b"\xff\xfe", b"[" * 100_000 + b"]" * 100_000):
        reply = await asyncio.to_thread(http, "POST", svc.api + "/api/workspaces", None, raw=raw)
        assert reply.status == 400, (raw[:20], reply.status, reply.text[:300])
        assert reply.body["error"]["message"].startswith("the body"), reply.body


async def test_an_oversized_body_is_413_with_the_setting_named(start_service: object) -> None:
    svc = await start_service(max_api_body_bytes=1000)  # type: ignore[operator]
    reply = await asyncio.to_thread(http, "POST", svc.api + "/api/workspaces", None,
                                    raw=json.dumps({"name": "x" * 5000}).encode())
    assert reply.status == 413, reply.text
    assert "EVALKIT_MAX_API_BODY_BYTES" in reply.body["error"]["message"]
    reply = await asyncio.to_thread(http, "POST", svc.api + "/api/workspaces", {"name": "small"})
    assert reply.status == 201, reply.text


async def test_unknown_routes_and_methods_say_where_the_routes_are(svc: Service) -> None:
    reply = await svc.get("/api/nothing-here")
    assert reply.status == 404 and "GET /api/openapi.json" in reply.body["error"]["message"], reply.text
    reply = await asyncio.to_thread(http, "DELETE", svc.api + "/api/me", None)
    assert reply.status == 405 and "GET" in reply.body["error"]["message"], reply.text


async def test_a_long_filter_url_reaches_the_api(svc: Service) -> None:
    """aiohttp's default request line, 8,190 bytes, was the API's limit: a longer URL got a plain-text 400
    before any route saw it. A search of tens of kilobytes is answered by the API itself."""
    agent, key = await svc.new_agent()
    await svc.send(key, [root(1, 1, "s1", 0, 3)])
    for length in (10_000, 60_000):
        reply = await svc.get(f"/api/agents/{agent}/sessions?search={'s' * length}")
        assert reply.status == 200, (length, reply.status, reply.text[:200])
        assert reply.body["sessions"] == [], reply.body
        reply = await svc.get(f"/api/experiments?agent={'a' * length}@acme")
        assert reply.status == 200 and reply.body == {"experiments": []}, (length, reply.text[:200])
