"""The trajectory routes on the API port: sessions, their spans, their ATIF trajectories, bulk
export, and per-agent mapping overrides. Access is the API's: `agent_of` checks the caller may
see the agent's workspace (an ingest key of another workspace gets 404).
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections import Counter
from dataclasses import replace
from typing import Any

from aiohttp import web
from pydantic import ValidationError

from evalkit.access import Agent
from evalkit.api import ApiError, Context, agent_of, caller_of, dumps_json, json_response
from evalkit.query_params import MAX_INT, MAX_OFFSET, bool_param, choice_param, float_param, int_param
from evalkit.store import Store
from evalkit.trajectory.assemble import (
    Assembled,
    Built,
    BuiltCache,
    CachedDocument,
    assemble,
    cyclic_gc_paused,
    span_view,
)
from evalkit.trajectory.build import map_one_span, summarise_mapping
from evalkit.trajectory.mapping_store import (
    CurrentMappings,
    current_mapping,
    mapping_history,
    overrides_json,
    save_mapping,
)
from evalkit.trajectory.media import Image, NoImage, parse_reference, referenced_image
from evalkit.trajectory.overrides import MappingOverrides
from evalkit.trajectory.prices import PriceBook
from evalkit.trajectory.read import (
    SessionWindow,
    count_trace_spans,
    read_spans_to_map,
    read_trace_logs,
    read_trace_spans_typed,
    session_window,
)
from evalkit.trajectory.session_index import RESOLVED
from evalkit.trajectory.session_list import (
    BadQuery,
    KnownModels,
    SessionPage,
    SessionQuery,
    WalkShares,
    decode_cursor,
    encode_cursor,
    list_sessions,
    parse_time,
)
from evalkit.trajectory.session_rows import RowKeeper, page_of_kept_rows
from evalkit.trajectory.settle import Settlement, settle_session

STATUS_HEADER = "X-Evalkit-Trajectory-Status"
SETTLED_HEADER = "X-Evalkit-Trajectory-Settled"
_POLL_SECONDS = 0.25
PRICES_KEY = web.AppKey("trajectory_prices", PriceBook)
WALK_SHARES_KEY = web.AppKey("session_list_walk_shares", WalkShares)
KNOWN_MODELS_KEY = web.AppKey("session_list_known_models", KnownModels)

def _dumps(document: Any) -> bytes:
    # Strict JSON (a non-finite number is null), as the UTF-8 bytes served: a 3,000-step document
    # is megabytes, not decoded to text and encoded back.
    return dumps_json(document)


def _ctx(request: web.Request) -> Context:
    return request.app["context"]  # type: ignore[no-any-return]


def _prices(request: web.Request) -> PriceBook:
    return request.app[PRICES_KEY]


def _now(context: Context) -> float:
    # The service's clock (tests and replays pass their own).
    return float(context.access.clock())


def _int(request: web.Request, name: str, default: int, *, low: int = 0, high: int | None = None) -> int:
    if name == "offset" and high is None:
        high = MAX_OFFSET
    return int_param(request, name, default, low=low, high=MAX_INT if high is None else high)


def _float(request: web.Request, name: str) -> float | None:
    return float_param(request, name)


def _time_range(request: web.Request) -> tuple[int, int]:
    try:
        since = parse_time(request.query["since"], "since") if request.query.get("since") else 0
        until = parse_time(request.query["until"], "until") if request.query.get("until") else 2**62
    except BadQuery as exc:
        raise ApiError(400, str(exc)) from exc
    if until <= since:
        raise ApiError(400, "until must be after since")
    return since, until


async def _overrides(context: Context, agent: Agent) -> MappingOverrides | None:
    mapping = await asyncio.to_thread(current_mappings(context).get, context.store, agent.agent_id)
    return mapping.overrides


# -- sessions ---------------------------------------------------------------------------------------------------
def _session_page(store: Store, agent_id: str, query: SessionQuery, prices: PriceBook, shares: WalkShares,
                  known: KnownModels, rows_kept: bool) -> SessionPage:
    """From the kept rows where they serve the page (trajectory/session_rows.py), else from the spans."""
    kept = page_of_kept_rows(store, agent_id, query, prices) if rows_kept else None
    return kept if kept is not None else list_sessions(store, agent_id, query, prices, shares, known)


async def _list_sessions(request: web.Request) -> web.Response:
    agent = await agent_of(request)
    context = _ctx(request)
    since, until = _time_range(request)
    sort = request.query.get("sort", "last_seen")
    limit = _int(request, "limit", 50, low=1, high=1000)
    try:
        # A cursor resumes after the page's last session (keyset: a deep page costs the page) where the index
        # or the kept rows gave the page; it carries the offset too, which the list's own read pages by.
        offset, after, rank_after = (decode_cursor(request.query["cursor"], sort) if request.query.get("cursor")
                                     else (_int(request, "offset", 0), None, None))
    except BadQuery as exc:
        raise ApiError(400, str(exc)) from exc
    errors_only = bool_param(request, "errors")
    query = SessionQuery(since_ns=since, until_ns=until, limit=limit, offset=offset, sort=sort,
                         errors_only=errors_only, model=request.query.get("model") or None,
                         min_cost=_float(request, "min_cost"), after=after, rank_after=rank_after,
                         search=request.query.get("search", "").strip() or None)
    try:
        page = await asyncio.to_thread(_session_page, context.store, agent.agent_id, query, _prices(request),
                                       request.app[WALK_SHARES_KEY], request.app[KNOWN_MODELS_KEY],
                                       context.settings.session_rows_interval_seconds > 0)
    except BadQuery as exc:
        raise ApiError(400, str(exc)) from exc
    now, quiet = _now(context), context.settings.settle_quiet_seconds
    return json_response({
        "agent": agent.agent_id,
        "sessions": [row.view(now, quiet) for row in page.rows],
        "sort": sort,
        "offset": offset,
        "limit": limit,
        "has_more": page.more,
        "next_cursor": encode_cursor(offset + limit, sort, page.after, page.rank_after) if page.more else None,
    })


async def _session_detail(request: web.Request) -> web.Response:
    agent = await agent_of(request)
    context = _ctx(request)
    session_id = request.match_info["session_id"]
    window = await asyncio.to_thread(session_window, context.store, agent.agent_id, session_id)
    if window is None:
        raise ApiError(404, _unknown_session(agent, session_id))
    total = await asyncio.to_thread(count_trace_spans, context.store, agent.agent_id, window.trace_ids)
    cap = context.settings.session_span_limit
    paged = "limit" in request.query or "offset" in request.query
    limit = _int(request, "limit", cap, low=1, high=cap)
    offset = _int(request, "offset", 0)
    if total > cap and not paged:
        return json_response({"error": {
            "status": 413,
            "message": (f"session {session_id} has {total} spans, over this service's limit of {cap} per "
                        f"response; page through it with ?limit={min(cap, 1000)}&offset=0 (then offset=1000, …), "
                        "or raise EVALKIT_SESSION_SPAN_LIMIT"),
            "span_count": total, "limit": cap,
            "next": f"?limit={min(cap, 1000)}&offset=0"}}, status=413)

    def read() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        # As for a trajectory: the spans, their views and the built document are a few hundred
        # thousand objects alive at once, which the cycle collector would walk again and again.
        with cyclic_gc_paused():
            return summarised()

    def summarised() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        # The spans with their typed columns, one query (`read.TYPED_COLUMNS`).
        # Unpaged, the whole session is read without ORDER BY and LIMIT: the read puts the rows in
        # order in Python anyway, and sorting megabytes of attributes in the engine cost ~70 ms of CPU for a
        # session of re-sent histories (94 MB).
        spans, typed = read_trace_spans_typed(context.store, agent.agent_id, window.trace_ids,
                                              limit=limit if paged else None, offset=offset)
        views = []
        for span, t in zip(spans, typed, strict=True):
            view = span_view(span)
            view["typed"] = {
                "operation": t[0] or None, "provider": t[1] or None, "model": t[2] or None,
                "is_llm_call": bool(t[3]), "input_tokens": t[4], "output_tokens": t[5],
                "cache_read_tokens": t[6], "cache_write_tokens": t[7], "reasoning_tokens": t[8],
                "reported_cost_usd": t[9], "tool_name": t[10] or None, "tool_call_id": t[11] or None,
                "received_at_ms": t[12], "failed": bool(t[13])}
            views.append(view)
        whole = len(spans) == total
        logs = read_trace_logs(context.store, agent.agent_id, window.trace_ids) if whole else []
        overrides = current_mappings(context).get(context.store, agent.agent_id).overrides
        # The summary needs only what the mappers made of the spans: no steps, prices or validation.
        mapping = summarise_mapping(spans, logs, overrides=overrides)
        summary = {
            "span_count": total,
            "trace_count": len(window.trace_ids),
            "returned": len(spans),
            "offset": offset,
            "spans_by_kind": dict(Counter(v["kind"] for v in views)),
            "spans_by_operation": dict(Counter((v.get("typed") or {}).get("operation") or "other" for v in views)),
            # The trajectory's LLM calls: a wrapping or repeated report, or a span preparing a call
            # (LlamaIndex's `_prepare_chat_with_tools`), is no call of its own, as in the session list.
            "llm_calls": mapping.llm_calls,
            # Spans that failed as their steps show it: an error status, or an emitter's own sign of one
            # (trajectory/tables.py, migration 212), as the session list counts them.
            "errors": sum(1 for v in views if v["typed"]["failed"]),
            "mapping_version": mapping.mapping_version,
            "emitters": mapping.emitters,
            "unmapped_attributes": mapping.unmapped_attributes,
            # Paged: the mapper saw only this page, so its findings are the page's.
            "mapped_over": "session" if whole else "page",
        }
        return views, summary

    views, summary = await asyncio.to_thread(read)
    body: dict[str, Any] = {"agent": agent.agent_id, "session_id": session_id, "summary": summary, "spans": views}
    if offset + len(views) < total:
        body["next"] = f"?limit={limit}&offset={offset + len(views)}"
    # Megabytes for a long session: encoded off the event loop, which serves every other request.
    encoded = await asyncio.to_thread(dumps_json, body)
    return web.Response(body=encoded, content_type="application/json")


def _unknown_session(agent: Agent, session_id: str) -> str:
    return (f"agent {agent.agent_id} has no session {session_id!r}: no span carrying that session id has "
            "arrived. Spans name their session in `session.id` or `gen_ai.conversation.id` (or the attribute "
            "set with `evalkit mapping set`), usually on the root span, which is exported last; list known "
            f"sessions with `evalkit sessions list {agent.agent_id}`, or ask again with ?wait=SECONDS")


# -- trajectories -----------------------------------------------------------------------------------------------
async def _settle(context: Context, agent: Agent, session_id: str, wait: float,
                  window: SessionWindow | None = None) -> tuple[Settlement, Any, float, bool]:
    """Poll the cheap settle check until the session is settled or `wait` runs out (`window`: the first's)."""
    started = time.monotonic()
    quiet = context.settings.settle_quiet_seconds
    known = window
    while True:
        settlement, window = await asyncio.to_thread(
            settle_session, context.store, agent.agent_id, session_id, now=_now(context), quiet_period=quiet,
            window=known)
        known = None  # read afresh on the next round: a span arriving meanwhile may add a trace or move times
        waited = time.monotonic() - started
        remaining = wait - waited
        if settlement.settled or remaining <= 0:
            return settlement, window, waited, not settlement.settled and wait > 0
        pause = _POLL_SECONDS
        if settlement.complete and settlement.span_count:
            # Complete and only waiting out the quiet period: sleep until it ends (a new span just re-checks).
            pause = max(_POLL_SECONDS, settlement.quiet_period - settlement.quiet_seconds)
        await asyncio.sleep(min(pause, remaining))


def _wait_of(request: web.Request, context: Context) -> float:
    wait = _float(request, "wait") or 0.0
    cap = context.settings.max_trajectory_wait_seconds
    if wait < 0 or wait > cap:
        raise ApiError(400, f"wait={wait:g} is out of range: use 0..{cap:g} seconds")
    return wait


def _too_many_spans(agent: Agent, session_id: str, span_count: int, cap: int) -> ApiError:
    return ApiError(413, f"session {session_id} has {span_count} spans, over this service's limit "
                         f"of {cap}; read its spans page by page from /api/agents/{agent.agent_id}/sessions/"
                         f"{session_id}?limit=1000&offset=0, or raise EVALKIT_SESSION_SPAN_LIMIT")


async def _trajectory(request: web.Request) -> web.Response:
    agent = await agent_of(request)
    context = _ctx(request)
    session_id = request.match_info["session_id"]
    wait = _wait_of(request, context)
    # Any other value was served as if absent: `?validate=true` looked checked against the schema and was not.
    full_schema = choice_param(request, "validate", ("schema",)) == "schema"
    cap = context.settings.session_span_limit
    overrides = await _overrides(context, agent)
    prices = _prices(request)
    cache = built_cache(context)

    if not wait:
        # Not waiting, and no cached document for the session as last received: it is built, so it
        # is settled from the spans read for the build (one query) rather than checked first (two).
        started = time.monotonic()
        window = await asyncio.to_thread(session_window, context.store, agent.agent_id, session_id)
        if window is None:
            raise ApiError(404, _unknown_session(agent, session_id))
        if not cache.may_hold(agent.agent_id, session_id, window.last_received_ms):
            return await _first_trajectory(context, agent, session_id, window, overrides, prices, full_schema,
                                           waited=time.monotonic() - started)
    else:
        window = None
    settlement, window, waited, ran_out = await _settle(context, agent, session_id, wait, window)
    if window is None or settlement.span_count == 0:
        raise ApiError(404, _unknown_session(agent, session_id)
                       + (f" (waited {waited:.1f}s)" if wait else ""))
    if settlement.span_count > cap:
        raise _too_many_spans(agent, session_id, settlement.span_count, cap)

    key = BuiltCache.key(agent.agent_id, agent.name, session_id, window, settlement, overrides, prices,
                         full_schema) if settlement.settled else None

    def serve() -> tuple[bytes, str]:
        # Serialised and dropped while the cycle collector is still paused: resumed with the
        # document alive, its first collection walked every object of it (tens of ms on 3,000 steps).
        # Cached as text for the same reason.
        with cyclic_gc_paused():
            cached = cache.get(key) if key is not None else None
            if cached is None:
                assembled = assemble(
                    context.store, agent.agent_id, agent.name, session_id, now=_now(context),
                    quiet_period=context.settings.settle_quiet_seconds, overrides=overrides, prices=prices,
                    settlement=settlement, window=window, full_schema=full_schema)
                if assembled.built is None:  # pragma: no cover - the route answered 404 before
                    raise ApiError(404, _unknown_session(agent, session_id))
                cached = _as_text(assembled.built)
                if cached is None:  # the marker is in the session's own text: serialise it whole
                    body = _dumps(assembled.document(waited_seconds=waited, waited_out=ran_out if wait else None))
                    status = assembled.status
                    del assembled
                    return body, status
                if key is not None:
                    cache.put(key, prices, cached)
                del assembled
            served = Assembled(session_id, settlement, window, cached.built)
            extra = served.document(waited_seconds=waited, waited_out=ran_out if wait else None)["extra"]
            body = b"".join((cached.head, _dumps(extra), cached.tail))
            status = served.status
            del cached, served
        return body, status

    body, status = await asyncio.to_thread(serve)
    return web.Response(body=body, content_type="application/json", charset="utf-8", headers={
        STATUS_HEADER: status, SETTLED_HEADER: "true" if settlement.settled else "false"})


async def _first_trajectory(context: Context, agent: Agent, session_id: str, window: SessionWindow,
                            overrides: MappingOverrides | None, prices: PriceBook, full_schema: bool,
                            waited: float) -> web.Response:
    """A session no cached document can serve: settled and built from one read of its spans (`assemble`)."""
    cap = context.settings.session_span_limit
    cache = built_cache(context)

    def serve() -> tuple[bytes, str, Settlement]:
        with cyclic_gc_paused():  # as `_trajectory`'s serve: the document serialised before collection resumes
            assembled = assemble(
                context.store, agent.agent_id, agent.name, session_id, now=_now(context),
                quiet_period=context.settings.settle_quiet_seconds, overrides=overrides, prices=prices,
                window=window, full_schema=full_schema, span_limit=cap)
            settlement = assembled.settlement
            if assembled.built is None:
                return b"", "", settlement
            cached = _as_text(assembled.built)
            if cached is None:  # the marker is in the session's own text: serialise it whole
                body = _dumps(assembled.document(waited_seconds=waited))
                status = assembled.status
                del assembled
                return body, status, settlement
            if settlement.settled:
                key = BuiltCache.key(agent.agent_id, agent.name, session_id, window, settlement, overrides, prices,
                                     full_schema)
                cache.put(key, prices, cached)
            del assembled
            served = Assembled(session_id, settlement, window, cached.built)
            extra = served.document(waited_seconds=waited)["extra"]
            body = b"".join((cached.head, _dumps(extra), cached.tail))
            status = served.status
            del cached, served
        return body, status, settlement

    body, status, settlement = await asyncio.to_thread(serve)
    if settlement.span_count == 0:
        raise ApiError(404, _unknown_session(agent, session_id))
    if settlement.span_count > cap:
        # Read up to one span over the cap: the settle check counts them all, for the message.
        counted, _ = await asyncio.to_thread(
            settle_session, context.store, agent.agent_id, session_id, now=_now(context),
            quiet_period=context.settings.settle_quiet_seconds, window=window)
        raise _too_many_spans(agent, session_id, counted.span_count, cap)
    return web.Response(body=body, content_type="application/json", charset="utf-8", headers={
        STATUS_HEADER: status, SETTLED_HEADER: "true" if settlement.settled else "false"})


_EXTRA_SLOT = "\x00evalkit: the request's extra goes here\x00"


def _as_text(built: Built) -> CachedDocument | None:
    """The built document as the text around its `extra`, which each request fills in.

    Serialising a sub-object alone gives the same text as inline (no indentation, the same
    separators), so `head + dumps(extra) + tail` is byte for byte `dumps(document)`. None when
    the marker also occurs in the session's own text (spans are anyone's input).
    """
    document = built.document
    slot = _dumps(_EXTRA_SLOT)
    text = _dumps({**document, "extra": _EXTRA_SLOT})  # bytes, as served
    head, found, tail = text.partition(slot)
    if not found or slot in head or slot in tail:
        return None
    small = Built({"extra": document.get("extra") or {}}, built.issues, built.validated_with, built.mapping_version)
    return CachedDocument(small, head, tail)


def _export_sessions(context: Context, agent_id: str, since: int, until: int) -> list[str]:
    rows = context.store.query(
        f"SELECT session_id FROM ({RESOLVED}) GROUP BY session_id "
        "HAVING max(last_end) >= fromUnixTimestamp64Nano({since:Int64}) "
        "AND min(first_start) < fromUnixTimestamp64Nano({until:Int64}) ORDER BY min(first_start), session_id",
        {"agent": agent_id, "since": since, "until": until})
    return [r[0] for r in rows]


async def _export(request: web.Request) -> web.StreamResponse:
    agent = await agent_of(request)
    context = _ctx(request)
    since, until = _time_range(request)
    wanted = request.query.getall("session_id", [])
    statuses = {s for s in request.query.get("status", "").split(",") if s}
    unknown = statuses - {"valid", "partial", "invalid"}
    if unknown:
        raise ApiError(400, f"status={','.join(sorted(unknown))} is not known; use valid, partial or invalid")
    sessions = list(dict.fromkeys(wanted)) or await asyncio.to_thread(
        _export_sessions, context, agent.agent_id, since, until)
    overrides = await _overrides(context, agent)
    response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson",
                                           "Content-Disposition": f'attachment; filename="{agent.name}.jsonl"'})
    await response.prepare(request)
    quiet = context.settings.settle_quiet_seconds
    for session_id in sessions:
        assembled = await asyncio.to_thread(
            assemble, context.store, agent.agent_id, agent.name, session_id, now=_now(context),
            quiet_period=quiet, overrides=overrides, prices=_prices(request))
        if assembled.built is None:
            if wanted:
                # Asked for by name: say it is missing rather than leave a silent gap.
                line = {"session_id": session_id, "extra": {"status": "unavailable",
                                                            "error": _unknown_session(agent, session_id)}}
                await response.write(dumps_json(line) + b"\n")
            continue
        if statuses and assembled.status not in statuses:
            continue
        encoded = await asyncio.to_thread(_dumps, assembled.document())
        await response.write(encoded + b"\n")
    await response.write_eof()
    return response


# -- mapping overrides ------------------------------------------------------------------------------------------
async def _media(request: web.Request) -> web.Response:
    """The bytes of an image a trajectory of the session references (`?ref=evalkit-span://…`, trajectory/media.py),
    read back from the span that holds it."""
    agent = await agent_of(request)
    context = _ctx(request)
    session_id = request.match_info["session_id"]
    try:
        ref = parse_reference(request.query.get("ref", ""))
    except ValueError as exc:
        raise ApiError(400, f"?ref= {exc}") from None
    window = await asyncio.to_thread(session_window, context.store, agent.agent_id, session_id)
    if window is None:
        raise ApiError(404, _unknown_session(agent, session_id))
    if ref.trace_id not in window.trace_ids:
        raise ApiError(404, f"trace {ref.trace_id} is not one of session {session_id}'s: take the reference from this "
                            f"session's trajectory (GET /api/agents/{agent.agent_id}/sessions/{session_id}/trajectory)")

    def read() -> Image:
        spans = read_spans_to_map(context.store, agent.agent_id, [ref.trace_id])
        span = next((s for s in spans if s.span_id == ref.span_id), None)
        if span is None:
            raise NoImage(f"trace {ref.trace_id} holds no span {ref.span_id}")
        logs = read_trace_logs(context.store, agent.agent_id, [ref.trace_id])
        return referenced_image(map_one_span(span, logs), ref.where, ref.n)

    try:
        image = await asyncio.to_thread(read)
    except NoImage as exc:
        raise ApiError(404, f"{exc}; the reference {request.query['ref']} names no image this service can read "
                            "back") from None
    # A span never changes once stored: the image may be kept, by this browser only.
    return web.Response(body=image.data, content_type=image.media_type, headers={
        "Cache-Control": "private, max-age=86400, immutable", "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'"})


async def _get_mapping(request: web.Request) -> web.Response:
    agent = await agent_of(request)
    context = _ctx(request)
    version = _int(request, "version", 0, low=0) or None
    mapping = await asyncio.to_thread(current_mapping, context.store, agent.agent_id, version)
    if version and mapping.version != version:
        raise ApiError(404, f"agent {agent.agent_id} has no mapping version {version}; "
                            f"see the versions with GET /api/agents/{agent.agent_id}/mapping")
    history = await asyncio.to_thread(mapping_history, context.store, agent.agent_id)
    body = overrides_json(mapping)
    body["session_attribute"] = agent.session_attribute or None
    body["versions"] = [{"version": m.version, "mapping_version": m.label, "created_by": m.created_by,
                         "created_at_ms": m.created_at_ms} for m in history]
    return json_response(body)


async def _put_mapping(request: web.Request) -> web.Response:
    agent = await agent_of(request, write=True)
    caller = await caller_of(request)
    context = _ctx(request)
    try:
        raw = await request.json()
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body must be the mapping overrides as a JSON object (or null): {exc}") from exc
    if isinstance(raw, dict) and set(raw) == {"overrides"}:
        raw = raw["overrides"]
    overrides: MappingOverrides | None = None
    if raw is not None:
        try:
            overrides = MappingOverrides.model_validate(raw)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors())
            raise ApiError(400, f"mapping overrides rejected: {problems}. Fields: version, session_id_attribute, "
                                "agent_name_attribute, attribute_map, ignore_span_names") from exc
    saved = await asyncio.to_thread(save_mapping, context.store, agent.agent_id, overrides, caller.name)
    current_mappings(context).forget(agent.agent_id)
    session_attribute = overrides.session_id_attribute if overrides is not None else None
    if (session_attribute or "") != agent.session_attribute:
        # Ingest reads the session id attribute from the agent record.
        await asyncio.to_thread(context.access.update_agent, replace(agent, session_attribute=session_attribute or ""))
    body = overrides_json(saved)
    body["session_attribute"] = session_attribute
    return json_response(body, status=200)


def load_prices(context: Context) -> PriceBook:
    path = context.settings.price_file_path
    if path is None:
        return PriceBook()
    try:
        return PriceBook.from_file(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"the price file {path} cannot be used ({exc}); fix it (see docs/trajectories.md) "
                         "or remove it to use the built-in genai-prices table") from exc


MAPPINGS_EXTRA = "trajectory_mappings"
CACHE_EXTRA = "trajectory_cache"


def built_cache(context: Context) -> BuiltCache:
    """The service's cache of settled sessions' documents (in `context.extras`, where the bench clears it)."""
    cache = context.extras.get(CACHE_EXTRA)
    if not isinstance(cache, BuiltCache):
        cache = context.extras[CACHE_EXTRA] = BuiltCache()
    return cache


def current_mappings(context: Context) -> CurrentMappings:
    """The service's remembered mapping overrides per agent (in `context.extras`)."""
    mappings = context.extras.get(MAPPINGS_EXTRA)
    if not isinstance(mappings, CurrentMappings):
        mappings = context.extras[MAPPINGS_EXTRA] = CurrentMappings()
    return mappings


def add_routes(app: web.Application, context: Context) -> None:
    app[PRICES_KEY] = load_prices(context)
    app[WALK_SHARES_KEY] = WalkShares()
    app[KNOWN_MODELS_KEY] = KnownModels()
    if context.settings.session_rows_interval_seconds > 0:
        keeper = RowKeeper(context.store, app[PRICES_KEY], context.settings.session_rows_interval_seconds,
                           context.settings.session_rows_slack_seconds,
                           context.extras.get("inserting_since", lambda: None),
                           # The same service started again (on its host, port and data) takes its lease back
                           # at once: with embedded chDB, the one before it is certainly gone.
                           holder=f"{socket.gethostname()}:{context.settings.api_port}:{context.settings.data_dir}")

        async def start_keeper() -> None:
            keeper.start()

        async def stop_keeper() -> None:
            await asyncio.to_thread(keeper.stop)

        context.extras.setdefault("on_ready", []).append(start_keeper)
        context.extras.setdefault("on_stop", []).append(stop_keeper)
    built_cache(context)
    current_mappings(context)
    base = "/api/agents/{agent}"
    app.router.add_get(base + "/sessions", _list_sessions)
    app.router.add_get(base + "/sessions/{session_id}", _session_detail)
    app.router.add_get(base + "/sessions/{session_id}/trajectory", _trajectory)
    app.router.add_get(base + "/sessions/{session_id}/media", _media)
    app.router.add_get(base + "/trajectories.jsonl", _export)
    app.router.add_get(base + "/mapping", _get_mapping)
    app.router.add_put(base + "/mapping", _put_mapping)
