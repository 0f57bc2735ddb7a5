"""Audio tokens and the provider's web searches priced as genai-prices prices them (trajectory/prices.py), in the
trajectory (`cost.price_step`, from each step's `metrics.extra`) and in the session list (the `spans` columns migration
225 adds, trajectory/tables.py; 227 has the searches column read pydantic-ai's count too), so that the two agree: for
the captures that hold them, for spans stored before the migrations, and in the list's order by cost (whose bound
counts the searches)."""

from __future__ import annotations

import asyncio
import json
import random
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import genai_prices
import pytest

from evalkit.migrations import AddColumn, Backfill, RedefineColumn, all_migrations, migrate
from evalkit.trajectory import session_list, session_rows, tables
from evalkit.trajectory.cost import price_step
from evalkit.trajectory.prices import PriceBook, PriceRule, TokenCounts, genai_usage
from evalkit.trajectory.session_list import SessionQuery
from tests.captures import corpus
from tests.trajectory_service.conftest import Service, ServiceFactory, http, kv, root, span
from tests.trajectory_service.test_capture_corpus import expected_cost

WHEN = datetime(2026, 6, 1, 12, tzinfo=UTC)
AUDIO = "openai-sdk_openinference_audio"
SEARCH = "anthropic-sdk_openinference_web-search"
# pydantic-ai's native tools: its chat spans count an answer's searches as `gen_ai.usage.details.web_search_requests`.
PYDANTIC_AI_SEARCHES = ("pydantic-ai_anthropic_builtin-tools", "pydantic-ai_openai-responses_builtin-tools")
_SEARCH_SCOPE = "openinference.instrumentation.anthropic"


def _genai(tokens: TokenCounts, model: str, provider: str) -> Decimal:
    """genai-prices' own `calc_price` of the same usage."""
    return Decimal(str(genai_prices.calc_price(genai_usage(tokens), model, provider_id=provider,
                                               genai_request_timestamp=WHEN).total_price))


@pytest.mark.parametrize(("model", "provider", "tokens"), [
    # gpt-audio bills audio at rates of its own; gpt-4o-audio-preview has none in the table: its audio is priced as the
    # table says, as text.
    ("gpt-audio", "openai", TokenCounts(3_096, 55, 0, 0, 89, 42)),
    ("gpt-audio", "openai", TokenCounts(2_839, 8, 0, 0, 25, 0)),
    ("gpt-audio-mini", "openai", TokenCounts(1_000, 300, 0, 0, 1_000, 300)),
    ("gpt-4o-audio-preview", "openai", TokenCounts(3_096, 55, 0, 0, 89, 42)),
    ("claude-sonnet-4-5", "anthropic", TokenCounts(691, 54, 0, 0, 0, 0, 2)),
    ("claude-sonnet-4-5", "anthropic", TokenCounts(900, 40, 300, 100, 0, 0, 3)),
    ("gpt-4o", "openai", TokenCounts(1_000, 100, 0, 0, 0, 0, 2)),
], ids=["gpt-audio", "gpt-audio-text-answer", "gpt-audio-mini", "no-audio-rate", "searches", "searches-cached",
        "openai-searches"])
def test_audio_tokens_and_searches_are_priced_as_genai_prices_prices_them(
        model: str, provider: str, tokens: TokenCounts) -> None:
    book = PriceBook()
    expected = _genai(tokens, model, provider)
    # Twice: the first call of a kind goes through genai-prices, the second through the plan kept from it.
    for _ in range(2):
        priced = book.cost(tokens, model, provider, WHEN)
        assert priced is not None and priced.usd == expected, (priced, expected)
    as_text = _genai(tokens._replace(input_audio_tokens=0, output_audio_tokens=0, web_searches=0), model, provider)
    if model == "gpt-4o-audio-preview":
        assert expected == as_text  # no audio rate: the table prices its audio tokens as text
    else:
        assert expected > as_text  # audio dearer than text, searches dearer than none

    # The trajectory's step, from its metrics: OpenInference's audio counts, or the GenAI conventions' by modality.
    extras: list[dict[str, Any]] = [{"input_audio_tokens": tokens.input_audio_tokens,
                                     "output_audio_tokens": tokens.output_audio_tokens},
                                    {"prompt_tokens_by_modality": {"audio": tokens.input_audio_tokens, "text": 1},
                                     "completion_tokens_by_modality": {"audio": tokens.output_audio_tokens}}]
    for extra in extras:
        extra |= {"cache_creation_input_tokens": tokens.cache_write_tokens, "web_search_requests": tokens.web_searches}
        step: dict[str, Any] = {
            "step_id": 1, "source": "agent", "model_name": model, "timestamp": WHEN.isoformat(),
            "extra": {"provider": provider},
            "metrics": {"prompt_tokens": tokens.prompt_tokens, "completion_tokens": tokens.completion_tokens,
                        "cached_tokens": tokens.cached_tokens, "extra": extra}}
        price_step(step, book, None)
        assert Decimal(repr(step["metrics"]["cost_usd"])) == Decimal(repr(float(expected))), step["metrics"]


def test_audio_genai_prices_cannot_price_with_cached_tokens_is_priced_as_text() -> None:
    """A Realtime model prices cached audio apart, and genai-prices refuses audio and cached tokens without the cached
    audio's count, which no emitter records: such a call's audio is priced as text (as before audio had rates of its
    own), never a failed trajectory."""
    tokens = TokenCounts(1_000, 10, 300, 0, 900, 0)
    with pytest.raises(ValueError, match="cache_audio_read_tokens"):
        _genai(tokens, "gpt-realtime", "openai")
    priced = PriceBook().cost(tokens, "gpt-realtime", "openai", WHEN)
    assert priced is not None and priced.usd == _genai(tokens._replace(input_audio_tokens=0), "gpt-realtime", "openai")
    # Without cached tokens, its audio rates.
    alone = tokens._replace(cached_tokens=0)
    priced = PriceBook().cost(alone, "gpt-realtime", "openai", WHEN)
    assert priced is not None and priced.usd == _genai(alone, "gpt-realtime", "openai")
    assert priced.usd > _genai(alone._replace(input_audio_tokens=0), "gpt-realtime", "openai")


def test_a_price_rule_prices_audio_and_searches_at_its_own_rates_and_bounds_them() -> None:
    rule = PriceRule(model="house-*", input=Decimal(2), output=Decimal(6), cache_read=Decimal(1),
                     input_audio=Decimal(40), output_audio=Decimal(80), web_search=Decimal(25))
    plain = PriceRule(model="plain-*", input=Decimal(2), output=Decimal(6))
    book = PriceBook([rule, plain])
    tokens = TokenCounts(1_000, 200, 300, 0, 100, 50, 3)
    priced = book.cost(tokens, "house-1", None)
    assert priced is not None and priced.usd == (
        (1_000 - 300 - 100) * rule.input + 300 * (rule.cache_read or 0) + 100 * (rule.input_audio or 0)
        + 150 * rule.output + 50 * (rule.output_audio or 0)) / 1_000_000 + 3 * (rule.web_search or 0) / 1_000
    # A rule with no audio or search rate: audio at its text rates, searches at none (what it says).
    as_text = book.cost(tokens._replace(input_audio_tokens=0, output_audio_tokens=0, web_searches=0), "plain-1", None)
    assert book.cost(tokens, "plain-1", None) == as_text
    # The list's bound by cost is never below what the book charges, audio, cached or searching.
    rng = random.Random(225)
    for model, provider in (("house-1", None), ("plain-1", None), ("gpt-audio", "openai"),
                            ("gpt-audio-mini", "openai"), ("claude-sonnet-4-5", "anthropic"), ("gpt-4o", "openai")):
        bound = book.rate_bound(model, provider)
        assert bound is not None, model
        for _ in range(200):
            prompt, completion = rng.randrange(1, 10**5), rng.randrange(1, 10**4)
            audio_in = rng.choice([0, rng.randrange(0, prompt + 1)])
            cached = 0 if audio_in and provider else rng.randrange(0, prompt - audio_in + 1)
            audio_out, searches = rng.choice([0, rng.randrange(completion + 1)]), rng.choice([0, rng.randrange(1, 9)])
            tokens = TokenCounts(prompt, completion, cached, 0, audio_in, audio_out, searches)
            priced = book.cost(tokens, model, provider)
            assert priced is not None, model
            assert priced.usd <= bound.at_most(prompt, completion, tokens.web_searches), (model, tokens, bound)


async def _replayed(svc: Service, name: str, agent_name: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """A capture replayed into a new agent: the agent, the session's trajectory and its row in the list."""
    capture = corpus.load(name)
    agent, key = await svc.new_agent(agent_name)
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    document = (await svc.get(f"/api/agents/{agent}/sessions/{session}/trajectory?wait=10")).body
    (row,) = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    return agent, document, row


def _expected(name: str, document: dict[str, Any]) -> Decimal:
    made = min(datetime.fromisoformat(s["timestamp"]) for s in corpus.llm_steps(document) if s.get("timestamp"))
    cost = expected_cost(corpus.GroundTruth.of(corpus.load(name).llm_log), None, made)
    assert cost is not None
    return cost


def _columns(svc: Service, agent: str) -> list[tuple[str, int, int, int]]:
    return [(str(s), int(a), int(b), int(c)) for s, a, b, c in svc.running.store.query(
        "SELECT span_id, input_audio_tokens, output_audio_tokens, web_search_requests FROM spans FINAL "
        "WHERE agent_id = {a:String} ORDER BY span_id", {"a": agent})]


def _searches_bounded(svc: Service, agent: str) -> int:
    """The web searches the per-trace summary bounds the agent's sessions' cost by (migration 225's keys)."""
    return int(svc.running.store.query(
        "SELECT sum(arraySum(arrayMap((k, n) -> if(startsWith(k.2, {p:String}), n, 0), llm_usage.1, llm_usage.2))) "
        "FROM trace_summary WHERE agent_id = {a:String}",
        {"a": agent, "p": tables.WEB_SEARCHES})[0][0] or 0)


async def test_the_captures_audio_tokens_and_searches_are_priced_alike_in_the_trajectory_and_the_list(
        svc: Service) -> None:
    from tests.trajectory_service.test_session_rows import _keep_all, _prices

    rows: dict[str, Any] = {}
    for name, counted in ((AUDIO, (253, 106, 0)), (SEARCH, (0, 0, 3)), *((n, (0, 0, 2)) for n in PYDANTIC_AI_SEARCHES)):
        agent, document, row = await _replayed(svc, name, name.split("_", 1)[-1])
        rows[name] = row
        total = Decimal(repr(document["final_metrics"]["total_cost_usd"]))
        assert abs(total - _expected(name, document)) < Decimal("1e-9"), (name, total)
        assert abs(Decimal(repr(row["cost_usd"])) - total) < Decimal("1e-9"), (name, row)
        # What ingest stored, summed over the calls, is what the log says the calls had.
        sums = tuple(sum(c[i] for c in _columns(svc, agent)) for i in (1, 2, 3))
        assert sums == counted, name
        assert _searches_bounded(svc, agent) == counted[2]
        # The kept row likewise.
        prices = _prices(svc)
        _keep_all(svc.running.store, prices)
        page = session_rows.page_of_kept_rows(svc.running.store, agent, SessionQuery(), prices)
        assert page is not None and [r.view(0, 0)["cost_usd"] for r in page.rows] == [row["cost_usd"]]
    # The searches' capture costs its tokens plus its three searches, as genai-prices prices a search.
    truth = corpus.GroundTruth.of(corpus.load(SEARCH).llm_log)
    searches = [c.web_search_requests for c in truth.calls]
    assert sum(searches) == 3
    tokens_only = sum(_genai(TokenCounts(c.input_tokens, c.output_tokens), str(c.model), "anthropic")
                      for c in truth.calls)
    with_searches = sum(_genai(TokenCounts(c.input_tokens, c.output_tokens, web_searches=c.web_search_requests),
                               str(c.model), "anthropic") for c in truth.calls)
    per_search = _genai(TokenCounts(0, 0, web_searches=1), "claude-sonnet-4-5", "anthropic")
    assert with_searches == tokens_only + 3 * per_search and per_search > 0
    assert abs(Decimal(repr(rows[SEARCH]["cost_usd"])) - with_searches) < Decimal("1e-9")


async def _stored_before_225(svc: Service) -> None:
    """The store, and the service's ingest, as before migration 225: `spans` without its columns, the per-trace
    summary fed by 212's view."""
    store, db = svc.running.store, svc.running.store.database
    store.command(f"DROP VIEW {db}.{tables.TRACE_SUMMARY_SEARCHED_FEED.name}")
    for statement in tables.TRACE_SUMMARY_FAILED_FEED.statements(db, store.cluster):
        store.command(statement)
    for column in tables.AUDIO_AND_SEARCH_COLUMNS:
        store.command(f"ALTER TABLE {db}.spans DROP COLUMN {column.split()[0]}")
    store.command(f"DELETE FROM {db}.schema_migrations WHERE version >= 225")


async def test_spans_stored_before_migration_225_are_priced_as_those_stored_after_and_re_running_it_changes_nothing(
        svc: Service) -> None:
    store = svc.running.store
    await _stored_before_225(svc)
    before: dict[str, tuple[str, dict[str, Any]]] = {}
    for name in (AUDIO, SEARCH):
        capture = corpus.load(name)
        agent, key = await svc.new_agent(f"before-{name.split('_')[-1]}")
        await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
        document = (await svc.get(f"/api/agents/{agent}/sessions/{capture.session_id}/trajectory?wait=10")).body
        before[name] = (agent, document)
    stored = {name: store.query("SELECT count() FROM spans WHERE agent_id = {a:String}", {"a": agent})[0][0]
              for name, (agent, _) in before.items()}
    assert all(stored.values()), stored
    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= 225)
    for _ in range(100):  # the spans stored before are written again in the background (a mutation)
        if not store.query("SELECT count() FROM system.mutations WHERE database = {db:String} AND table = 'spans' "
                           "AND NOT is_done", {"db": store.database})[0][0]:
            break
        await asyncio.sleep(0.1)

    async def listed(agent: str) -> Any:
        return (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]

    for name, (agent, document) in before.items():
        # Stored after it: the same capture, as the service ingests it now.
        again, after_document, after_row = await _replayed(svc, name, f"after-{name.split('_')[-1]}")
        assert _columns(svc, agent) == _columns(svc, again) and any(sum(c[1:]) for c in _columns(svc, again))
        assert _searches_bounded(svc, agent) == _searches_bounded(svc, again)
        (row,) = await listed(agent)
        assert row == {**after_row, "last_seen": row["last_seen"], "first_seen": row["first_seen"]}
        assert abs(Decimal(repr(row["cost_usd"])) - _expected(name, document)) < Decimal("1e-9")
        assert document["final_metrics"] == after_document["final_metrics"]
    # Run again (a migration cut short): the columns, the list and its order by cost as they were.
    shown = {name: (_columns(svc, agent), await listed(agent)) for name, (agent, _) in before.items()}
    (migration,) = [m for m in tables.MIGRATIONS if m.version == 225]
    assert {type(step) for step in migration.tables} >= {AddColumn, RedefineColumn, Backfill}
    for step in migration.tables:
        for statement in step.statements(store.database, store.cluster):
            store.command(statement)
    for name, (agent, _) in before.items():
        assert (_columns(svc, agent), await listed(agent)) == shown[name]
        by_cost = (await svc.get(f"/api/agents/{agent}/sessions?sort=cost")).body["sessions"]
        assert by_cost == shown[name][1]


def _searching_call(trace: int, span_id: int, parent: int, start_s: float, inputs: int, outputs: int,
                    searches: int) -> Any:
    """OpenInference's anthropic LLM span of a call whose answer ran `searches` web searches."""
    result = span(trace, span_id, parent, "messages.create", start_s, start_s + 0.5)
    attributes: dict[str, Any] = {"openinference.span.kind": "LLM", "llm.provider": "anthropic",
                                  "llm.model_name": "claude-sonnet-4-5", "llm.token_count.prompt": inputs,
                                  "llm.token_count.completion": outputs}
    if searches:
        attributes["metadata"] = json.dumps({"server_tool_use": {"web_fetch_requests": 0,
                                                                  "web_search_requests": searches}})
    result.attributes.extend(kv(k, v) for k, v in attributes.items())
    return result


async def test_a_session_its_searches_make_dearest_is_first_by_cost_and_above_a_floor(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The list by cost reads sessions in the order of a bound of their cost, and a cost floor prices only the sessions
    whose bound reaches it: the searches are in the bound, or a session of few tokens and many searches would be
    ranked below sessions of more tokens that cost less, and left out above a floor it passes."""
    from opentelemetry.proto.collector.trace.v1 import trace_service_pb2
    from opentelemetry.proto.common.v1 import common_pb2
    from opentelemetry.proto.resource.v1 import resource_pb2
    from opentelemetry.proto.trace.v1 import trace_pb2

    agent, key = await svc.new_agent()
    spans = [root(1, 10, "searching", 0.0, 1.0), _searching_call(1, 11, 10, 0.1, 1_000, 100, 8)]
    for i in range(20):  # sessions of more tokens and no search, each dearer by its tokens alone
        spans += [root(100 + i, 1000 + i, f"talking-{i:02}", 2.0 + i, 3.0 + i),
                  _searching_call(100 + i, 2000 + i, 1000 + i, 2.1 + i, 10_000 + 100 * i, 500, 0)]
    request = trace_service_pb2.ExportTraceServiceRequest(resource_spans=[trace_pb2.ResourceSpans(
        resource=resource_pb2.Resource(attributes=[kv("service.name", "agent")]),
        scope_spans=[trace_pb2.ScopeSpans(scope=common_pb2.InstrumentationScope(name=_SEARCH_SCOPE), spans=spans)])])
    reply = await asyncio.to_thread(http, "POST", svc.running.otlp_http + "/v1/traces", None, key,
                                    request.SerializeToString(), "application/x-protobuf")
    assert reply.status == 200, reply.text
    with monkeypatch.context() as patch:  # every session priced: the reference
        patch.setattr(session_list, "_page_by_cost", lambda *args: None)
        expected = (await svc.get(f"/api/agents/{agent}/sessions?sort=cost&limit=1000")).body["sessions"]
    assert expected[0]["session_id"] == "searching" and len(expected) == 21
    talking = [r["cost_usd"] for r in expected if r["session_id"].startswith("talking-")]
    assert expected[0]["cost_usd"] > max(talking)
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    for limit in (1, 3):
        page = (await svc.get(f"/api/agents/{agent}/sessions?sort=cost&limit={limit}")).body["sessions"]
        assert page == expected[:limit], limit
    floor = expected[0]["cost_usd"] * 0.999
    assert [r["session_id"] for r in (await svc.get(
        f"/api/agents/{agent}/sessions?min_cost={floor}")).body["sessions"]] == ["searching"]


async def test_the_columns_read_each_key_as_a_count_in_either_map_the_first_usable_first(
        start_service: ServiceFactory) -> None:
    for threshold in (1024, 2):  # a threshold below a count's length: the count is a payload
        svc = await start_service(payload_threshold_bytes=threshold)
        agent, key = await svc.new_agent()
        call = {"gen_ai.operation.name": "chat"}
        spans = {
            "openinference": {**call, "llm.token_count.prompt_details.audio": 25,
                              "llm.token_count.completion_details.audio": 7},
            "conventions": {**call, "gen_ai.usage.audio.input_tokens": 12.9, "gen_ai.usage.audio.output_tokens": " 4 "},
            "ranked first": {**call, "llm.token_count.prompt_details.audio": 30, "gen_ai.usage.audio.input_tokens": 9},
            "unusable": {**call, "llm.token_count.prompt_details.audio": "n/a", "gen_ai.usage.audio.input_tokens": 6},
            "negative": {**call, "llm.token_count.prompt_details.audio": -5},
            "no call": {"gen_ai.operation.name": "execute_tool", "llm.token_count.prompt_details.audio": 8},
            "searching elsewhere": {**call, "metadata": json.dumps({"server_tool_use": {"web_search_requests": 2}})},
            "pydantic-ai": {**call, "gen_ai.usage.details.web_search_requests": 2},
            "pydantic-ai, a string": {**call, "gen_ai.usage.details.web_search_requests": " 3 "},
            "pydantic-ai, no call": {"gen_ai.operation.name": "invoke_agent",
                                     "gen_ai.usage.details.web_search_requests": 4},
        }
        await svc.send(key, [span(1, 10 + i, None, name, 0.0, 1.0, **{k.replace(".", "__"): v for k, v in a.items()})
                             for i, (name, a) in enumerate(spans.items())])
        rows = svc.running.store.query(
            "SELECT name, input_audio_tokens, output_audio_tokens, web_search_requests, "
            "hasAny(mapKeys(payloads), ['llm.token_count.prompt_details.audio']) FROM spans FINAL "
            "WHERE agent_id = {a:String}", {"a": agent})
        assert {str(n): (int(i), int(o), int(w)) for n, i, o, w, _ in rows} == {
            "openinference": (25, 7, 0), "conventions": (12, 4, 0), "ranked first": (30, 0, 0), "unusable": (6, 0, 0),
            "negative": (0, 0, 0), "no call": (0, 0, 0),
            # Only OpenInference anthropic's metadata counts the provider's searches (the trajectory reads it there),
            # and pydantic-ai's count on a call's span (migration 227), read as a count is.
            "searching elsewhere": (0, 0, 0), "pydantic-ai": (0, 0, 2), "pydantic-ai, a string": (0, 0, 3),
            "pydantic-ai, no call": (0, 0, 0)}
        assert any(bool(p) for *_, p in rows) == (threshold == 2)


async def test_pydantic_ai_searches_stored_before_migration_227_are_priced_as_those_stored_after(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spans stored before 227 (its searches column OpenInference anthropic's alone) are priced once it runs as
    those stored after: the column computed again, the per-trace summary given their searches' keys, the session rows
    kept before not used until kept again (`session_rows._ROW_FORMAT`); run again, the columns and the list as they
    were."""
    from tests.trajectory_service.test_session_rows import _keep_all, _prices

    store, db = svc.running.store, svc.running.store.database
    store.command(f"ALTER TABLE {db}.spans MODIFY COLUMN {tables.AUDIO_AND_SEARCH_COLUMNS[2]}")
    store.command(f"DELETE FROM {db}.schema_migrations WHERE version >= 227")
    before: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
    for name in PYDANTIC_AI_SEARCHES:
        before[name] = await _replayed(svc, name, f"before-{name.split('_', 1)[-1]}")
        agent, document, row = before[name]
        assert sum(c[3] for c in _columns(svc, agent)) == 0 and _searches_bounded(svc, agent) == 0
        # Listed without its searches: $0.01 a search short of the trajectory's cost.
        assert Decimal(repr(document["final_metrics"]["total_cost_usd"])) - Decimal(repr(row["cost_usd"])) > \
            Decimal("0.019")
    prices = _prices(svc)

    def kept(agent: str) -> list[float] | None:
        page = session_rows.page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [r.view(0, 0)["cost_usd"] for r in page.rows]

    # The rows as the keeper kept them before 227 (in the format before it), without the searches.
    with monkeypatch.context() as patch:
        patch.setattr(session_rows, "_ROW_FORMAT", "rows-19")
        _keep_all(store, prices)
        assert all(kept(agent) == [row["cost_usd"]] for agent, _, row in before.values())
    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= 227)
    for _ in range(100):  # the spans stored before are written again in the background (a mutation)
        if not store.query("SELECT count() FROM system.mutations WHERE database = {db:String} AND table = 'spans' "
                           "AND NOT is_done", {"db": store.database})[0][0]:
            break
        await asyncio.sleep(0.1)

    async def listed(agent: str) -> Any:
        return (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]

    for name, (agent, document, _) in before.items():
        again, _after_document, after_row = await _replayed(svc, name, f"after-{name.split('_', 1)[-1]}")
        assert _columns(svc, agent) == _columns(svc, again) and sum(c[3] for c in _columns(svc, again)) == 2
        assert _searches_bounded(svc, agent) == _searches_bounded(svc, again) == 2
        (row,) = await listed(agent)
        assert row == {**after_row, "last_seen": row["last_seen"], "first_seen": row["first_seen"]}
        assert abs(Decimal(repr(row["cost_usd"])) - _expected(name, document)) < Decimal("1e-9")
        assert kept(agent) is None  # kept before: not used until kept again, then with the searches
    _keep_all(store, prices)
    for agent, _, _ in before.values():
        (row,) = await listed(agent)
        assert kept(agent) == [row["cost_usd"]]
    shown = {name: (_columns(svc, agent), await listed(agent)) for name, (agent, _, _) in before.items()}
    (migration,) = [m for m in tables.MIGRATIONS if m.version == 227]
    assert {type(step) for step in migration.tables} == {RedefineColumn, Backfill}
    for step in migration.tables:
        for statement in step.statements(store.database, store.cluster):
            store.command(statement)
    for name, (agent, _, _) in before.items():
        assert (_columns(svc, agent), await listed(agent)) == shown[name]
        assert (await svc.get(f"/api/agents/{agent}/sessions?sort=cost")).body["sessions"] == shown[name][1]
