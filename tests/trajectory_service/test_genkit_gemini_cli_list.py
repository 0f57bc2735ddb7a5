"""The session list of Firebase Genkit's and Gemini CLI's own spans (ingest/attribution.py; migration 230 for the spans
stored before): the row ingest's columns give is what the trajectory counts.

Genkit writes no GenAI key: its session is the agent's (`genkit:metadata:agent:sessionId`, on each turn's root span
only), a model call an action span of subtype `model` whose usage is inside its `genkit:output` JSON (the `generate`
spans restate the last call's usage: no call). Gemini CLI declares its model requests as operation `llm_call` (its
router's too: real calls that cost tokens) and ends a failed tool's span OK, the failure only in the span's record of
the call (`gen_ai.output.messages`). The corpus test holds genkit_native's row to its trajectory; gemini-cli_native's
trajectory is short of the truth (its thoughts and cached tokens are only on a log record of no trace), so its row is
held to its trajectory here."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from evalkit.ingest import attribution, flatten
from evalkit.migrations import Backfill, DeleteRows, RedefineColumn, UpdateRows, all_migrations, migrate
from evalkit.trajectory import build, session_rows, tables
from evalkit.trajectory.mappers import gemini_cli, genkit
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.session_list import SessionQuery
from evalkit.trajectory.summary import summarise
from tests.captures import corpus
from tests.trajectory_service.conftest import Service, ServiceFactory

_MIGRATION = 230
# capture -> (LLM calls, models) its trajectory and its row count: Genkit's five calls (not its generate spans), Gemini
# CLI's eight (two of them its router's, on its lite model).
_CALLS = {"genkit_native": (5, ["gpt-4o-mini"]),
          "gemini-cli_native": (8, ["gemini-3.5-flash-lite", "gemini-3.8-flash"])}
_SHOWN = ("llm_calls", "prompt_tokens", "completion_tokens", "cached_tokens", "reasoning_tokens", "cost_usd",
          "models", "errors")


def test_ingest_names_the_emitters_conventions_as_their_mappers_do() -> None:
    """ingest/ imports nothing of trajectory/: its copies of the mappers' names are held equal here."""
    assert (attribution.GENKIT_SCOPE, attribution.GENKIT_TYPE, attribution.GENKIT_SUBTYPE,
            attribution.GENKIT_OUTPUT) == (genkit.SCOPE, genkit.TYPE, genkit.SUBTYPE, genkit.OUTPUT)
    assert genkit.SESSION_ID in attribution.SESSION_KEYS and genkit.SESSION_ID in build.SESSION_ID_ATTRIBUTES
    assert (attribution.GEMINI_CLI_SCOPE, attribution.GEMINI_CLI_LLM_CALL) == (gemini_cli.SCOPE, gemini_cli.LLM_CALL)


def _shown(row: dict[str, Any]) -> dict[str, Any]:
    return {f: sorted(row[f]) if f == "models" else round(row[f] or 0, 12) if f == "cost_usd" else row[f]
            for f in _SHOWN}


def _as_counted(document: dict[str, Any]) -> dict[str, Any]:
    """The trajectory's figures as the list shows them (the errors a flag: the list counts failed spans)."""
    steps = corpus.llm_steps(document)
    final = document.get("final_metrics") or {}
    return {"llm_calls": len(steps), "prompt_tokens": final.get("total_prompt_tokens") or 0,
            "completion_tokens": final.get("total_completion_tokens") or 0,
            "cached_tokens": final.get("total_cached_tokens") or 0,
            "reasoning_tokens": sum(((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens") or 0
                                    for s in steps),
            "cost_usd": round(final.get("total_cost_usd") or 0, 12),
            "models": sorted({str(s["model_name"]) for s in steps if s.get("model_name")}),
            "errors": summarise(document).errors > 0}


async def _replayed(svc: Service, capture_name: str, agent_name: str = "bot") -> tuple[str, str]:
    """A new agent the capture was replayed into (no session attribute: as a user sends it), and its session."""
    capture = corpus.load(capture_name)
    agent, key = await svc.new_agent(agent_name)
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    return agent, str(capture.session_id)


async def _trajectory(svc: Service, agent: str, session: str, capture_name: str) -> dict[str, Any]:
    """The session's trajectory's figures, as the list shows them."""
    reply = await svc.get(f"/api/agents/{agent}/sessions/{session}/trajectory?wait=10")
    assert reply.status == 200, reply.text
    assert reply.body["session_id"] == session
    counted = _as_counted(reply.body)
    assert (counted["llm_calls"], counted["models"]) == _CALLS[capture_name]
    assert counted["errors"] and counted["cost_usd"]
    return counted


async def _listed(svc: Service, agent: str) -> list[dict[str, Any]]:
    rows = (await svc.get(f"/api/agents/{agent}/sessions")).body["sessions"]
    # The sorts by cost and span count (the per-trace summary's bounds and sets) list them as the page does.
    for sort in ("cost", "spans"):
        assert (await svc.get(f"/api/agents/{agent}/sessions?sort={sort}")).body["sessions"] == rows
    return rows


@pytest.mark.parametrize("capture_name", ["genkit_native", "gemini-cli_native"])
async def test_a_session_is_listed_as_its_trajectory_counts_it(svc: Service, capture_name: str) -> None:
    agent, session = await _replayed(svc, capture_name)
    counted = await _trajectory(svc, agent, session, capture_name)
    (row,) = await _listed(svc, agent)
    assert row["session_id"] == session
    assert {**_shown(row), "errors": row["errors"] > 0} == counted


def _stored_before_230(svc: Service) -> None:
    """The data directory, and the service's ingest, as a service before migration 230 left them: the flattener's
    statement with neither emitter's rules (no Genkit session key; scopes no span has) and `failed` without Gemini
    CLI's tool rule."""
    flattener = svc.running.service.flattener
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(attribution, "SESSION_KEYS", tuple(k for k in attribution.SESSION_KEYS if k != genkit.SESSION_ID))
        patch.setattr(attribution, "GENKIT_SCOPE", "-")
        patch.setattr(attribution, "GEMINI_CLI_SCOPE", "-")
        before = flatten.span_rows()
    assert before != flattener._statement == flatten.span_rows()
    flattener._statement = before
    store = svc.running.store
    failed = tables._FAILED.replace(f" OR ({tables._GEMINI_CLI_TOOL_FAILED})", "")
    assert failed != tables._FAILED
    store.command(f"ALTER TABLE {store.database}.spans MODIFY COLUMN failed Bool MATERIALIZED {failed}")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version >= {_MIGRATION}")


def _stored(svc: Service, agent: str) -> list[tuple[Any, ...]]:
    """The columns migration 230 sets, span by span."""
    return [tuple(row) for row in svc.running.store.query(
        "SELECT span_id, session_id, is_llm_call, operation, model, input_tokens, output_tokens, cache_read_tokens, "
        "reasoning_tokens, failed FROM spans FINAL WHERE agent_id = {a:String} ORDER BY span_id", {"a": agent})]


def _derived(svc: Service, agent: str) -> list[tuple[Any, ...]]:
    """The session index (by session and by trace) and the per-trace summary (models, failing, usage per (model,
    provider): the list's cost bound), as the list reads them."""
    store = svc.running.store
    index = store.query("SELECT session_id, trace_id FROM session_traces WHERE agent_id = {a:String} "
                        "GROUP BY session_id, trace_id ORDER BY session_id, trace_id", {"a": agent})
    by_trace = store.query("SELECT trace_id, session_id FROM trace_sessions WHERE agent_id = {a:String} "
                           "GROUP BY trace_id, session_id ORDER BY trace_id, session_id", {"a": agent})
    summary = store.query("SELECT trace_id, arraySort(groupUniqArrayArray(models)), max(failing), sumMap(llm_usage) "
                          "FROM trace_summary WHERE agent_id = {a:String} GROUP BY trace_id ORDER BY trace_id",
                          {"a": agent})
    return [tuple(row) for rows in (index, by_trace, summary) for row in rows]


async def _mutations_done(svc: Service) -> None:
    """`failed` of the spans stored before is computed again in the background (a mutation)."""
    store = svc.running.store
    for _ in range(100):
        if not store.query("SELECT count() FROM system.mutations WHERE database = {db:String} AND table = 'spans' "
                           "AND NOT is_done", {"db": store.database})[0][0]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError("the spans' mutations are not done")


@pytest.mark.parametrize("capture_name", ["genkit_native", "gemini-cli_native"])
async def test_a_session_stored_before_migration_230_is_listed_as_its_trajectory_counts_it(
        start_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch, capture_name: str) -> None:
    """Before migration 230 the list showed no Genkit session at all (none of its spans named one or did work the
    sessionless index knows) and Gemini CLI's with no call, token, cost or error. Once it has run, the spans stored
    before hold what ingest stores now, and the list (its rows, the sorts' bounds, the kept rows kept again) shows
    the trajectory's figures; run again, it changes nothing; spans stored after are right as stored."""
    from tests.trajectory_service.test_session_rows import _keep_all  # it imports test_session_list_summary

    svc = await start_service()
    store = svc.running.store
    _stored_before_230(svc)
    agent, session = await _replayed(svc, capture_name)
    prices = PriceBook.from_file(svc.running.settings.data_dir / "prices.yaml")

    def kept() -> list[dict[str, Any]] | None:
        page = session_rows.page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [_shown(row.view(0, 0)) for row in page.rows]

    before = await _listed(svc, agent)
    if capture_name == "genkit_native":
        assert before == []
        assert (await svc.get(f"/api/agents/{agent}/sessions/{session}/trajectory")).status == 404
    else:
        (row,) = before
        assert (row["session_id"], row["llm_calls"], row["prompt_tokens"], row["cost_usd"], row["errors"]) == (
            session, 0, 0, 0, 0)
    # ... and its rows kept in the format before (`session_rows._ROW_FORMAT`).
    monkeypatch.setattr(session_rows, "_ROW_FORMAT", "rows-22")
    assert _keep_all(store, prices) == len(before)
    assert kept() == [_shown(row) for row in before]
    monkeypatch.undo()

    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= _MIGRATION)
    await _mutations_done(svc)
    counted = await _trajectory(svc, agent, session, capture_name)
    (row,) = await _listed(svc, agent)
    assert row["session_id"] == session
    assert {**_shown(row), "errors": row["errors"] > 0} == counted
    right = _shown(row)
    # The rows kept before are not used until kept again, and then show it so.
    assert kept() is None
    _keep_all(store, prices)
    assert kept() == [right]
    migrated, derived = _stored(svc, agent), _derived(svc, agent)

    # Run again, it changes nothing, and summarises the same traces the same.
    (migration,) = [m for m in tables.MIGRATIONS if m.version == _MIGRATION]
    for step in migration.tables:
        assert isinstance(step, (RedefineColumn, UpdateRows, DeleteRows, Backfill))
        for statement in step.statements(store.database, store.cluster):
            store.command(statement)
    await _mutations_done(svc)
    assert (_stored(svc, agent), _derived(svc, agent)) == (migrated, derived)
    assert [_shown(row) for row in await _listed(svc, agent)] == [right]

    # The service as it is now: spans stored from now on are right as they are stored, span by span as the migration
    # set them (the replay keeps the capture's ids), their traces indexed and summarised as the migration did.
    svc.running.service.flattener._statement = flatten.span_rows()
    again, _ = await _replayed(svc, capture_name, "again")
    assert await _trajectory(svc, again, session, capture_name) == counted
    assert [_shown(row) for row in await _listed(svc, again)] == [right]
    assert (_stored(svc, again), _derived(svc, again)) == (migrated, derived)
