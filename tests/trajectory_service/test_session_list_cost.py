"""The session list by cost, read in the order of a bound of each session's cost (migration 206,
`_page_by_cost`): exactly the sessions and order of pricing every session (`_priced_first`), page by page,
with calls sent twice, wrapping LLM spans, reported costs, cached tokens, unpriced models and ties in
cost (every capture likewise: test_session_list_captures.py); what was stored before migration 206 bounded
by its backfill, and before migration 207 (whose call columns it computes) listed as what was stored after
it; and a price book that gives no bound (a price by date) answered by pricing every session."""

from __future__ import annotations

import asyncio
import random
from decimal import Decimal
from typing import Any

import pytest

from evalkit.migrations import Backfill, migrate
from evalkit.trajectory import session_list, tables
from evalkit.trajectory.prices import PriceBook, PriceRule, TokenCounts
from evalkit.trajectory.session_list import SessionQuery, list_sessions
from tests.captures import corpus
from tests.trajectory_service.conftest import Service, chat, root
from tests.trajectory_service.test_session_list_pages import _mixed_traces, _walk
from tests.trajectory_service.test_session_list_summary import wait_flattened

_MODELS = ("test-model", "gpt-4o-mini", "claude-sonnet-4-20250514", "unknown-model-x")


def _costly_sessions(rng: random.Random) -> list[tuple[list[Any], int]]:
    """(spans, times sent) of 36 sessions of one or two traces whose costs differ, tie, or are unknown."""
    sessions: list[tuple[list[Any], int]] = []
    for n in range(36):
        sid, spans = f"c-{n:02d}", []
        for t in range(1 + n % 2):
            trace = 1000 + 10 * n + t
            base = trace * 100
            start = rng.uniform(0, 4000)
            spans.append(root(trace, base, sid, start, start + 50))
            for c in range(rng.randrange(1, 4)):
                model = _MODELS[rng.randrange(3)] if n % 9 else _MODELS[3]
                extra: dict[str, Any] = {"gen_ai.provider.name": "anthropic"} if model.startswith("claude") else {}
                if n % 5 == 0:
                    extra["gen_ai.usage.cache_read.input_tokens"] = rng.randrange(0, 50)
                if n % 7 == 3:
                    extra["llm.cost.total"] = round(rng.uniform(0.0001, 0.01), 6)
                call = chat(trace, base + 10 + c, base, start + 1 + c, model=model, inputs=rng.randrange(50, 5000),
                            outputs=rng.randrange(5, 500), **extra)
                spans.append(call)
                if n % 4 == 1:  # a framework's LLM span around the client library's: one call, not two
                    wrapper = chat(trace, base + 50 + c, base, start + 1 + c, model=model,
                                   inputs=rng.randrange(50, 5000), outputs=rng.randrange(5, 500))
                    call.parent_span_id = wrapper.span_id
                    spans.append(wrapper)
        sessions.append((spans, 3 if n % 6 == 2 else 1))
    # Two sessions costing the same as a third, apart in time: ties go by recency, then id.
    for n, offset in ((90, 0.0), (91, 100.0), (92, 100.0)):
        trace = 5000 + n
        sessions.append(([root(trace, trace * 100, f"tie-{n}", 10.0 + offset, 20.0 + offset),
                          chat(trace, trace * 100 + 1, trace * 100, 11.0 + offset, inputs=1234, outputs=56)], 1))
    return sessions


async def _send_costly(svc: Service, key: str, seed: int) -> None:
    for spans, times in _costly_sessions(random.Random(seed)):
        for n in range(times):  # each a request of its own: a client retrying
            await svc.send(key, spans if n % 2 == 0 else spans[::-1], service_name=f"agent-{n}")
    for batch in _mixed_traces(random.Random(seed)):
        await svc.send(key, batch)


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["session_id"] for row in rows]


async def _priced_everyone(svc: Service, monkeypatch: pytest.MonkeyPatch, agent: str) -> list[dict[str, Any]]:
    """The list by cost as pricing every session gives it (the bound's reference)."""
    with monkeypatch.context() as patch:
        patch.setattr(session_list, "_page_by_cost", lambda *args: None)
        return (await svc.get(f"/api/agents/{agent}/sessions?sort=cost&limit=1000")).body["sessions"]


async def test_the_sort_by_cost_matches_pricing_every_session_at_every_page_boundary(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent()
    await _send_costly(svc, key, 206)
    expected = await _priced_everyone(svc, monkeypatch, agent)
    costs = [row["cost_usd"] for row in expected]
    assert len(expected) > 60 and None in costs and len({c for c in costs if c is not None}) > 30
    assert [row["session_id"] for row in expected if row["session_id"].startswith("tie-")] == [
        "tie-91", "tie-92", "tie-90"]
    base = f"/api/agents/{agent}/sessions?sort=cost"
    assert (await svc.get(f"{base}&limit=1000")).body["sessions"] == expected
    # The bound counts what the list does not (a copy of a call, a wrapping span): it is above the cost.
    read: list[int] = []
    original = session_list.read_sessions

    def counting(store: Any, agent_id: str, sessions: Any, prices: Any, summarised: bool = False) -> Any:
        read.append(len(sessions))
        return original(store, agent_id, sessions, prices, summarised)

    monkeypatch.setattr(session_list, "read_sessions", counting)
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    for limit in (3, 11):
        rows = [r for offset in range(0, len(expected), limit) for r in (await svc.get(
            f"{base}&limit={limit}&offset={offset}")).body["sessions"]]
        assert rows == expected, limit
        walked = [s for page in await _walk(svc, base, limit) for s in page]
        assert walked == _ids(expected), limit
    # One by one through the dearest sessions, and through the last ones (unpriced, listed last).
    singles = [*range(0, 16), *range(len(expected) - 8, len(expected))]
    assert [r for offset in singles for r in (await svc.get(f"{base}&limit=1&offset={offset}")).body[
        "sessions"]] == [expected[i] for i in singles]
    # The first pages read and priced a few sessions, not all of them.
    read.clear()
    first = (await svc.get(f"{base}&limit=3")).body
    assert first["sessions"] == expected[:3] and first["has_more"]
    assert 0 < sum(read) < len(expected) // 2
    # Past as many keys by bound as it reads, every session is priced: the same page.
    monkeypatch.setattr(session_list, "_MAX_BOUND_KEYS", 2)
    assert (await svc.get(f"{base}&limit=2&offset=4")).body["sessions"] == expected[4:6]


async def test_a_cost_floor_prices_only_sessions_whose_bound_reaches_it_in_every_order(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent()
    await _send_costly(svc, key, 61)
    everyone = await _priced_everyone(svc, monkeypatch, agent)
    costs = sorted(row["cost_usd"] for row in everyone if row["cost_usd"] is not None)
    floor = costs[len(costs) // 2]
    above = [row for row in everyone if row["cost_usd"] is not None and row["cost_usd"] >= floor]
    assert 10 < len(above) < len(everyone) // 2
    priced: list[int] = []
    originals = session_list._price, session_list.read_sessions

    def pricing(store: Any, agent_id: str, rows: Any, prices: Any) -> Any:
        priced.append(len(rows))
        return originals[0](store, agent_id, rows, prices)

    def reading(store: Any, agent_id: str, sessions: Any, prices: Any, summarised: bool = False) -> Any:
        priced.append(len(sessions))
        return originals[1](store, agent_id, sessions, prices, summarised)

    for sort in ("cost", "last_seen", "first_seen", "spans"):
        query = f"/api/agents/{agent}/sessions?sort={sort}&min_cost={floor}"
        with monkeypatch.context() as patch:  # the reference: every session priced
            patch.setattr(session_list, "_page_by_cost", lambda *args: None)
            patch.setattr(session_list, "_floor_by_cost", lambda *args: None)
            expected = (await svc.get(query + "&limit=1000")).body["sessions"]
        assert sorted(_ids(expected)) == sorted(_ids(above)), sort
        if sort == "cost":
            assert expected == above
        if sort == "spans":  # by count across pages, not only within one
            assert _ids(expected) == [r["session_id"] for r in sorted(
                above, key=lambda r: (-r["span_count"], r["session_id"]))]
        with monkeypatch.context() as patch:
            # What prices sessions: by cost, reading them (`_read`); in another order, `_price` (then the page
            # is read).
            if sort == "cost":
                patch.setattr(session_list, "read_sessions", reading)
            else:
                patch.setattr(session_list, "_price", pricing)
            patch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
            for limit in (3, 1000):
                priced.clear()
                rows = [r for offset in range(0, len(expected), limit) for r in (await svc.get(
                    f"{query}&limit={limit}&offset={offset}")).body["sessions"]]
                assert rows == expected, (sort, limit)
            # One request priced fewer sessions than there are (those whose bound reaches the floor).
            assert 0 < sum(priced) < len(everyone) * 3 // 4, sort


async def test_migration_206_bounds_what_was_stored_before_it_and_re_running_it_changes_nothing(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent()
    store = svc.running.store
    # The data directory as a service before migration 206 left it: 205's view, no cost bound.
    store.command(f"DROP VIEW {store.database}.{tables.TRACE_SUMMARY_SEARCHED_FEED.name}")
    store.command(f"ALTER TABLE {store.database}.trace_summary DROP COLUMN llm_usage")
    for statement in tables.TRACE_SUMMARY_COUNTED_FEED.statements(store.database, store.cluster):
        store.command(statement)
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version IN (206, 212, 225)")
    await _send_costly(svc, key, 7)
    sent = len({(s.trace_id, s.span_id) for spans, _ in _costly_sessions(random.Random(7)) for s in spans}) + len(
        {(s.trace_id, s.span_id) for batch in _mixed_traces(random.Random(7)) for s in batch})
    assert await wait_flattened(store, agent, sent) == sent  # every span in `spans` before the migration runs
    span_rows = "SELECT sum(span_rows) FROM trace_summary WHERE agent_id = {agent:String}"
    counted_before = store.query(span_rows, {"agent": agent})
    assert migrate(store) == [206, 212, 225]
    expected = await _priced_everyone(svc, monkeypatch, agent)
    base = f"/api/agents/{agent}/sessions?sort=cost"
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    assert [r for offset in range(0, len(expected), 4) for r in (await svc.get(
        f"{base}&limit=4&offset={offset}")).body["sessions"]] == expected
    # The span-count bound of 205 is not counted again by 206's copy.
    assert store.query(span_rows, {"agent": agent}) == counted_before
    # Copied twice (a migration cut short and re-run): the same list.
    [migration] = [m for m in tables.MIGRATIONS if m.version == 206]
    for step in migration.tables:
        if isinstance(step, Backfill):
            for statement in step.statements(store.database, store.cluster):
                store.command(statement)
    assert [r for offset in range(0, len(expected), 4) for r in (await svc.get(
        f"{base}&limit=4&offset={offset}")).body["sessions"]] == expected
    # And calls arriving after it are bounded by the new view.
    await svc.send(key, [root(9999, 999900, "s-dear", 0.0, 1.0),
                         chat(9999, 999901, 999900, 0.5, inputs=10**7, outputs=10**6)])
    assert _ids((await svc.get(f"{base}&limit=1")).body["sessions"]) == ["s-dear"]


async def test_migrations_207_and_213_list_spans_stored_before_them_as_those_stored_after(svc: Service) -> None:
    store = svc.running.store
    before, before_key = await svc.new_agent("before")
    after, after_key = await svc.new_agent("after")
    # The data directory as a service before migration 207 left it: no call columns in `spans`.
    store.command(f"ALTER TABLE {store.database}.spans DROP COLUMN call_response_id, DROP COLUMN prepares_call")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version IN (207, 213)")
    # Every capture: OpenInference's preparing steps, calls reported twice.
    await asyncio.to_thread(corpus.replay_every, svc.running.otlp_http, before_key)
    # Every acknowledged span in `spans` before the migration runs (the flattener's own ledger says so).
    assert await asyncio.to_thread(svc.running.service.staging.caught_up, 60.0)
    assert migrate(store) == [207, 213]
    await asyncio.to_thread(corpus.replay_every, svc.running.otlp_http, after_key)
    assert await asyncio.to_thread(svc.running.service.staging.caught_up, 60.0)

    async def listed(agent: str) -> list[list[dict[str, Any]]]:
        # (Not the status: it says whether a session has been quiet long enough, which the time decides.)
        return [[{k: v for k, v in row.items() if k != "status"}
                 for row in (await svc.get(f"/api/agents/{agent}/sessions?limit=1000{query}")).body["sessions"]]
                for query in ("", "&sort=cost", "&sort=spans")]

    stored_before = await listed(before)
    assert len(stored_before[0]) > len(corpus.names()) // 2
    assert sum(row["steps"] for row in stored_before[0]) > 50
    assert stored_before == await listed(after)
    # Re-run (a migration cut short): nothing changes.
    [migration] = [m for m in tables.MIGRATIONS if m.version == 207]
    for step in migration.tables:
        for statement in step.statements(store.database, store.cluster):
            store.command(statement)
    assert await listed(before) == stored_before


async def test_a_price_by_date_gives_no_bound_and_every_session_is_priced(svc: Service) -> None:
    agent, key = await svc.new_agent()
    await _send_costly(svc, key, 3)
    store = svc.running.store
    dated = PriceBook([PriceRule(model="test-model*", input=Decimal(1), output=Decimal(4)),
                       PriceRule(model="test-model*", input=Decimal(3), output=Decimal(9), valid_from="2020-01-01")])
    query = SessionQuery(sort="cost", limit=5, offset=2)
    assert session_list._page_by_cost(store, agent, query, 8, dated, None) is None
    undated = PriceBook([PriceRule(model="test-model*", input=Decimal(3), output=Decimal(9))])
    assert session_list._page_by_cost(store, agent, query, 8, undated, None) is not None
    for prices in (dated, undated):
        everyone = session_list._priced_first(store, agent, SessionQuery(sort="cost", limit=1000), prices).rows
        page = list_sessions(store, agent, query, prices)
        assert [r.session_id for r in page.rows] == [r.session_id for r in everyone[2:7]]
        assert [r.cost_usd for r in page.rows] == [r.cost_usd for r in everyone[2:7]]


async def test_a_model_first_named_after_the_list_read_its_models_is_bounded_at_once(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The service remembers each agent's models between pages by cost (`KnownModels`): a page reads them
    only when a trace names one it does not know, and then lists the new model's sessions where they belong."""
    agent, key = await svc.new_agent()
    await _send_costly(svc, key, 8)
    store = svc.running.store
    reads: list[str] = []
    original = store.query

    def counting(sql: str, *args: Any, **kwargs: Any) -> Any:
        if sql == session_list._PRICED_MODELS:
            reads.append(sql)
        return original(sql, *args, **kwargs)

    monkeypatch.setattr(store, "query", counting)
    base = f"/api/agents/{agent}/sessions?sort=cost&limit=3"
    first = (await svc.get(base)).body["sessions"]
    assert len(reads) == 1
    assert (await svc.get(base)).body["sessions"] == first and len(reads) == 1  # nothing new: not read again
    # A session of a model no span of the agent named before, dearer than any: first at once.
    await svc.send(key, [root(9000, 900000, "dearest", 30.0, 40.0),
                         chat(9000, 900001, 900000, 31.0, model="gpt-4o", inputs=3_000_000, outputs=200_000)])
    listed = (await svc.get(base)).body["sessions"]
    assert _ids(listed) == ["dearest", *_ids(first[:2])] and len(reads) == 2
    assert listed == (await _priced_everyone(svc, monkeypatch, agent))[:3]
    floor = (await svc.get(f"/api/agents/{agent}/sessions?min_cost={listed[1]['cost_usd']}")).body["sessions"]
    assert sorted(_ids(floor)) == sorted(_ids(listed[:2])) and len(reads) == 2


def test_a_rate_bound_is_never_below_what_the_price_book_charges() -> None:
    book = PriceBook([PriceRule(model="house-*", input=Decimal(2), output=Decimal(6), cache_read=Decimal(1),
                                cache_write=Decimal(5))])
    rng = random.Random(5)
    models = [("house-1", None), ("gpt-4o", "openai"), ("gpt-4o-mini", None), ("gemini-2.5-pro", "google"),
              ("claude-sonnet-4-20250514", "anthropic"), ("claude-3-5-haiku-latest", "anthropic")]
    for model, provider in models:
        bound = book.rate_bound(model, provider)
        assert bound is not None and bound.prompt > 0 and bound.completion > 0, model
        for _ in range(200):
            prompt = rng.choice([rng.randrange(0, 1000), rng.randrange(0, 10**6)])
            cached = rng.randrange(0, prompt + 1)
            written = rng.randrange(0, prompt - cached + 1)
            tokens = TokenCounts(prompt, rng.randrange(0, 10**5), cached, written)
            priced = book.cost(tokens, model, provider)
            assert priced is not None, model
            assert priced.usd <= bound.at_most(tokens.prompt_tokens, tokens.completion_tokens), (model, tokens)
    # Tiered (long prompts dearer): the bound takes the dearest tier.
    tiered = book.rate_bound("gemini-2.5-pro", "google")
    assert tiered is not None
    long_prompt = book.cost(TokenCounts(300_000, 0), "gemini-2.5-pro", "google")
    assert long_prompt is not None and tiered.prompt == long_prompt.usd / 300_000
    # Nobody prices it: no cost, no bound above 0; no model name likewise.
    assert book.rate_bound("unknown-model-x", None) == book.rate_bound("", None)
    assert book.rate_bound("unknown-model-x", None).at_most(10**6, 10**6) == 0  # type: ignore[union-attr]
    # A dated rule: before its date another price applies, so no single bound is given.
    dated = PriceBook([PriceRule(model="house-*", input=Decimal(2), output=Decimal(6), valid_from="2025-06-01")])
    assert dated.rate_bound("house-1", None) is None
