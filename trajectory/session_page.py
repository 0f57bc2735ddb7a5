"""A page of an agent's sessions by last or first seen, read from the session index in list order.

`session_order` (trajectory/tables.py) holds a row per indexed time under the id of the session it
would list, sorted newest first; reading it forwards with one row per id gives candidate sessions
in order, and the read stops after as many rows as the page needs. Which of them are listed, with which
traces and times, is then decided from `trace_sessions` for just those ids, as `RESOLVED` decides
it for the whole index (trajectory/session_index.py): a trace claimed by a late root's session, a
nested run's id, a sessionless row of a named trace drop out.

Why stopping early is exact: a listed session's time is one of its rows' times, so a session none of
whose rows was reached has every row, hence its time, after the last row read. Candidates
ranked no later than that last row are therefore in their final order; when fewer of them are
listed than the page needs, the read goes on four times further (or to the end).
"""

from __future__ import annotations

from evalkit.store import SHORT_READ, Store, compact_sql
from evalkit.trajectory.session_index import Resolved, resolve

# The `sort` column of session_order: positions by last end, or by first start (minus nanoseconds).
ORDERS = {"last_seen": 0, "first_seen": 1}

# How far the first `scan` rows reach: their count, the last one's (position, id), and their ids when there are
# few (`_GIVEN_KEYS`): then the candidates' rows are looked up by those ids, given as a parameter
# (`_TRACE_ROWS_OF_KEYS`), 13 against 16-18 ms at 10M spans for reading them again by position in SQL.
_GIVEN_KEYS = 2_000
_EXTENT = compact_sql("""
SELECT count(), max((position, session_key)), groupUniqArray(__KEYS_KEPT__)(session_key) FROM (
    SELECT session_key, position FROM session_order
    WHERE agent_id = {agent:String} AND sort = {sort:UInt8} AND position BETWEEN {low:Int64} AND {high:Int64}
      __SEARCH__
    ORDER BY position, session_key
    LIMIT {scan:UInt64})
""").replace("__KEYS_KEPT__", str(_GIVEN_KEYS + 1))

# Every row of the candidates' traces (those named after a candidate, and a named candidate's), and
# whether its session id and its trace id are candidates. The candidates are the ids of the rows up to
# the last one read above: a row inserted in that range meanwhile adds one, which is harmless.
# (The traces as one set, the candidates' ids and their named traces together: ClickHouse looks one set up
# in the primary key faster than two sets tested with OR, 15 against 17 ms for a first page at 10M spans.)
_TRACE_ROWS_OF = compact_sql("""
SELECT session_id, trace_id, toUnixTimestamp64Nano(min(first_start)), toUnixTimestamp64Nano(max(last_end)),
       toUnixTimestamp64Milli(max(last_received)), session_id IN __KEYS__, trace_id IN __KEYS__
FROM trace_sessions
WHERE agent_id = {agent:String}
  AND trace_id IN (__KEY_ROWS__
                   UNION ALL
                   SELECT trace_id FROM session_traces WHERE agent_id = {agent:String} AND session_id IN __KEYS__)
GROUP BY session_id, trace_id
""")
_KEYS_READ = """SELECT session_key FROM session_order
    WHERE agent_id = {agent:String} AND sort = {sort:UInt8} AND position BETWEEN {low:Int64} AND {last:Int64}
      __SEARCH__"""
_TRACE_ROWS = compact_sql(_TRACE_ROWS_OF.replace("__KEY_ROWS__", _KEYS_READ).replace("__KEYS__", f"({_KEYS_READ})"))
# The same, the candidates given: the ids of exactly the rows the extent read (the form above also takes rows
# tied with the last one's position, or inserted meanwhile: candidates that rank after it either way).
_TRACE_ROWS_OF_KEYS = (_TRACE_ROWS_OF.replace("__KEY_ROWS__", "SELECT arrayJoin({keys:Array(String)})")
                       .replace("__KEYS__", "{keys:Array(String)}"))


def holds_search(column: str) -> str:
    """SQL: the session id in `column` holds the `search` parameter's text, in any case."""
    return f"positionCaseInsensitiveUTF8({column}, {{search:String}}) > 0"


def _searching(sql: str, search: str | None) -> str:
    # A session's every row is under its id, so filtering the rows keeps each matching session whole
    # and the walk's early stop exact.
    return sql.replace("__SEARCH__", f"AND {holds_search('session_key')}" if search else "")


_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


def rank(sort: str, session: Resolved) -> tuple[int, str]:
    """The session's place as session_order sorts it: (minus its time, its id); a keyset cursor holds one."""
    return (-session.last_end_ns if sort == "last_seen" else -session.first_start_ns, session.session_id)


class TooFar(Exception):
    """The page's sessions lie further down the index than the caller would walk (`give_up_after`)."""


def page_by_time(store: Store, agent_id: str, sort: str, since_ns: int, until_ns: int, limit: int,
                 offset: int, after: tuple[int, str] | None = None, search: str | None = None,
                 give_up_after: int | None = None) -> list[Resolved]:
    """Sessions overlapping [since, until) ranked `offset`..`offset + limit` by `sort` (last_seen, first_seen),
    counted from the first session ranked after `after` (a `rank`) when given; only those whose id holds
    `search` (in any case) when given.

    Ties go by session id; the times are the index's (the list shows the spans' own).
    Starting after a rank reads from that rank on (a keyset cursor): a deep page costs the page.
    Exact for the reason stopping early is: a session ranked after `after` has its time, hence every
    row of it that lists it, at or after `after`'s position, so reading from there finds it.

    The read goes past the page only when sessions it passes are not listed: those outside [since, until)
    the other end of the range leaves in (by last seen, every session that starts at or after `until`).
    `give_up_after`: raise `TooFar` rather than read more rows than that beyond the first read (a page
    deep in the past costs every session after it, where the summary's query costs the agent's traces).
    """
    need = offset + limit
    if limit <= 0:
        return []
    # A session's rows are in range when its last end is at or after `since` (by last seen), or its
    # first start before `until` (by first seen): the bound the other end sets is checked once resolved.
    low, high = (_INT64_MIN, -since_ns) if sort == "last_seen" else (-until_ns + 1, _INT64_MAX)
    if after is not None:
        low = max(low, after[0])
    # Sessionless rows of named traces are candidates too (often one per trace): read twice the page.
    scan = first_scan = 2 * need + 64
    while True:
        params = {"agent": agent_id, "sort": ORDERS[sort], "low": low, "high": high, "scan": scan,
                  "search": search or ""}
        [(count, (last_position, last_key), read_keys)] = store.query(_searching(_EXTENT, search), params,
                                                                      SHORT_READ)
        if not count:
            return []
        if count <= _GIVEN_KEYS:
            candidates = store.query(_TRACE_ROWS_OF_KEYS, {**params, "keys": list(read_keys)}, SHORT_READ)
        else:
            candidates = store.query(_searching(_TRACE_ROWS, search), {**params, "last": last_position}, SHORT_READ)
        keys: set[str] = set()
        rows: list[tuple[str, str, int, int, int]] = []
        for sid, trace, first, end, received, sid_is_key, trace_is_key in candidates:
            rows.append((str(sid), str(trace), int(first), int(end), int(received)))
            if sid_is_key:
                keys.add(str(sid))
            if trace_is_key:
                keys.add(str(trace))
        listed = [s for s in resolve(keys, rows).values()
                  if s.last_end_ns >= since_ns and s.first_start_ns < until_ns
                  and (after is None or rank(sort, s) > after)]
        listed.sort(key=lambda s: rank(sort, s))
        if count < scan:  # read to the end: every session is among them
            return listed[offset:need]
        settled = [s for s in listed if rank(sort, s) <= (int(last_position), str(last_key))]
        if len(settled) >= need:
            return settled[offset:need]
        if give_up_after is not None and scan * 4 > max(give_up_after, first_scan):
            raise TooFar(f"the page lies past the first {scan} rows of the index")
        scan *= 4
