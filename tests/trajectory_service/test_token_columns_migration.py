"""Migration 229: the token counts session 54's ingest rules changed (ingest/attribution.py: `input_tokens` adding the
cache's tokens for OpenLLMetry's Bedrock scope and OpenLIT's Anthropic one, `output_tokens` adding Langfuse's reasoning
count), set in the spans stored before, with the per-trace summary and the kept session rows that summed the old
counts. Stored as a service before 229 stored them (its flattening statement, a database whose migrations stop at
228), as the tests of 219 and 222 do (tests/trajectory_service/test_session_list_summary.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evalkit.ingest import attribution, flatten
from evalkit.migrations import Backfill, DeleteRows, UpdateRows, all_migrations, migrate
from evalkit.trajectory import session_rows, tables
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.session_list import SessionQuery
from tests.captures import corpus
from tests.trajectory_service.conftest import Service, ServiceFactory

_MIGRATION = 229


def _stored_before_229(svc: Service, before_36ea472: bool) -> None:
    """The data directory, and the service's ingest, as a service before migration 229 left them: the flattener's
    statement as session 54 found it (`input_tokens` adding the cache's tokens for OpenLIT's Anthropic scope alone,
    `output_tokens` reading Langfuse's exclusive `output` as it is), or as it was before 36ea472 (adding them for
    neither scope)."""
    flattener = svc.running.service.flattener
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(attribution, "OPENLLMETRY_BEDROCK_SCOPE", attribution.OPENLIT_ANTHROPIC_SCOPE)
        if before_36ea472:
            patch.setattr(attribution, "_cache_left_out_by_scope", lambda: "0")
        patch.setattr(attribution, "_json_output", lambda: attribution._json_counts(attribution._JSON_OUTPUT))
        before = flatten.span_rows()
    assert before != flattener._statement == flatten.span_rows()
    flattener._statement = before
    store = svc.running.store
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version >= {_MIGRATION}")


def _trace_usage(svc: Service, agent: str) -> list[tuple[Any, ...]]:
    """The per-trace summary's (trace, models, usage summed per (model, provider)): the list's cost bound."""
    return [tuple(row) for row in svc.running.store.query(
        "SELECT trace_id, arraySort(groupUniqArrayArray(models)), sumMap(llm_usage) FROM trace_summary "
        "WHERE agent_id = {a:String} GROUP BY trace_id ORDER BY trace_id", {"a": agent})]


def _stored(svc: Service, agent: str) -> list[tuple[str, int, int]]:
    return [(str(s), int(i), int(o)) for s, i, o in svc.running.store.query(
        "SELECT span_id, input_tokens, output_tokens FROM spans FINAL WHERE agent_id = {a:String} ORDER BY span_id",
        {"a": agent})]


_BEDROCK = ("bedrock-runtime_openllmetry", "gen_ai.usage.cache_read.input_tokens", {"prompt_tokens": -2550})
_LANGFUSE = ("langgraph_langfuse_openai-reasoning", "langfuse.observation.usage_details",
             {"completion_tokens": 214 - 662})
_OPENLIT_ANTHROPIC = ("anthropic-sdk_openlit", "gen_ai.usage.cache_read.input_tokens", {"prompt_tokens": -2048})
# Stored by a service before 36ea472 (no scope's cache tokens added by ingest).
_BEFORE_36EA472 = {_OPENLIT_ANTHROPIC[0]}


@pytest.mark.parametrize(("capture_name", "read_key", "wrong", "payload_threshold_bytes"), [
    # OpenLLMetry's Bedrock instrumentation records Bedrock's `inputTokens`, the cache's left out: the list's read-time
    # rule adds them only where they outnumber the rest, so only the last call (2,650 + 2,550 cached) was short.
    (*_BEDROCK, 1024),
    # Langfuse's LangChain CallbackHandler writes `output` without the reasoning tokens (`output_reasoning` beside it).
    (*_LANGFUSE, 1024),
    # OpenLIT's Anthropic instrumentation records Anthropic's `input_tokens`, the cache's left out: stored before
    # 36ea472, the streamed turn's two calls (1,126 and 1,376 uncached, 1,024 read each) were listed short.
    (*_OPENLIT_ANTHROPIC, 1024),
    # A payload threshold below the values' length: the counts, the usage JSON are payloads.
    (*_BEDROCK, 2), (*_LANGFUSE, 2), (*_OPENLIT_ANTHROPIC, 2),
], ids=["bedrock-openllmetry", "langfuse-reasoning", "openlit-anthropic", "bedrock-payloads", "langfuse-payloads",
        "openlit-anthropic-payloads"])
async def test_tokens_stored_before_migration_229_are_listed_as_the_trajectory_counts_them(
        start_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch, capture_name: str, read_key: str,
        wrong: dict[str, int], payload_threshold_bytes: int) -> None:
    """The trajectory counts each call's tokens right (computed on read); the list (its row, the kept row, the cost
    bound of the per-trace summary) summed the columns ingest stored, so before migration 229 it showed the old
    counts and their cost. Once it has run, the spans stored before hold what ingest stores now, and the list shows
    the trajectory's tokens and cost; run again, it changes nothing; spans stored after are right as stored."""
    from tests.trajectory_service.test_session_rows import _keep_all  # it imports test_session_list_summary

    svc = await start_service(payload_threshold_bytes=payload_threshold_bytes)
    store = svc.running.store
    _stored_before_229(svc, capture_name in _BEFORE_36EA472)
    capture = corpus.load(capture_name)
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    base = f"/api/agents/{agent}/sessions"
    final = (await svc.get(f"{base}/{session}/trajectory?wait=10")).body["final_metrics"]
    in_payloads = store.query("SELECT countIf(has(payloads.keys, {k:String})) FROM spans FINAL "
                              "WHERE agent_id = {a:String}", {"a": agent, "k": read_key})[0][0]
    assert (in_payloads > 0) == (payload_threshold_bytes < 3)
    right = {"prompt_tokens": final["total_prompt_tokens"], "completion_tokens": final["total_completion_tokens"],
             "cost_usd": final["total_cost_usd"]}
    assert right["cost_usd"]

    def shown(row: dict[str, Any]) -> dict[str, Any]:
        return {field: round(row[field], 12) if field == "cost_usd" else row[field] for field in right}

    async def listed() -> dict[str, Any]:
        (row,) = (await svc.get(base)).body["sessions"]
        # The sort by cost (the per-trace summary's bound first) lists it as the page does.
        assert (await svc.get(base + "?sort=cost")).body["sessions"] == [row]
        return shown(row)

    prices = PriceBook.from_file(svc.running.settings.data_dir / "prices.yaml")

    def kept() -> list[dict[str, Any]] | None:
        page = session_rows.page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [shown(row.view(0, 0)) for row in page.rows]

    before = await listed()
    assert {field: before[field] - right[field] for field in wrong} == wrong
    assert before["cost_usd"] < round(right["cost_usd"], 12)
    summary_before = _trace_usage(svc, agent)
    # ... and its session row kept in the format before (`session_rows._ROW_FORMAT`).
    monkeypatch.setattr(session_rows, "_ROW_FORMAT", "rows-21")
    assert _keep_all(store, prices) == 1
    assert kept() == [before]
    monkeypatch.undo()

    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= _MIGRATION)
    assert await listed() == shown(right)
    # A cost floor just under the trajectory's cost (the summary's bound read first) lists it.
    floor = right["cost_usd"] * (1 - 1e-9)
    assert [r["session_id"] for r in (await svc.get(f"{base}?min_cost={floor}")).body["sessions"]] == [session]
    # The rows kept before are not used until kept again, and then show it so.
    assert kept() is None
    _keep_all(store, prices)
    assert kept() == [shown(right)]
    migrated, summary = _stored(svc, agent), _trace_usage(svc, agent)
    assert summary != summary_before

    # Nothing is left to set; run again, it changes nothing, and summarises the same traces the same.
    for unset in (tables.INPUT_TOKENS_UNSET_229, tables.OUTPUT_TOKENS_UNSET_229):
        assert store.query("SELECT count() FROM spans WHERE agent_id = {a:String} AND " + unset, {"a": agent}) == [(0,)]
    (migration,) = [m for m in tables.MIGRATIONS if m.version == _MIGRATION]
    for step in migration.tables:
        assert isinstance(step, (UpdateRows, DeleteRows, Backfill))
        for statement in step.statements(store.database, store.cluster):
            store.command(statement)
    assert (_stored(svc, agent), _trace_usage(svc, agent)) == (migrated, summary)
    assert await listed() == shown(right)

    # The service as it is now: spans stored from now on are right as they are stored, span by span as the migration
    # set them (the replay keeps the capture's ids), their trace summarised as the migration summarised it again.
    svc.running.service.flattener._statement = flatten.span_rows()
    again, key = await svc.new_agent("again")
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    await svc.get(f"/api/agents/{again}/sessions/{session}/trajectory?wait=10")
    (row,) = (await svc.get(f"/api/agents/{again}/sessions")).body["sessions"]
    assert shown(row) == shown(right)
    assert (_stored(svc, again), _trace_usage(svc, again)) == (migrated, summary)
