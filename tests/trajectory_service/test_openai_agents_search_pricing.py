"""The web searches OpenAI bills in an openai-agents answer (each `web_search_call` whose action is a `search`; its
Responses usage counts none) priced alike in the trajectory (`openai_agents_hosted_tools.count_billed_searches`) and in
the session list (the `web_search_requests` column as migration 228 defines it, trajectory/tables.py): for both
instrumentations' captures, and for spans stored before the migration."""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any

import pytest

from evalkit.migrations import Backfill, RedefineColumn, all_migrations, migrate
from evalkit.trajectory import session_rows, tables
from evalkit.trajectory.session_list import SessionQuery
from tests.captures import corpus
from tests.trajectory_service.conftest import Service
from tests.trajectory_service.test_audio_and_search_pricing import _columns, _expected, _replayed, _searches_bounded

OPENINFERENCE = "openai-agents_openinference_hosted-tools"
OTEL = "openai-agents_otel-genai_hosted-tools"
# capture -> the searches its spans record: OpenTelemetry's instrumentation writes the streamed turn's answer as its
# text alone, so call 3's search is in no span (a KNOWN_GAPS entry of test_capture_corpus.py).
RECORDED = {OPENINFERENCE: 2, OTEL: 1}
_PER_SEARCH = Decimal("0.01")  # genai-prices' rate for gpt-4o's web searches, $10 a thousand


def _list_cost(row: dict[str, Any]) -> Decimal:
    return Decimal(repr(row["cost_usd"]))


async def test_the_searches_are_priced_alike_in_the_trajectory_and_the_list(svc: Service) -> None:
    for name, recorded in RECORDED.items():
        agent, document, row = await _replayed(svc, name, name.split("_", 1)[-1])
        total = Decimal(repr(document["final_metrics"]["total_cost_usd"]))
        assert sum(c[3] for c in _columns(svc, agent)) == recorded == _searches_bounded(svc, agent), name
        assert abs(_list_cost(row) - total) < Decimal("1e-9"), (name, row)
        missed = sum(c.web_search_requests for c in corpus.GroundTruth.of(corpus.load(name).llm_log).calls) - recorded
        assert abs(total + missed * _PER_SEARCH - _expected(name, document)) < Decimal("1e-9"), name


async def test_searches_stored_before_migration_228_are_priced_as_those_stored_after(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The spans stored before 228 (its searches column 227's) are priced once it runs as those stored after: the
    column computed again, the per-trace summary given their searches' keys, the session rows kept before not used
    until kept again (`session_rows._ROW_FORMAT`); run again, the columns and the list as they were."""
    from tests.trajectory_service.test_session_rows import _keep_all, _prices

    store, db = svc.running.store, svc.running.store.database
    store.command(f"ALTER TABLE {db}.spans MODIFY COLUMN {tables._WEB_SEARCH_REQUESTS_227}")
    store.command(f"DELETE FROM {db}.schema_migrations WHERE version >= 228")
    before: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = {}
    for name, recorded in RECORDED.items():
        before[name] = await _replayed(svc, name, f"before-{name.split('_', 1)[-1]}")
        agent, document, row = before[name]
        assert sum(c[3] for c in _columns(svc, agent)) == 0 and _searches_bounded(svc, agent) == 0
        # Listed without its searches: $0.01 a search short of the trajectory's cost.
        shortfall = Decimal(repr(document["final_metrics"]["total_cost_usd"])) - _list_cost(row)
        assert abs(shortfall - recorded * _PER_SEARCH) < Decimal("1e-9"), name
    prices = _prices(svc)

    def kept(agent: str) -> list[float] | None:
        page = session_rows.page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [r.view(0, 0)["cost_usd"] for r in page.rows]

    with monkeypatch.context() as patch:
        patch.setattr(session_rows, "_ROW_FORMAT", "rows-20")
        _keep_all(store, prices)
        assert all(kept(agent) == [row["cost_usd"]] for agent, _, row in before.values())
    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= 228)
    for _ in range(100):  # the spans stored before are written again in the background (a mutation)
        if not store.query("SELECT count() FROM system.mutations WHERE database = {db:String} AND table = 'spans' "
                           "AND NOT is_done", {"db": store.database})[0][0]:
            break
        await asyncio.sleep(0.1)

    async def listed(agent: str) -> Any:
        return (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]

    for name, (agent, document, _) in before.items():
        again, _after_document, after_row = await _replayed(svc, name, f"after-{name.split('_', 1)[-1]}")
        assert _columns(svc, agent) == _columns(svc, again)
        assert sum(c[3] for c in _columns(svc, again)) == RECORDED[name]
        assert _searches_bounded(svc, agent) == _searches_bounded(svc, again) == RECORDED[name]
        (row,) = await listed(agent)
        assert row == {**after_row, "last_seen": row["last_seen"], "first_seen": row["first_seen"]}
        assert abs(_list_cost(row) - Decimal(repr(document["final_metrics"]["total_cost_usd"]))) < Decimal("1e-9")
        assert kept(agent) is None  # kept before: not used until kept again, then with the searches
    _keep_all(store, prices)
    for agent, _, _ in before.values():
        (row,) = await listed(agent)
        assert kept(agent) == [row["cost_usd"]]
    shown = {name: (_columns(svc, agent), await listed(agent)) for name, (agent, _, _) in before.items()}
    (migration,) = [m for m in tables.MIGRATIONS if m.version == 228]
    assert {type(step) for step in migration.tables} == {RedefineColumn, Backfill}
    for step in migration.tables:
        for statement in step.statements(store.database, store.cluster):
            store.command(statement)
    for name, (agent, _, _) in before.items():
        assert (_columns(svc, agent), await listed(agent)) == shown[name]
        assert (await svc.get(f"/api/agents/{agent}/sessions?sort=cost")).body["sessions"] == shown[name][1]
