"""The session list's sort by span count and its errors and model filters, picked from the per-trace
summary (trajectory/tables.py, migration 204), and keyset cursors for pages by last and first seen:
the same sessions, in the same order, as a resolution of the whole index summed from the spans
themselves; every session shown with the figures a page by time shows it with; re-sent and late
spans counted once; what was stored before migration 204 summarised by its backfill."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

import pytest

from evalkit.ingest import attribution, flatten
from evalkit.migrations import Backfill, UpdateRows, all_migrations, migrate
from evalkit.trajectory import session_list, session_page, session_rows, tables
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.session_index import RESOLVED
from evalkit.trajectory.session_list import SessionQuery
from evalkit.trajectory.session_page import page_by_time, rank
from tests.captures import corpus
from tests.trajectory_service.conftest import Service, ServiceFactory, chat, root, span
from tests.trajectory_service.test_session_list_pages import _mixed_traces, _walk

# The sessions a sort or filter lists, summed from `spans FINAL` for every session of the index (as the
# list did before the summary): the reference the summary must match.
_FROM_SPANS = """
WITH resolved AS (__RESOLVED__),
pairs AS (SELECT DISTINCT session_id, trace_id FROM resolved),
per_trace AS (SELECT trace_id, count() AS spans, countIf(failed) AS errors,
                     groupUniqArrayIf(model, model != '' AND is_llm_call) AS models,
                     min(start_time) AS first_start, max(end_time) AS last_end
              FROM spans FINAL WHERE agent_id = {agent:String} GROUP BY trace_id)
SELECT p.session_id AS sid, sum(t.spans) AS span_count, sum(t.errors) AS error_count,
       groupUniqArrayArray(t.models) AS session_models, max(t.last_end) AS last_ns, min(t.first_start) AS first_ns
FROM per_trace AS t INNER JOIN pairs AS p ON t.trace_id = p.trace_id
GROUP BY p.session_id
HAVING __HAVING__
ORDER BY __ORDER__
""".replace("__RESOLVED__", RESOLVED)


def _expected(svc: Service, agent: str, having: str, order: str) -> list[str]:
    sql = _FROM_SPANS.replace("__HAVING__", having).replace("__ORDER__", order)
    return [str(r[0]) for r in svc.running.store.query(sql, {"agent": agent})]


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["session_id"] for row in rows]


async def _everyone(svc: Service, agent: str) -> dict[str, dict[str, Any]]:
    rows = (await svc.get(f"/api/agents/{agent}/sessions?limit=1000")).body["sessions"]
    return {row["session_id"]: row for row in rows}


async def _send_mixed(svc: Service, key: str, seed: int) -> None:
    rng = random.Random(seed)
    batches = _mixed_traces(rng)
    # Some failing spans and a second model, so that the filters pick a part of the sessions.
    for batch in batches:
        for s in batch[::5]:
            s.status.code = 2
        for s in batch[1::7]:
            for attribute in s.attributes:
                if attribute.key == "gen_ai.request.model":
                    attribute.value.string_value = "other-model"
    for batch in batches:
        await svc.send(key, batch)


async def test_sorts_and_filters_match_the_spans_for_a_mix_of_every_kind_of_trace(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent()
    await _send_mixed(svc, key, 204)
    everyone = await _everyone(svc, agent)
    cases = {
        "?sort=spans": ("1", "span_count DESC, sid"),
        "?errors=true": ("error_count > 0", "last_ns DESC, sid"),
        "?errors=true&sort=first_seen": ("error_count > 0", "first_ns DESC, sid"),
        "?model=other-model&sort=spans": ("has(session_models, 'other-model')", "span_count DESC, sid"),
        "?model=test-model&errors=true": ("has(session_models, 'test-model') AND error_count > 0",
                                          "last_ns DESC, sid"),
    }
    for query, (having, order) in cases.items():
        expected = _expected(svc, agent, having, order)
        assert 0 < len(expected) < len(everyone) or query == "?sort=spans", query
        got = (await svc.get(f"/api/agents/{agent}/sessions{query}&limit=1000")).body["sessions"]
        assert _ids(got) == expected, query
        # The figures of each session are those the page by time shows.
        assert got == [everyone[s] for s in expected], query
        # Paged by offset, and by cursor: the same sessions once each. (A filtered page by time walks the
        # index in list order and shows its page in the spans' order, as an unfiltered one does: the two
        # orders differ where a session's sessionless spans reach past its own, so only a sort by spans is
        # compared page by page.)
        by_offset = [s for offset in range(0, len(expected) + 7, 7) for s in _ids(
            (await svc.get(f"/api/agents/{agent}/sessions{query}&limit=7&offset={offset}")).body["sessions"])]
        walked = [s for page in await _walk(svc, f"/api/agents/{agent}/sessions{query}", 7) for s in page]
        for paged in (by_offset, walked):
            assert (paged if "sort=spans" in query else sorted(paged)) == (
                expected if "sort=spans" in query else sorted(expected)), query
        # A filter that keeps too few sessions for the walk is answered from the summary for them all.
        monkeypatch.setattr(session_list, "_WALK_SESSIONS", 3)
        assert (await svc.get(f"/api/agents/{agent}/sessions{query}&limit=1000")).body["sessions"] == got, query
        monkeypatch.undo()
    by_cost = (await svc.get(f"/api/agents/{agent}/sessions?sort=cost&limit=1000")).body["sessions"]
    assert sorted(_ids(by_cost)) == sorted(everyone) and by_cost == [everyone[s] for s in _ids(by_cost)]
    floor = (await svc.get(f"/api/agents/{agent}/sessions?min_cost=0.000001&errors=true&limit=1000")).body["sessions"]
    assert floor and floor == [everyone[s] for s in _ids(floor)]
    assert all(row["errors"] > 0 and row["cost_usd"] for row in floor)


async def test_re_sent_and_late_spans_count_once_in_the_summary(svc: Service) -> None:
    agent, key = await svc.new_agent()
    # s-a: 3 spans; s-b: 2 spans, the failing one arriving late; s-c: 1 span.
    a = [root(1, 10, "s-a", 0.0, 9.0), chat(1, 11, 10, 1.0), chat(1, 12, 10, 2.0)]
    b = [root(2, 20, "s-b", 0.0, 8.0)]
    c = [root(3, 30, "s-c", 0.0, 7.0)]
    await svc.send(key, a + b + c)
    for part in (a[:1], a[1:], a, b, c):  # a client retrying, batched differently
        await svc.send(key, part)
    base = f"/api/agents/{agent}/sessions"
    assert _ids((await svc.get(base + "?sort=spans")).body["sessions"]) == ["s-a", "s-b", "s-c"]
    assert [r["span_count"] for r in (await svc.get(base + "?sort=spans")).body["sessions"]] == [3, 1, 1]
    assert (await svc.get(base + "?errors=true")).body["sessions"] == []
    late = [span(2, 21, 20, "execute_tool search", 3.0, 4.0, error=True),
            span(2, 22, 20, "execute_tool search", 4.0, 5.0, error=True),
            chat(2, 23, 20, 5.0, model="late-model")]
    await svc.send(key, late)
    await svc.send(key, late)
    by_spans = (await svc.get(base + "?sort=spans")).body["sessions"]
    assert [(r["session_id"], r["span_count"]) for r in by_spans] == [("s-b", 4), ("s-a", 3), ("s-c", 1)]
    failing = (await svc.get(base + "?errors=true")).body["sessions"]
    assert [(r["session_id"], r["errors"]) for r in failing] == [("s-b", 2)]
    assert _ids((await svc.get(base + "?model=late-model")).body["sessions"]) == ["s-b"]


async def test_migration_204_summarises_what_was_stored_before_it_and_re_running_it_changes_nothing(
        svc: Service) -> None:
    agent, key = await svc.new_agent()
    await _send_mixed(svc, key, 14)
    base = f"/api/agents/{agent}/sessions"
    queries = ("?sort=spans&limit=1000", "?errors=true&limit=1000", "?model=other-model&limit=1000",
               "?sort=cost&limit=1000")
    before = [(await svc.get(base + q)).body for q in queries]
    assert all(body["sessions"] for body in before)

    # The data directory as a service before migration 204 left it.
    store = svc.running.store
    store.command(f"DROP VIEW {store.database}.{tables.TRACE_SUMMARY_SEARCHED_FEED.name}")
    store.command(f"DROP TABLE {store.database}.trace_summary")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version IN (204, 205, 206, 212, 225)")
    assert migrate(store) == [204, 205, 206, 212, 225]
    assert [(await svc.get(base + q)).body for q in queries] == before

    # Copied twice (a migration cut short and re-run): the same lists. (206's and 212's copies, the ones a table
    # with 206's column takes: a backfill inserts by position.)
    for migration in [m for m in tables.MIGRATIONS if m.version in (206, 212)]:
        for step in migration.tables:
            if isinstance(step, Backfill):
                for statement in step.statements(store.database, store.cluster):
                    store.command(statement)
    assert [(await svc.get(base + q)).body for q in queries] == before
    # And spans arriving after it are summarised by the re-created view.
    await svc.send(key, [root(999, 9990, "s-big", 0.0, 1.0)] + [chat(999, 9991 + i, 9990, 0.5) for i in range(40)])
    assert _ids((await svc.get(base + "?sort=spans&limit=1")).body["sessions"]) == ["s-big"]


def _failed_before(migration: int) -> str:
    """`spans.failed` as it was computed before `migration`."""
    if migration == 214:
        return tables._FAILED.replace(f" OR ({tables._HAYSTACK_RESULT_FAILED})", "")
    if migration == 216:
        return tables._FAILED.replace(f" OR ({tables._AUTOGEN_RESULT_FAILED})", "")
    if migration == 217:
        return tables._FAILED.replace(f" OR ({tables._LLAMAINDEX_STEP_FAILED})", "")
    if migration == 220:
        return tables._FAILED.replace(f" OR ({tables._GOOGLE_GENAI_RESULT_FAILED})", "")
    if migration == 221:
        return tables._FAILED.replace(f" OR ({tables._ADK_REFLECTED_FAILURE})", "")
    if migration == 223:
        return tables._FAILED.replace(f" OR ({tables._CREWAI_TOOL_FAILURE})", "")
    if migration == 226:
        return tables._FAILED.replace(f" OR ({tables._ADK_OPENINFERENCE_REFLECTED_FAILURE})", "")
    return tables._FAILED.replace(tables._TOOL_OUTPUT, tables._stored("output.value", "traceloop.entity.output"))


def _stored_before(svc: Service, migration: int) -> None:
    """The data directory, and the service's ingest, as a service before `migration` left them."""
    store = svc.running.store
    if migration in (219, 222):
        flattener = svc.running.service.flattener
        if migration == 219:
            # Ingest marking OpenLIT's ag2 spans LLM calls: the flattener's statement without the rule.
            before = flatten.span_rows().replace(attribution.NOT_OPENLIT_AG2, "")
        else:
            # Ingest's `reasoning_tokens` reading none of the keys 222 added: the flattener's statement without them.
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(attribution, "REASONING_KEYS", tuple(
                    k for k in attribution.REASONING_KEYS if k not in attribution.REASONING_KEYS_ADDED_222))
                before = flatten.span_rows()
        assert before != flattener._statement == flatten.span_rows()
        flattener._statement = before
    else:
        failed = _failed_before(migration)
        assert failed != tables._FAILED
        store.command(f"ALTER TABLE {store.database}.spans MODIFY COLUMN failed Bool MATERIALIZED {failed}")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version >= {migration}")


# What the list shows of the session before the migration and after: a query that lists it only before (219) or only
# after; the row's fields, before and after; a column of `spans` and how many of the agent's spans ingest now sets it
# on as they are stored.
_Listed = tuple[str, tuple[str, ...], tuple[tuple[Any, ...], tuple[Any, ...]], str, int]
_ERRORS: _Listed = ("?errors=true", ("errors",), ((0,), (1,)), "failed", 1)


@pytest.mark.parametrize(("capture_name", "migration", "rows_before", "flagged_calls", "listed"), [
    # OpenInference's Haystack instrumentor records a tool that raised only as `ToolCallResult(..., error=True)` in
    # the next LLM call's input: that call is flagged, not the later ones that re-send it.
    ("haystack_openinference", 214, "rows-5", ["call_0_1"], _ERRORS),
    # The LangSmith SDK's OTel export leaves a tool span OK when LangGraph's ToolNode turned the tool's exception into
    # a ToolMessage with `status: "error"`, which only the span's `gen_ai.completion` records.
    ("langgraph_langsmith-otel", 215, "rows-6", ["call_0_2"], _ERRORS),
    # OpenInference's AgentChat instrumentor ends a raising tool's span OK; only the next call's input records the
    # result's `is_error`.
    ("autogen-agentchat_openinference", 216, "rows-7", ["call_0_1"], _ERRORS),
    # OpenLLMetry's LlamaIndex instrumentation records a tool on the agent's `call_tool` step span (kind task), whose
    # status stays unset; only its ToolCallResult output says `is_error`.
    ("llamaindex_openllmetry", 217, "rows-8", ["call_0_1"], _ERRORS),
    # OpenLIT's ag2 instrumentation writes operation `chat` on every agent's reply and message passed, the replies with
    # made-up tokens (model `unknown`): 10 calls for the 5 the model answered, the session listed under `unknown`.
    # (Its failing tool is in no span: nothing flagged.)
    ("ag2_openlit", 219, "rows-10", [], (
        "?model=unknown", ("llm_calls", "prompt_tokens", "completion_tokens", "models"),
        ((10, 3485, 203, ["gpt-4o-mini", "unknown"]), (5, 1976, 65, ["gpt-4o-mini"])), "is_llm_call", 5)),
    # google-genai's automatic function calling runs the functions in no span; OpenInference records one that raised
    # only as its `{"error": …}` response, a `tool` message of the next call's input: that call is flagged (Gemini
    # gives no call ids: the first call's span id and the call's place).
    ("google-genai_openinference", 220, "rows-11", ["e1a58756cd99aa38-0"], _ERRORS),
    # ADK's ReflectAndRetryToolPlugin answers the model in a raising tool's stead: the tool's span ends OK, its result
    # (`gen_ai.tool.call.result`) the plugin's answer, the only record of the failure.
    ("google-adk_native_agent-tool", 221, "rows-12", ["call_1_1"], _ERRORS),
    # CrewAI's MCP tool answers an `isError` result with a ToolFailure: its OpenInference TOOL span ends OK, the
    # failure only its `output.value`.
    ("crewai_openinference_mcp", 223, "rows-14", ["call_0_0"], _ERRORS),
    # The same plugin's answer under OpenInference's google-adk instrumentation: its TOOL span ends OK, the failure
    # only its `output.value` (the FunctionResponse ADK sent the model). Gemini gives no call ids: the call's span id
    # and the call's place.
    ("google-adk_openinference_multi-agent", 226, "rows-18", ["d5f82a2fcfe7d4ce-0"], _ERRORS),
], ids=["haystack-214", "langsmith-215", "autogen-216", "llamaindex-217", "ag2-219", "google-genai-220",
        "google-adk-221", "crewai-223", "google-adk-openinference-226"])
async def test_a_session_stored_before_its_migration_is_listed_right_once_it_has_run(
        svc: Service, monkeypatch: pytest.MonkeyPatch, capture_name: str, migration: int, rows_before: str,
        flagged_calls: list[str], listed: _Listed) -> None:
    """The trajectory is right, the list (its figures and a filter, from the columns ingest computed and the per-trace
    summary) wrong before the migration: a tool failure only a payload records not counted as an error, OpenLIT's ag2
    spans counted as calls. Spans stored before the migration are listed right once it has run (the column computed
    again or set, the per-trace summary backfilled or summarised again, the kept rows kept again); spans stored after
    are right as they are stored."""
    from tests.trajectory_service.test_session_rows import _keep_all  # it imports this module

    query, fields, (wrong, right), column, stored_after = listed
    store = svc.running.store
    _stored_before(svc, migration)
    capture = corpus.load(capture_name)
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    base = f"/api/agents/{agent}/sessions"
    document = (await svc.get(f"{base}/{session}/trajectory?wait=10")).body
    # The session's trajectory and those embedded in it (a subagent's: ADK's AgentTool runs its agent apart).
    trajectories = [document]
    for trajectory in trajectories:
        trajectories.extend(trajectory.get("subagent_trajectories") or [])
    flagged = [r for t in trajectories for s in t["steps"] for r in (s.get("observation") or {}).get("results") or []
               if (r.get("extra") or {}).get("is_error")]
    assert [r["source_call_id"] for r in flagged] == flagged_calls

    def shown(row: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(sorted(row[f]) if f == "models" else row[f] for f in fields)

    async def figures() -> tuple[tuple[Any, ...], list[str], list[str]]:
        (row,) = (await svc.get(base)).body["sessions"]
        # The filter, and the sort by span count (the per-trace summary's bounds and sets), list it as the page does.
        by_spans = (await svc.get(base + "?sort=spans")).body["sessions"]
        assert by_spans == [row]
        return shown(row), _ids((await svc.get(base + query)).body["sessions"]), _ids(by_spans)

    prices = PriceBook.from_file(svc.running.settings.data_dir / "prices.yaml")

    def kept() -> list[tuple[Any, ...]] | None:
        page = session_rows.page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [shown(row.view(0, 0)) for row in page.rows]

    assert await figures() == (wrong, [session] if migration == 219 else [], [session])
    # ... and its session rows kept in the format before (`session_rows._ROW_FORMAT`).
    monkeypatch.setattr(session_rows, "_ROW_FORMAT", rows_before)
    assert _keep_all(store, prices) == 1
    assert kept() == [wrong]
    monkeypatch.undo()
    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= migration)
    # The spans stored before are computed again in the background (a mutation).
    for _ in range(100):
        if not store.query("SELECT count() FROM system.mutations WHERE database = {db:String} AND table = 'spans' "
                           "AND NOT is_done", {"db": store.database})[0][0]:
            break
        await asyncio.sleep(0.1)
    assert await figures() == (right, [] if migration == 219 else [session], [session])
    # The rows kept before are not used until kept again, and then show it so.
    assert kept() is None
    _keep_all(store, prices)
    assert kept() == [right]
    # The service as it is now: spans stored from now on are right as they are stored.
    svc.running.service.flattener._statement = flatten.span_rows()
    again, key = await svc.new_agent("again")
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    await svc.get(f"/api/agents/{again}/sessions/{session}/trajectory?wait=10")
    rows = await asyncio.to_thread(
        store.query, f"SELECT countIf({column}) FROM spans FINAL WHERE agent_id = {{a:String}}", {"a": again})
    assert rows[0][0] == stored_after


def _reasoning_counted(document: dict[str, Any]) -> int:
    return sum(((s.get("metrics") or {}).get("extra") or {}).get("reasoning_tokens") or 0
               for s in corpus.llm_steps(document))


@pytest.mark.parametrize(("capture_name", "payload_threshold_bytes"), [
    # pydantic-ai records an Anthropic call's reasoning tokens only as `gen_ai.usage.details.thinking_tokens`.
    ("pydantic-ai_anthropic_thinking", 1024),
    # AI SDK 7's GenAI integration only as `ai.usage.outputTokenDetails.reasoningTokens` (its step spans restate
    # them: not LLM calls, not counted). A payload threshold below a count's length: the count is a payload.
    ("vercel-ai_otel-genai", 1024), ("vercel-ai_otel-genai", 2),
], ids=["pydantic-ai", "vercel-ai", "vercel-ai-payloads"])
async def test_reasoning_tokens_stored_before_migration_222_are_listed_as_the_trajectory_counts_them(
        start_service: ServiceFactory, monkeypatch: pytest.MonkeyPatch, capture_name: str,
        payload_threshold_bytes: int) -> None:
    """The trajectory counts each call's reasoning tokens; before migration 222 ingest's `reasoning_tokens` read none
    of these keys, so the list (its row, the kept row) showed 0. Once it has run, the spans stored before hold the
    count the trajectory shows; run again, it finds no span to change; spans stored after are right as stored."""
    from tests.trajectory_service.test_session_rows import _keep_all  # it imports this module

    svc = await start_service(payload_threshold_bytes=payload_threshold_bytes)
    store = svc.running.store
    _stored_before(svc, 222)
    capture = corpus.load(capture_name)
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    base = f"/api/agents/{agent}/sessions"
    counted = _reasoning_counted((await svc.get(f"{base}/{session}/trajectory?wait=10")).body)
    assert counted > 0
    in_payloads = store.query(
        "SELECT countIf(hasAny(mapKeys(payloads), {k:Array(String)})) FROM spans FINAL WHERE agent_id = {a:String}",
        {"a": agent, "k": list(attribution.REASONING_KEYS_ADDED_222)})[0][0]
    assert (in_payloads > 0) == (payload_threshold_bytes < 3)

    async def listed() -> int:
        (row,) = (await svc.get(base)).body["sessions"]
        return int(row["reasoning_tokens"])

    prices = PriceBook.from_file(svc.running.settings.data_dir / "prices.yaml")

    def kept() -> list[int] | None:
        page = session_rows.page_of_kept_rows(store, agent, SessionQuery(), prices)
        return None if page is None else [row.view(0, 0)["reasoning_tokens"] for row in page.rows]

    def stored(agent_id: str) -> list[tuple[str, int]]:
        return [(str(s), int(r)) for s, r in store.query(
            "SELECT span_id, reasoning_tokens FROM spans FINAL WHERE agent_id = {a:String} ORDER BY span_id",
            {"a": agent_id})]

    assert await listed() == 0
    # ... and its session row kept in the format before (`session_rows._ROW_FORMAT`).
    monkeypatch.setattr(session_rows, "_ROW_FORMAT", "rows-13")
    assert _keep_all(store, prices) == 1
    assert kept() == [0]
    monkeypatch.undo()
    assert migrate(store) == sorted(m.version for m in all_migrations() if m.version >= 222)
    assert await listed() == counted
    # The rows kept before are not used until kept again, and then show it so.
    assert kept() is None
    _keep_all(store, prices)
    assert kept() == [counted]

    # Run again, it finds nothing to change.
    (update,) = [step for m in tables.MIGRATIONS if m.version == 222 for step in m.tables]
    assert isinstance(update, UpdateRows)
    changed = "SELECT count() FROM spans WHERE agent_id = {a:String} AND " + update.where
    assert store.query(changed, {"a": agent})[0][0] == 0
    after = stored(agent)
    for statement in update.statements(store.database, store.cluster):
        store.command(statement)
    assert stored(agent) == after
    assert await listed() == counted

    # The service as it is now: spans stored from now on are right as they are stored.
    svc.running.service.flattener._statement = flatten.span_rows()
    again, key = await svc.new_agent("again")
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    await svc.get(f"/api/agents/{again}/sessions/{session}/trajectory?wait=10")
    (row,) = (await svc.get(f"/api/agents/{again}/sessions")).body["sessions"]
    assert row["reasoning_tokens"] == counted
    # Span by span, what the migration set (the replay keeps the capture's ids).
    assert stored(again) == after


async def test_a_google_genai_function_failure_recorded_as_a_payload_is_an_error_in_the_list(
        start_service: ServiceFactory) -> None:
    """A long function response is stored as a payload (`payload_threshold_bytes`), not in `attributes`: migration 220
    reads the `{"error": …}` tool message there too, and flags the call right after it only (the capture's second
    call; the later ones re-send it after a `model` message)."""
    svc = await start_service(payload_threshold_bytes=100)
    capture = corpus.load("google-genai_openinference")
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    base = f"/api/agents/{agent}/sessions"
    await svc.get(f"{base}/{session}/trajectory?wait=10")
    rows = await asyncio.to_thread(
        svc.running.store.query,
        "SELECT span_id, failed, has(mapKeys(payloads), 'llm.input_messages.3.message.content') FROM spans FINAL "
        "WHERE agent_id = {a:String} ORDER BY start_time", {"a": agent})
    # The timed-out weather function's response is a payload of every call after it; only the first of those failed.
    assert [(str(span), bool(failed), bool(payload)) for span, failed, payload in rows] == [
        ("e1a58756cd99aa38", False, False), ("301afb42bd6f4a48", True, True), ("d42647ccdc10490c", False, True),
        ("d39b75fb18a8a9d0", False, True), ("b54b18bb89a13bd6", False, True)]
    assert [(r["session_id"], r["errors"]) for r in (await svc.get(base)).body["sessions"]] == [(session, 1)]
    assert _ids((await svc.get(base + "?errors=true")).body["sessions"]) == [session]


@pytest.mark.parametrize("payload_threshold_bytes", [1024, 4096], ids=["payload", "attribute"])
async def test_an_adk_tool_failure_answered_by_its_plugin_is_an_error_in_the_list_in_either_map(
        start_service: ServiceFactory, payload_threshold_bytes: int) -> None:
    """ReflectAndRetryToolPlugin's answer carries its reflection guidance (1.3 kB): above `payload_threshold_bytes`
    (the default's 1 kB) it is stored as a payload, below in `attributes`; migration 221 reads the tool's result in
    either. Only the span of the tool it answered for failed; the other tools' results, short, are attributes."""
    svc = await start_service(payload_threshold_bytes=payload_threshold_bytes)
    capture = corpus.load("google-adk_native_agent-tool")
    agent, key = await svc.new_agent()
    await asyncio.to_thread(corpus.replay, capture, svc.running.otlp_http, key)
    session = str(capture.session_id)
    base = f"/api/agents/{agent}/sessions"
    await svc.get(f"{base}/{session}/trajectory?wait=10")
    rows = await asyncio.to_thread(
        svc.running.store.query,
        "SELECT span_id, failed, has(mapKeys(payloads), 'gen_ai.tool.call.result') FROM spans FINAL "
        "WHERE agent_id = {a:String} AND startsWith(name, 'execute_tool') ORDER BY start_time", {"a": agent})
    # The AgentTool's own span, the specialist's tools (get_sea_temperature's first run the one the plugin answered
    # for), ADK's `(merged)` span (no result), get_sea_temperature's retry and the transfer.
    answer_a_payload = payload_threshold_bytes < 1335
    assert [(str(span), bool(failed), bool(payload)) for span, failed, payload in rows] == [
        ("40e6702a79d3bd31", False, False), ("33219ca607bb984b", False, False),
        ("62c2caee26380210", True, answer_a_payload), ("7f16646d8981f43b", False, False),
        ("1096350eb0d203aa", False, False), ("38cbcb3fe2a42736", False, False)]
    assert [(r["session_id"], r["errors"]) for r in (await svc.get(base)).body["sessions"]] == [(session, 1)]
    assert _ids((await svc.get(base + "?errors=true")).body["sessions"]) == [session]


async def test_a_tool_failure_only_its_framework_records_is_an_error_in_the_list_before_and_after_migration_212(
        svc: Service) -> None:
    """LangGraph's ToolNode turns a tool that raised into a ToolMessage with `status: "error"` and leaves the span OK
    (tests/captures/langchain_openinference): the trajectory flags the result, and the list counts it (the page's
    figures, the errors filter, the session's spans summary). Spans stored before migration 212 are counted the
    same once it has run: `failed` computed from their attributes, the per-trace summary flagged by its backfill."""
    agent, key = await svc.new_agent()
    message = {"type": "tool", "data": {"content": "quote service unavailable", "type": "tool", "name": "lookup",
                                        "tool_call_id": "call_1", "status": "error"}}
    for trace, session, status in ((1, "s-failed-tool", "error"), (2, "s-fine", "success")):
        message["data"]["status"] = status
        await svc.send(key, [root(trace, 10 * trace, session, 0.0, 3.0),
                             span(trace, 10 * trace + 1, 10 * trace, "lookup", 1.0, 2.0,
                                  openinference__span__kind="TOOL", output__value=json.dumps(message))])
    base = f"/api/agents/{agent}/sessions"

    async def listed() -> tuple[dict[str, int], list[str], int]:
        rows = (await svc.get(base)).body["sessions"]
        errors_only = _ids((await svc.get(base + "?errors=true")).body["sessions"])
        detail = (await svc.get(f"{base}/s-failed-tool")).body
        return {row["session_id"]: row["errors"] for row in rows}, errors_only, detail["summary"]["errors"]

    assert await listed() == ({"s-failed-tool": 1, "s-fine": 0}, ["s-failed-tool"], 1)

    # The data directory as a service before migration 212 left it: no `failed`, the summary from the status.
    store = svc.running.store
    store.command(f"DROP VIEW {store.database}.{tables.TRACE_SUMMARY_SEARCHED_FEED.name}")
    store.command(f"ALTER TABLE {store.database}.spans DROP COLUMN failed")
    store.command(f"DROP TABLE {store.database}.trace_summary")
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version IN (204, 205, 206, 212, 225)")
    assert migrate(store) == [204, 205, 206, 212, 225]
    assert await listed() == ({"s-failed-tool": 1, "s-fine": 0}, ["s-failed-tool"], 1)


async def test_a_keyset_cursor_resumes_after_its_session_whatever_arrives_before_it(svc: Service) -> None:
    agent, key = await svc.new_agent()
    for i in range(1, 11):
        await svc.send(key, [root(i, 10 * i, f"s-{i:02d}", 10.0 * i, 10.0 * i + 5),
                             chat(i, 10 * i + 1, 10 * i, 10.0 * i)])
    base = f"/api/agents/{agent}/sessions?limit=4"
    first = (await svc.get(base)).body
    assert _ids(first["sessions"]) == ["s-10", "s-09", "s-08", "s-07"]
    # Newer sessions arrive between two pages: an offset would show s-07 again; the cursor goes on after it.
    for i in range(11, 14):
        await svc.send(key, [root(i, 10 * i, f"s-{i:02d}", 10.0 * i, 10.0 * i + 5)])
    second = (await svc.get(base + f"&cursor={first['next_cursor']}")).body
    assert _ids(second["sessions"]) == ["s-06", "s-05", "s-04", "s-03"]
    assert second["offset"] == 4
    third = (await svc.get(base + f"&cursor={second['next_cursor']}")).body
    assert (_ids(third["sessions"]), third["has_more"], third["next_cursor"]) == (["s-02", "s-01"], False, None)
    # A cursor that was tampered with is refused with what to do next, not a 500.
    bad = await svc.get(base + "&cursor=eyJvIjogNCwgInMiOiAibGFzdF9zZWVuIiwgImEiOiBbIngiLCAxXX0")
    assert bad.status == 400 and "start again without it" in bad.body["error"]["message"]


@pytest.mark.parametrize("given_keys", [session_page._GIVEN_KEYS, 0], ids=["keys-given", "keys-by-position"])
async def test_pages_after_a_rank_match_the_pages_at_an_offset_for_a_mix_of_every_kind_of_trace(
        svc: Service, monkeypatch: pytest.MonkeyPatch, given_keys: int) -> None:
    agent, key = await svc.new_agent()
    for batch in _mixed_traces(random.Random(14)):
        await svc.send(key, batch)
    store = svc.running.store
    for sort in ("last_seen", "first_seen"):
        # The candidates looked up by the ids the extent read, or read again by position: the same sessions.
        everyone = page_by_time(store, agent, sort, 0, 2**62, 10**6, 0)
        monkeypatch.setattr(session_page, "_GIVEN_KEYS", 0)
        assert page_by_time(store, agent, sort, 0, 2**62, 10**6, 0) == everyone
        monkeypatch.setattr(session_page, "_GIVEN_KEYS", given_keys)
        assert len(everyone) > 60
        for limit in (1, 7, 50):
            after, walked = None, []
            while True:
                page = page_by_time(store, agent, sort, 0, 2**62, limit, 0, after)
                walked += page
                if len(page) < limit:
                    break
                after = rank(sort, page[-1])
            assert [s.session_id for s in walked] == [s.session_id for s in everyone], (sort, limit)


async def wait_flattened(store: Any, agent: str, sent: int) -> int:
    """The agent's distinct spans in `spans` once `sent` of them are there (or after 30 s)."""
    for _ in range(600):
        [(stored,)] = store.query("SELECT uniqExact(trace_id, span_id) FROM spans WHERE agent_id = {agent:String}",
                                  {"agent": agent})
        if stored >= sent:
            break
        await asyncio.sleep(0.05)
    return int(stored)


async def _send_counted(svc: Service, key: str) -> None:
    """Sessions s-00..s-09 of 1..10 spans, sent once; s-dup and s-dup2 of 3 spans each, sent five times
    (a client retrying, a redone flattener batch), so that their bounds (15) top every count: by exact
    count they tie s-02 (3 spans) and follow it by id."""
    for i in range(10):
        trace = 100 + i
        await svc.send(key, [root(trace, trace * 100, f"s-{i:02d}", 0.0, 9.0)]
                       + [chat(trace, trace * 100 + j, trace * 100, 1.0 + j) for j in range(1, i + 1)])
    for trace, sid in ((98, "s-dup"), (99, "s-dup2")):
        dup = [root(trace, trace * 100, sid, 0.0, 9.0), chat(trace, trace * 100 + 1, trace * 100, 1.0),
               chat(trace, trace * 100 + 2, trace * 100, 2.0)]
        for n in range(5):  # each a request of its own (the receiver drops a request it already stored)
            await svc.send(key, dup if n % 2 else dup[::-1], service_name=f"agent-{n}")


async def test_the_sort_by_span_count_counts_a_duplicated_span_once_at_every_page_boundary(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent()
    await _send_counted(svc, key)
    base = f"/api/agents/{agent}/sessions?sort=spans"
    expected = [f"s-{i:02d}" for i in range(9, 2, -1)] + ["s-02", "s-dup", "s-dup2", "s-01", "s-00"]
    assert _expected(svc, agent, "1", "span_count DESC, sid") == expected
    # The bound the sort reads first does count every copy: the list must not.
    bounds = dict(svc.running.store.query(session_list._SPAN_BOUNDS, {"agent": agent, "scan": 100}))
    assert bounds["s-dup"] > 10 and bounds["s-dup2"] > 10
    # Reading as few keys by bound as a page allows (no slack), so that the page is settled early or the
    # read widened, at every boundary: by offset and by the cursor each page gives. The candidates counted
    # from their spans (a few), then from the summary's span-id sets (many: none counted from spans).
    everyone = await _everyone(svc, agent)
    for counted_from_spans in (session_list._COUNTED_FROM_SPANS, 0):
        monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
        monkeypatch.setattr(session_list, "_COUNTED_FROM_SPANS", counted_from_spans)
        for limit in (1, 3, 12):  # every boundary one a page; three a page; all (1, 2, 3, 4 were ~30 s of the suite)
            rows = [r for offset in range(0, 13, limit) for r in (await svc.get(
                f"{base}&limit={limit}&offset={offset}")).body["sessions"]]
            assert rows == [everyone[s] for s in expected], (limit, counted_from_spans)
            assert [(r["session_id"], r["span_count"]) for r in rows] == list(zip(
                expected, [10, 9, 8, 7, 6, 5, 4, 3, 3, 3, 2, 1], strict=True)), limit
            walked = [s for page in await _walk(svc, base, limit) for s in page]
            assert walked == expected, limit
        got = (await svc.get(f"{base}&limit=1000")).body["sessions"]
        assert got == [everyone[s] for s in expected]
        monkeypatch.undo()
    # Past as many keys by bound as it reads, the summary's query counts them all: the same list.
    monkeypatch.setattr(session_list, "_MAX_BOUND_KEYS", 2)
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    assert (await svc.get(f"{base}&limit=2&offset=4")).body["sessions"] == got[4:6]


async def test_migration_205_bounds_what_was_stored_before_it_and_re_running_it_changes_nothing(
        svc: Service) -> None:
    agent, key = await svc.new_agent()
    store = svc.running.store
    # The data directory as a service before migration 205 left it: 204's view, no bound columns.
    store.command(f"DROP VIEW {store.database}.{tables.TRACE_SUMMARY_SEARCHED_FEED.name}")
    store.command(f"ALTER TABLE {store.database}.trace_summary DROP COLUMN llm_usage")
    store.command(f"ALTER TABLE {store.database}.trace_summary DROP COLUMN span_rows")
    for statement in tables.TRACE_SUMMARY_FEED.statements(store.database, store.cluster):
        store.command(statement)
    store.command(f"DELETE FROM {store.database}.schema_migrations WHERE version IN (205, 206, 212, 225)")
    await _send_mixed(svc, key, 205)
    await _send_counted(svc, key)
    # "Stored before it": every span flattened into `spans` before the migration runs. (An insert already
    # under way when the new view is created, and not yet visible to the backfill, is in neither: as for
    # every view-then-backfill migration, 204's too.)
    sent = len({(s.trace_id, s.span_id) for batch in _mixed_traces(random.Random(205)) for s in batch}) + 55 + 6
    assert await wait_flattened(store, agent, sent) == sent
    base = f"/api/agents/{agent}/sessions"
    assert migrate(store) == [205, 206, 212, 225]
    expected = _expected(svc, agent, "1", "span_count DESC, sid")
    everyone = await _everyone(svc, agent)
    got = (await svc.get(base + "?sort=spans&limit=1000")).body["sessions"]
    assert _ids(got) == expected and got == [everyone[s] for s in expected]
    # Every stored span is under a bound now (none left at the column's default).
    assert store.query("SELECT countIf(rows = 0) FROM (SELECT trace_id, sum(span_rows) AS rows "
                       "FROM trace_summary WHERE agent_id = {agent:String} GROUP BY trace_id)",
                       {"agent": agent}) == [(0,)]
    # Copied twice (a migration cut short and re-run): the same list. (206's copy, which a table with its
    # column takes; 205's ran before that column was there.)
    [migration] = [m for m in tables.MIGRATIONS if m.version == 206]
    for step in migration.tables:
        if isinstance(step, Backfill):
            for statement in step.statements(store.database, store.cluster):
                store.command(statement)
    assert (await svc.get(base + "?sort=spans&limit=1000")).body["sessions"] == got
    # And spans arriving after it are bounded by the new view.
    await svc.send(key, [root(999, 9990, "s-big", 0.0, 1.0)] + [chat(999, 9991 + i, 9990, 0.5) for i in range(60)])
    assert _ids((await svc.get(base + "?sort=spans&limit=1")).body["sessions"]) == ["s-big"]


async def test_a_tie_in_span_count_goes_by_id_whatever_the_bounds(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent()
    # Five sessions of 3 spans: s-a, s-b, s-c sent once, s-y and s-z five times (bounds 15, read first).
    for trace, sid in enumerate(("s-a", "s-b", "s-c", "s-y", "s-z"), start=1):
        spans = [root(trace, trace * 10, sid, 0.0, 9.0), chat(trace, trace * 10 + 1, trace * 10, 1.0),
                 chat(trace, trace * 10 + 2, trace * 10, 2.0)]
        for n in range(5 if sid in ("s-y", "s-z") else 1):
            await svc.send(key, spans if n % 2 else spans[::-1], service_name=f"agent-{n}")
    monkeypatch.setattr(session_list, "_BOUND_SCAN_EXTRA", 0)
    base = f"/api/agents/{agent}/sessions?sort=spans"
    for limit in (1, 2, 3):
        pages = [_ids((await svc.get(f"{base}&limit={limit}&offset={o}")).body["sessions"]) for o in range(0, 5, limit)]
        assert [s for page in pages for s in page] == ["s-a", "s-b", "s-c", "s-y", "s-z"], limit


async def test_a_filtered_walk_sized_by_the_share_it_last_kept_lists_the_same_pages_in_fewer_reads(
        svc: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, key = await svc.new_agent()
    # 400 sessions, one in ten failing and one in sixteen of another model: a page of 20 of either needs more
    # than the first window of an unknown share (4 pages' worth and 64).
    spans = []
    for i in range(400):
        trace = 1000 + i
        spans += [root(trace, trace * 10, f"s-{i:03d}", float(i), i + 0.5),
                  chat(trace, trace * 10 + 1, trace * 10, i + 0.1, model="rare" if i % 16 == 0 else "test-model")]
        if i % 10 == 0:
            spans.append(span(trace, trace * 10 + 2, trace * 10, "execute_tool search", i + 0.2, i + 0.3, error=True))
    await svc.send(key, spans)
    store, prices = svc.running.store, PriceBook()
    walks: list[int] = []
    real_page_by_time = session_list.page_by_time

    def counted(*args: Any, **kwargs: Any) -> Any:
        walks.append(1)
        return real_page_by_time(*args, **kwargs)

    monkeypatch.setattr(session_list, "page_by_time", counted)
    cases: list[tuple[dict[str, Any], int]] = [
        ({"errors_only": True}, 40), ({"model": "rare"}, 25), ({"errors_only": True, "model": "rare"}, 5),
        ({"errors_only": True, "sort": "first_seen"}, 40)]
    for filters, kept in cases:
        def pages(shares: session_list.WalkShares | None, limit: int,
                  filters: dict[str, Any] = filters) -> list[list[str]]:
            # As a client follows `next_cursor`: the next offset, and the rank to resume after when the
            # page was walked in index order (trajectory/routes.py).
            shown: list[list[str]] = []
            after: tuple[int, str] | None = None
            offset = 0
            while len(shown) < 100:
                page = session_list.list_sessions(store, agent, session_list.SessionQuery(
                    limit=limit, offset=offset, after=after, **filters), prices, shares)
                shown.append([row.session_id for row in page.rows])
                if not page.more:
                    break
                offset, after = offset + limit, page.after
            return shown
        unsized = pages(None, 20)
        assert sum(len(p) for p in unsized) == len({s for p in unsized for s in p}) == kept, filters
        shares = session_list.WalkShares()
        walks.clear()
        first = session_list.list_sessions(store, agent, session_list.SessionQuery(limit=20, **filters), prices,
                                           shares)
        unknown_reads = len(walks)
        share = shares.share(agent, session_list.SessionQuery(**filters))
        assert share == pytest.approx(kept / 400, abs=0.05), filters
        walks.clear()
        again = session_list.list_sessions(store, agent, session_list.SessionQuery(limit=20, **filters), prices,
                                           shares)
        # The first page once the share is known: one window read where the share was unknown took more.
        assert [r.session_id for r in again.rows] == [r.session_id for r in first.rows] == unsized[0], filters
        assert len(walks) == 1 < unknown_reads, filters
        # Every page, by cursor, the same with the share known, and with one far too high (small windows,
        # widened as the walk goes) or far too low (the largest window at once).
        assert pages(shares, 20) == unsized, filters
        for wrong in (1.0, 0.001):
            misled = session_list.WalkShares()
            misled.record(agent, session_list.SessionQuery(**filters), int(wrong * 1000), 1000)
            assert pages(misled, 20) == unsized, (filters, wrong)
        # Pages by offset too.
        by_offset = [[r.session_id for r in session_list.list_sessions(
            store, agent, session_list.SessionQuery(limit=20, offset=o, **filters), prices, shares).rows]
            for o in range(0, 20 * len(unsized), 20)]
        assert [s for p in by_offset for s in p] == [s for p in unsized for s in p], filters


def test_walk_shares_keep_the_newest_only() -> None:
    shares = session_list.WalkShares(kept=2)
    for model in ("a", "b", "c"):
        shares.record("bot@acme", session_list.SessionQuery(model=model), 1, 4)
    assert shares.share("bot@acme", session_list.SessionQuery(model="a")) is None
    assert shares.share("bot@acme", session_list.SessionQuery(model="c")) == 0.25
    assert shares.share("bot@acme", session_list.SessionQuery(model="c", errors_only=True)) is None
