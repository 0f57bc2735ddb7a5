"""The trajectory part's own tables (migrations 200-299).

`mapping_overrides` keeps every version of an agent's mapping overrides: a new
version is a new row, never an update, so a trajectory's `mapping_version` can
always be looked up. `sessionless_traces_feed` indexes traces that carry no session id.
`session_order` and `trace_sessions` let a page of the session list be picked without reading
the agent's whole session index (trajectory/session_page.py). `trace_summary` holds what the list
sorts and filters by (span count, errors, models, times, and bounds of the span count and the cost) per
trace, so that those read a row per trace, not every span (trajectory/session_list.py). Three columns of
`spans`, computed from a span's attributes as it is stored, say what the list's count of LLM calls needs
of them (`call_response_id`, `prepares_call`) and whether the span failed as its step shows it (`failed`).
"""

from __future__ import annotations

from evalkit.attributes import DOUBLE, INT
from evalkit.ingest.attribution import (
    CACHE_READ_KEYS,
    CACHE_WRITE_KEYS,
    GENKIT_CACHE_READ_TOKENS,
    GENKIT_INPUT_TOKENS,
    GENKIT_NAME,
    GENKIT_OUTPUT_TOKENS,
    GENKIT_REASONING_TOKENS,
    INPUT_AUDIO_KEYS,
    INPUT_TOKEN_KEYS,
    OPENLIT_ANTHROPIC_SCOPE,
    OPENLLMETRY_BEDROCK_SCOPE,
    OUTPUT_AUDIO_KEYS,
    OUTPUT_TOKEN_KEYS,
    REASONING_KEYS,
    REASONING_KEYS_ADDED_222,
)
from evalkit.migrations import (
    AddColumn,
    Backfill,
    DeleteRows,
    DropColumn,
    DropTable,
    DropView,
    MaterializedView,
    Migration,
    RedefineColumn,
    Table,
    UpdateRows,
)
from evalkit.trajectory.mappers import (
    anthropic_openinference,
    autogen,
    crewai,
    gemini_cli,
    genkit,
    google_adk,
    google_genai,
    haystack,
    mcp_semconv,
    openai_sdk,
    openlit_ag2,
    openlit_pydantic_ai,
    openllmetry_llamaindex,
    otel_openai_agents,
    pydantic_ai,
    strands,
)
from evalkit.trajectory.mappers.errors import ERROR_TYPE
from evalkit.trajectory.mappers.openinference import CALL_EVIDENCE, OUTPUT_RESPONSE_ID
from evalkit.trajectory.same_call import RESPONSE_ID_KEYS
from evalkit.trajectory.session_index import NAMED

MAPPING_OVERRIDES = Table(
    name="mapping_overrides",
    columns="""
        agent_id String,
        version UInt32,
        overrides String,
        created_by String,
        created_at DateTime64(3, 'UTC')
    """,
    # Same (agent, version) written twice (a retried PUT) collapses into one row.
    engine="ReplacingMergeTree(created_at)",
    order_by="agent_id, version",
    sharding_key="cityHash64(agent_id)",
)

# Traces of spans that carried no session id, indexed under an empty one: a trace that never gets a
# named row is a session of its own (trajectory/session_index.py). Filled in the same insert as the
# spans, like the named rows; traces stored before this migration are not indexed. Only spans that
# did an agent's work count (an LLM call, a tool, an agent run, a retrieval: any GenAI operation but
# setting an agent up): a trace of nothing else (OpenLLMetry's one-span `create_agent` traces, an
# application's own spans) is no session.
# `s.session_id`, the span's: unqualified, ClickHouse would read the alias `'' AS session_id`
# and index every trace (migration 201 did; 203 replaces its view).
_SESSIONLESS_WORK = "s.session_id = '' AND (is_llm_call OR operation NOT IN ('', 'create_agent'))"
_SESSIONLESS_ROWS = ("SELECT agent_id, '' AS session_id, trace_id, min(start_time) AS first_start, "
                     "max(end_time) AS last_end, max(received_at) AS last_received FROM {source} AS s "
                     "WHERE __WORK__ GROUP BY agent_id, trace_id")
SESSIONLESS_TRACES_FEED = MaterializedView(name="sessionless_traces_feed", source="spans", target="session_traces",
                                           select=_SESSIONLESS_ROWS.replace("__WORK__", _SESSIONLESS_WORK))

# Migration 218: OpenLIT's pydantic-ai spans other than an agent's run (`Agent.run`, `run_sync`) do no agent's work:
# the graph nodes' (`user_prompt_processing`, `model_request`, `execute_tool <model>`) and `Agent.iter`'s end as the
# object they wrap is made, before the work they name (trajectory/mappers/openlit_pydantic_ai.py). Outside
# `Agent.run` (a `run_stream` turn, an `Agent.iter` driven by hand) each node span is a one-span trace that never
# carries the session id (OpenLIT applies `using_attributes` to none of them), which the view above listed as a
# session of its own with no LLM activity, three a streamed turn. A view that leaves them out replaces it (as 203
# did 201's); then the index rows it would not have written are deleted: those of traces whose sessionless spans
# include such a span and none that the new view takes (by the session index's key, by trace, and in list order).
# The per-trace summary keeps their traces, harmlessly: the list reaches a trace through the index only. (`GLOBAL`: on
# a cluster both reads are of the Distributed `spans`, and a subquery of one inside the other is refused otherwise.)
_NO_AGENT_WORK = (f"scope_name = '{openlit_pydantic_ai.SCOPE}' "
                  f"AND operation != '{openlit_pydantic_ai.RUN_OPERATION}'")
_SESSIONLESS_AGENT_WORK = f"{_SESSIONLESS_WORK} AND NOT ({_NO_AGENT_WORK})"
SESSIONLESS_AGENT_WORK_FEED = MaterializedView(
    name=SESSIONLESS_TRACES_FEED.name, source="spans", target="session_traces",
    select=_SESSIONLESS_ROWS.replace("__WORK__", _SESSIONLESS_AGENT_WORK))


def _no_longer_indexed(trace_column: str) -> str:
    """SQL: the row's agent and `trace_column` are a trace with a sessionless span of no agent's work and none of the
    sessionless spans 218's view takes (`{database}` where the database goes: `DeleteRows`)."""
    return (f"(agent_id, {trace_column}) IN (SELECT agent_id, trace_id FROM {{database}}.spans AS s "
            "WHERE (agent_id, trace_id) GLOBAL IN (SELECT agent_id, trace_id FROM {database}.spans AS s "
            f"WHERE s.session_id = '' AND {_NO_AGENT_WORK}) "
            f"GROUP BY agent_id, trace_id HAVING NOT max({_SESSIONLESS_AGENT_WORK}))")


# Migration 224: an MCP server's handling of a `tools/call` request (kind SERVER, `gen_ai.operation.name`
# `execute_tool`, `mcp.method.name` `tools/call`: trajectory/mappers/mcp_semconv.py) is the server side of a call
# that a client made for an agent, whose work that client's framework records (its tool span:
# trajectory/mcp_server_calls.py). A client that sends no trace context leaves the server's spans in a trace of the
# server's own with no session id: the Claude Agent SDK's in-process server, which the Claude Code CLI calls, spans
# each call under OpenLIT's `create_agent` span of the client connecting, for the client's whole life. The view above
# listed that trace as a session of its own: the session's MCP calls again, with no call ids or results. A view that
# leaves such spans out replaces it (as 218's did 203's); then the index rows it would not have written are deleted,
# as 218's were. A client that propagated context puts the server's spans in the session's trace, whose named row
# wins, as before. (`kind` is OTLP's SpanKind as sent: 2 is SERVER.) The method is known by its key alone: under the
# MCP conventions only a `tools/call` span is an `execute_tool`, and testing the key reads the map's `keys` subcolumn
# only, where reading its value cost every span of an insert ~0.3 µs (the values subcolumn read for the whole block).
_MCP_SERVER_TOOL_CALL = f"kind = 2 AND operation = 'execute_tool' AND has(attributes.keys, '{mcp_semconv.METHOD}')"
_SESSIONLESS_CLIENT_WORK = f"{_SESSIONLESS_AGENT_WORK} AND NOT ({_MCP_SERVER_TOOL_CALL})"
SESSIONLESS_CLIENT_WORK_FEED = MaterializedView(
    name=SESSIONLESS_TRACES_FEED.name, source="spans", target="session_traces",
    select=_SESSIONLESS_ROWS.replace("__WORK__", _SESSIONLESS_CLIENT_WORK))


def _no_longer_indexed_224(trace_column: str) -> str:
    """SQL: the row's agent and `trace_column` are a trace with a sessionless MCP server's span of a tool call and none
    of the sessionless spans 224's view takes (`{database}` where the database goes: `DeleteRows`)."""
    return (f"(agent_id, {trace_column}) IN (SELECT agent_id, trace_id FROM {{database}}.spans AS s "
            "WHERE (agent_id, trace_id) GLOBAL IN (SELECT agent_id, trace_id FROM {database}.spans AS s "
            f"WHERE s.session_id = '' AND {_MCP_SERVER_TOOL_CALL}) "
            f"GROUP BY agent_id, trace_id HAVING NOT max({_SESSIONLESS_CLIENT_WORK}))")


# The session index in the order the list pages it: a row per indexed row's time, under the id of the
# session it would list (a named session's id; for a sessionless or scrubbed row, its trace id), its
# position minus the time in nanoseconds, so that reading the sort key forwards reads newest first.
# Sort 0 places by last end (last seen), sort 1 by first start (first seen). Fed by the rows inserted into
# `session_traces` (whichever view wrote them), so it needs nothing of the spans' insert path. Only
# positions are kept, no sum or count: a re-sent export adds rows equal to ones already there, which the
# replacing key collapses, and a session's newest (or oldest) row is the same however its spans were
# batched. Which session a row's trace really belongs to (a root naming it arriving later, a nested
# run's id) is decided when a page is read, from `session_traces` and `trace_sessions`.
SESSION_ORDER = Table(
    name="session_order",
    columns="""
        agent_id LowCardinality(String),
        sort UInt8,
        position Int64,
        session_key String
    """,
    engine="ReplacingMergeTree",
    order_by="agent_id, sort, position, session_key",
    sharding_key="cityHash64(agent_id)",
)
_SESSION_ORDER_ROWS = (
    f"SELECT agent_id, o.1 AS sort, o.2 AS position, if({NAMED}, session_id, trace_id) AS session_key "
    "FROM {source} ARRAY JOIN [(toUInt8(0), -toUnixTimestamp64Nano(last_end)), "
    "(toUInt8(1), -toUnixTimestamp64Nano(first_start))] AS o")
SESSION_ORDER_FEED = MaterializedView(name="session_order_feed", source="session_traces", target="session_order",
                                      select=_SESSION_ORDER_ROWS)

# The session index ordered by trace: which sessions a trace has rows under (a late root's session
# claiming a trace listed on its own, sessions sharing a trace), found without reading the agent's whole
# index. The same min/max rows as `session_traces`, so as re-run safe.
TRACE_SESSIONS = Table(
    name="trace_sessions",
    columns="""
        agent_id LowCardinality(String),
        trace_id String,
        session_id String,
        first_start SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
        last_end SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
        last_received SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
    """,
    engine="AggregatingMergeTree",
    order_by="agent_id, trace_id, session_id",
    sharding_key="cityHash64(agent_id, trace_id)",
)
_TRACE_SESSIONS_ROWS = "SELECT agent_id, trace_id, session_id, first_start, last_end, last_received FROM {source}"
TRACE_SESSIONS_FEED = MaterializedView(name="trace_sessions_feed", source="session_traces", target="trace_sessions",
                                       select=_TRACE_SESSIONS_ROWS)

# Per trace, what the session list sorts and filters by, kept by the spans' insert (a view over
# `spans`, run in the flattener's insert like the session index). Every figure is a set or a min/max:
# a span inserted twice (a client's retried export, the flattener redoing a range after a crash, a
# late span in a later batch) changes nothing, so no FINAL and no dedup token is needed. The span
# count is that of distinct span ids (as `spans FINAL` counts them); errors and models are flags and
# sets. A span whose status changed between two exports counts as failing if either said so (the
# list reads the page's own figures from the spans, so only the filter sees that).
TRACE_SUMMARY = Table(
    name="trace_summary",
    columns="""
        agent_id LowCardinality(String),
        trace_id String,
        span_ids AggregateFunction(uniqExact, String),
        failing SimpleAggregateFunction(max, UInt8),
        models SimpleAggregateFunction(groupUniqArrayArray, Array(String)),
        first_start SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
        last_end SimpleAggregateFunction(max, DateTime64(9, 'UTC'))
    """,
    engine="AggregatingMergeTree",
    order_by="agent_id, trace_id",
    sharding_key="cityHash64(agent_id, trace_id)",
)
_TRACE_SUMMARY_ROWS = ("SELECT agent_id, trace_id, uniqExactState(span_id) AS span_ids, "
                       "max(toUInt8(status_code = 2)) AS failing, "
                       "groupUniqArrayIf(toString(model), model != '' AND is_llm_call) AS models, "
                       "min(start_time) AS first_start, max(end_time) AS last_end "
                       "FROM {source} GROUP BY agent_id, trace_id")
TRACE_SUMMARY_FEED = MaterializedView(name="trace_summary_feed", source="spans", target="trace_summary",
                                      select=_TRACE_SUMMARY_ROWS)

# Migration 205: the summary also counts the span rows inserted per trace (`span_rows`, a plain sum), an
# upper bound of its distinct spans that costs a sum to read where the exact count merges every span id's
# set. A span inserted twice (a retried export, a redone flattener batch) only makes it larger, so the
# list by span count reads sessions in the order of this bound and merges the sets for the top ones only
# (trajectory/session_list.py). A view with the count replaces 204's: the new one first, then the old one
# dropped, so that no span falls between (one fed by both meanwhile is in the sets twice, harmlessly, and
# its bound counts it once); then the spans stored before are counted again, which only raises the bound.
# (The new column last, as the table has it: a backfill inserts by position.)
_TRACE_SUMMARY_COUNTED_ROWS = _TRACE_SUMMARY_ROWS.replace(
    "max(end_time) AS last_end ", "max(end_time) AS last_end, count() AS span_rows ")
TRACE_SUMMARY_COUNTED_FEED = MaterializedView(name="trace_summary_counted_feed", source="spans",
                                              target="trace_summary", select=_TRACE_SUMMARY_COUNTED_ROWS)

# Migration 206: per trace and (model, provider), the LLM spans' figures that bound what a session costs,
# for the list by cost (trajectory/session_list.py, `_page_by_cost`): the prompt and completion tokens of
# calls that reported no cost, and the reported costs (a negative one as 0). Summed over every LLM span
# inserted, where the list prices only the calls it counts (a wrapping span, a second report of a call are
# not), so a sum only exceeds what is priced; a span inserted twice only raises it. Fed like 205's count
# (the new view, then the old one dropped, then the spans stored before summed again with no count, so
# that 205's bound is not doubled). Keys whose every figure sums to 0 are left out by `sumMap`.
_LLM_USAGE = (
    "sumMap(if(is_llm_call, ([(toString(model), toString(provider))], "
    "[toUInt64(if(ifNull(isFinite(reported_cost_usd), false), 0, "
    "if(input_tokens < cache_read_tokens + cache_write_tokens, input_tokens + cache_read_tokens + cache_write_tokens, "
    "input_tokens)))], "
    "[toUInt64(if(ifNull(isFinite(reported_cost_usd), false), 0, output_tokens))], "
    "[if(ifNull(isFinite(reported_cost_usd), false), greatest(assumeNotNull(reported_cost_usd), 0), 0)]), "
    "([], [], [], []))) AS llm_usage ")
_TRACE_SUMMARY_PRICED_ROWS = _TRACE_SUMMARY_COUNTED_ROWS.replace(
    "count() AS span_rows ", "count() AS span_rows, " + _LLM_USAGE)
TRACE_SUMMARY_PRICED_FEED = MaterializedView(name="trace_summary_priced_feed", source="spans",
                                             target="trace_summary", select=_TRACE_SUMMARY_PRICED_ROWS)
_LLM_USAGE_BACKFILL = _TRACE_SUMMARY_PRICED_ROWS.replace("count() AS span_rows", "toUInt64(0) AS span_rows")

# Migration 207: what the session list's count of LLM calls needs of a span's attributes (trajectory/
# session_list.py, `_SPANS_COUNTED`), as columns of `spans`, so that a page reads neither attribute map (the
# largest columns of `spans`: a first page at 10M spans 140 -> 82-113 ms of CPU, the flattening insert's cost
# unchanged; docs/performance.md, session 17). MATERIALIZED: computed from the attributes as a span is
# stored, never written by an insert, so never out of step with them; spans stored before read them computed
# from their attributes (the same values, at the old cost, until their parts are rewritten).
# - `response_id`: an LLM span's response id, the first non-empty of the keys the trajectory tells reports
#   of one call apart by (trajectory/same_call.py); '' for other spans. (213 replaces it with
#   `call_response_id`, which reads OpenInference's output too.)
# - `prepares_call`: an OpenInference LLM span with no messages, token counts or cost is a step preparing a
#   call, not a call (LlamaIndex's `_prepare_chat_with_tools`; `mappers.openinference.is_preprocessing`).
#   (Keys only: ClickHouse reads the maps' key subcolumns, not their values.)
_RESPONSE_ID = ("if(is_llm_call, multiIf(" + ", ".join(f"attributes['{k}'] != '', attributes['{k}']"
                                                      for k in RESPONSE_ID_KEYS) + ", ''), '')")
_PREPARES_CALL = (
    "is_llm_call AND has(mapKeys(attributes), 'openinference.span.kind') AND NOT arrayExists(k -> "
    + " OR ".join(f"startsWith(k, '{prefix}')" for prefix in CALL_EVIDENCE)
    + ", arrayConcat(mapKeys(attributes), mapKeys(payloads)))")

# Migration 208: the session list's rows kept per session (trajectory/session_rows.py). `trace_activity` says
# when each trace last got spans: a row per trace per insert into `spans`, stamped with the insert's clock (not
# the spans' received time: a batch flattened late carries early received times, and the keeper reads forwards
# by this stamp). `session_rows` holds each listed session's row (its figures as a page shows them, priced).
# `session_rows_mark` says how far along `trace_activity` the rows were kept, and with which price book: a trace
# with activity after the mark is read from its spans, as before. Migration 209 adds `cost_rest`: with `cost`,
# the exact cost as two floats that sort as it does (`session_rows.cost_pair`), so a page by cost or a cost floor
# is exact in SQL. Migration 210 makes the rows collapsing: the keeper writes a session's row again as a copy of
# the old one with `sign` -1 (which ranks and filters exactly as the old one, so a page's sort reads the two
# together and drops both) and the new one with `sign` 1; merges remove the pairs. Before it, a page looked every
# row it ranked up in the table again to learn whether a newer version had replaced it.
TRACE_ACTIVITY = Table(
    name="trace_activity",
    columns="""
        at DateTime64(3, 'UTC'),
        agent_id LowCardinality(String),
        trace_id String
    """,
    engine="MergeTree",
    order_by="at, agent_id, trace_id",
    sharding_key="cityHash64(agent_id, trace_id)",
)
_TRACE_ACTIVITY_ROWS = "SELECT now64(3) AS at, agent_id, trace_id FROM {source} GROUP BY agent_id, trace_id"
TRACE_ACTIVITY_FEED = MaterializedView(name="trace_activity_feed", source="spans", target="trace_activity",
                                       select=_TRACE_ACTIVITY_ROWS)
SESSION_ROWS = Table(
    name="session_rows",
    columns="""
        agent_id LowCardinality(String),
        session_key String,
        version UInt64,
        sign Int8,
        index_first_ns Int64,
        index_last_ns Int64,
        span_count UInt64,
        first_ns Int64,
        last_ns Int64,
        cost Nullable(Float64),
        cost_rest Float64,
        failing Bool,
        filter_models Array(String),
        shown String
    """,
    engine="VersionedCollapsingMergeTree(sign, version)",
    order_by="agent_id, session_key",
    # What a page shows of a session is one column (`shown`, JSON), read for the page's rows only after the sort:
    # reading two dozen columns of ~70 scattered rows by key cost 25-40 ms at 200,000 sessions, this one 2 ms.
    # Small granules and compressed blocks: a page's rows are scattered (docs/performance.md, session 31).
    settings="index_granularity = 256, min_compress_block_size = 4096, max_compress_block_size = 16384",
    sharding_key="cityHash64(agent_id)",
)
SESSION_ROWS_MARK = Table(
    name="session_rows_mark",
    columns="""
        slot UInt8,
        at DateTime64(3, 'UTC'),
        agent_id String,
        trace_id String,
        prices String,
        holder String DEFAULT '',
        held_until_ms Int64 DEFAULT 0,
        written_at DateTime64(3, 'UTC')
    """,
    engine="ReplacingMergeTree(written_at)",
    order_by="slot",
)


def _stored(*keys: str) -> str:
    """The first of these attributes that is not empty, in either map (a long value is a payload), else ''."""
    return "coalesce(" + ", ".join(f"nullIf({where}['{key}'], '')" for key in keys
                                   for where in ("attributes", "payloads")) + ", '')"


# Migration 212: whether a span failed, as its trajectory step shows it (`failed`, a column of `spans` computed as it
# is stored, like 207's), for the session list's error count and filter. A span's status is not the only sign: the
# trajectory also flags an exception event, OTel's `error.type`, an emitter's own flag on a tool span that stays OK
# (Haystack's `haystack.tool.error`, Strands' `gen_ai.tool.status`), and a tool result whose framework wrapper says
# it failed (LangChain's ToolMessage with `status: "error"`, which LangGraph's ToolNode returns for a tool that
# raised; LlamaIndex's ToolOutput with `is_error`; trajectory/mappers/tool_results.py). The wrapper is read from a
# tool span's output only (OpenInference's `output.value`, OpenLLMetry's `traceloop.entity.output`, which wraps it
# as `{"output": …, "kwargs": …}`), in either map (a long one is a payload). The JSON is parsed only for tool spans
# (a short-circuited AND). Then the per-trace summary's `failing` reads it: a view that does, the old one dropped,
# and the traces stored before with a span that failed but not by its status flagged (a max: re-run safe).
# The wrapper rules are `tool_results.unwrap`'s and `openllmetry`'s `{"output", "kwargs"}` rule in SQL: a change to
# those changes these (the corpus test holds the list's errors to the trajectory's for every capture).

# The LangSmith SDK's OTel export writes a tool run's outputs, `{"output": <the ToolMessage>}`, as `gen_ai.completion`
# (migration 215).
_TOOL_OUTPUT = _stored("output.value", "traceloop.entity.output", "gen_ai.completion")
_TOOL_RESULT = ("if(JSONHas(o, 'output') AND arrayAll(k -> k IN ('output', 'kwargs'), JSONExtractKeys(o)), "
                "JSONExtractRaw(o, 'output'), o)")
_WRAPPER_SAYS_FAILED = (
    "JSONExtractString(r, 'type') = 'tool' AND (JSONExtractString(r, 'data', 'status') = 'error' "
    "OR (JSONHas(r, 'tool_call_id') AND JSONExtractString(r, 'status') = 'error')) "
    "OR JSONExtractString(r, 'id', -1) = 'ToolMessage' AND JSONExtractString(r, 'kwargs', 'status') = 'error' "
    "OR JSONHas(r, 'tool_name') AND JSONExtractBool(r, 'is_error')")
# Migration 214: OpenInference's Haystack instrumentor makes no span of a tool Haystack's Agent runs, and records
# its failure only as `ToolCallResult(..., error=True)` in the `ChatMessage` reprs of the next LLM call's
# `input.value` (`{"messages": [repr, ...]}`); every later call re-sends it. The call right after it is the one
# flagged: a failed result among the messages after the last assistant message (trajectory/mappers/haystack.py's
# `openinference_messages` flags the same result in the trajectory). Read only for that scope's LLM spans.
_HAYSTACK_RESULT_FAILED = (
    f"scope_name = '{haystack.OPENINFERENCE_SCOPE}' AND attributes['openinference.span.kind'] = 'LLM' AND "
    "arrayExists(ms -> arrayExists(m -> position(m, '), error=True)') > 0, "
    "arraySlice(ms, arrayLastIndex(m -> startsWith(m, 'ChatMessage(_role=<ChatRole.ASSISTANT'), ms) + 1)), "
    f"[JSONExtract({_stored('input.value')}, 'messages', 'Array(String)')])")
# Migration 216: OpenInference's AgentChat instrumentor records a tool that failed only as `"is_error": true` in the
# next LLM call's input, in the tool-result JSON objects beside a message of role "function"
# (`llm.input_messages.<i>.function.<k>`, trajectory/mappers/autogen.py); its TOOL span ends OK (it sets OK before
# ERROR). Every later call re-sends the result: only the call right after it is flagged, one whose last failed result
# comes after its last assistant message. Results are read in both maps (a long one is a payload).
# The input messages are read (here and by 220's rule) by lambdas that capture no column, over a map's `keys` and
# `values` subcolumns: then the engine evaluates them only for the rows the scope and kind select (AND's later
# arguments are evaluated lazily, for the rows the earlier ones passed, by functions that allow it). A capturing lambda
# cost every span of the insert ~2 µs and +30 MB (bench/flatten.py, docs/performance.md, session 47). `mapFilter`,
# 216's first form, allows no lazy evaluation (no map function does), so it ran over every span's attributes (+55-75 MB
# peak engine memory inserting 82k spans); `mapKeys`/`mapValues` shared by two rules are evaluated for every span too
# (+40 MB). Subcolumns are read, not computed (session 50, migration 220).
_INPUT_MESSAGE = r"^llm\\.input_messages\\.[0-9]+\\."


def _input_message_indices(where: str, holds: str) -> str:
    """The message indices of the `where` map's `llm.input_messages.*` keys whose (k, v) `holds`."""
    return (f"arrayMap(k -> toInt64(splitByChar('.', k)[3]), "
            f"arrayFilter((k, v) -> {holds}, {where}.keys, {where}.values))")


_AUTOGEN_FAILED_RESULT = f"match(k, '{_INPUT_MESSAGE}" r"function\\.[0-9]+$') AND JSONExtractBool(v, 'is_error')"
_AUTOGEN_ASSISTANT = f"v = 'assistant' AND match(k, '{_INPUT_MESSAGE}" r"message\\.role$')"
_AUTOGEN_RESULT_FAILED = (
    f"scope_name = '{autogen.OPENINFERENCE_SCOPE}' AND attributes['openinference.span.kind'] = 'LLM' AND "
    f"arrayMax(arrayConcat([toInt64(-1)], {_input_message_indices('attributes', _AUTOGEN_FAILED_RESULT)}, "
    f"{_input_message_indices('payloads', _AUTOGEN_FAILED_RESULT)})) > "
    f"arrayMax(arrayConcat([toInt64(-1)], {_input_message_indices('attributes', _AUTOGEN_ASSISTANT)}))")
# Migration 217: OpenLLMetry's LlamaIndex instrumentation records a workflow agent's tool on its `call_tool` step's
# span (kind task, with `tool.name`), the step's output LlamaIndex's ToolCallResult, whose `tool_output` (the
# ToolOutput) says `is_error` for a tool that raised; the span's status stays unset
# (trajectory/mappers/openllmetry_llamaindex.py). The JSON is parsed only for that scope's spans naming a tool.
_LLAMAINDEX_STEP_FAILED = (
    f"scope_name = '{openllmetry_llamaindex.SCOPE}' AND attributes['{openllmetry_llamaindex.TOOL_NAME}'] != '' "
    f"AND JSONExtractBool({_stored('traceloop.entity.output')}, 'tool_output', 'is_error')")
# Migration 220: OpenInference's google-genai instrumentation makes no span of a function the SDK's automatic function
# calling runs, and records one that raised only as its `{"error": …}` function response, a `tool` message of the next
# LLM call's input (`llm.input_messages.<i>.message.content`; trajectory/mappers/google_genai.py flags the same result
# in the trajectory, by the same test: a JSON object whose `error` is neither null nor empty). Every later call
# re-sends it: only the call right after it is flagged, one whose last failed tool message comes after its last
# `model` message (216's shape). Contents are read in both maps (a long one is a payload); roles are short, in
# `attributes`. Read as 216's rule reads them, so only the rows the scope and kind select pay for it. The opening
# brace is written `char(123)`: a backfill's select is a format string (215's holds all of `_FAILED`).
_GOOGLE_GENAI_ERROR = (f"match(k, '{_INPUT_MESSAGE}" r"message\\.content$') AND startsWith(v, char(123)) "
                       "AND JSONExtractRaw(v, 'error') NOT IN ('', 'null', '\"\"')")
_GOOGLE_GENAI_TOOL = f"v = 'tool' AND match(k, '{_INPUT_MESSAGE}" r"message\\.role$')"
_GOOGLE_GENAI_MODEL = f"v = 'model' AND match(k, '{_INPUT_MESSAGE}" r"message\\.role$')"
_GOOGLE_GENAI_RESULT_FAILED = (
    f"scope_name = '{google_genai.OPENINFERENCE_SCOPE}' AND attributes['openinference.span.kind'] = 'LLM' AND "
    f"arrayMax(arrayConcat([toInt64(-1)], arrayIntersect("
    f"{_input_message_indices('attributes', _GOOGLE_GENAI_TOOL)}, "
    f"arrayConcat({_input_message_indices('attributes', _GOOGLE_GENAI_ERROR)}, "
    f"{_input_message_indices('payloads', _GOOGLE_GENAI_ERROR)})))) > "
    f"arrayMax(arrayConcat([toInt64(-1)], {_input_message_indices('attributes', _GOOGLE_GENAI_MODEL)}))")
# Migration 221: Google ADK's ReflectAndRetryToolPlugin answers the model in a failed tool's stead (its
# `ToolFailureResponse`: the exception's type and message, `response_type` ERROR_HANDLED_BY_REFLECT_AND_RETRY_PLUGIN);
# ADK's `execute_tool` span ends OK, its `gen_ai.tool.call.result` that answer (content capture on), in either map (the
# answer, with its reflection guidance, is over 1 kB: usually a payload). trajectory/mappers/google_adk.py flags the
# same result, by the same test. Each map is read by itself: the same test of `_stored`'s `coalesce(nullIf(...))`
# cost +15-40 MB peak engine memory inserting 82k spans beside 216's and 220's rules (nothing alone, nor beside the
# others), this form nothing measurable (session 50).
_ADK_REFLECTED_FAILURE = (
    f"scope_name = '{google_adk.SCOPE}' AND operation = 'execute_tool' AND ("
    + " OR ".join(f"JSONExtractString({where}['gen_ai.tool.call.result'], 'response_type') = "
                  f"'{google_adk.REFLECTED_FAILURE}'" for where in ("attributes", "payloads"))
    + ")")
# Migration 223: CrewAI's ToolFailure, a tool's own report that it failed (CrewAI's MCP tools answer an MCP `isError`
# result with one, reason `mcp_error`): OpenInference's crewai TOOL span ends OK, its `output.value` the failure's JSON,
# exactly its five fields (trajectory/mappers/crewai.py flags the same result by the same test). Each map read by
# itself, as 221's rule: only the crewai scope's tool spans parse JSON.
_CREWAI_TOOL_FAILURE = (
    f"scope_name = '{crewai.OPENINFERENCE_SCOPE}' AND operation = 'execute_tool' AND ("
    + " OR ".join(f"(JSONLength({where}['output.value']) = 5 AND JSONHas({where}['output.value'], 'code') "
                  f"AND JSONHas({where}['output.value'], 'retryable') AND JSONHas({where}['output.value'], 'details') "
                  f"AND JSONExtractString({where}['output.value'], 'reason') != '' "
                  f"AND JSONExtractString({where}['output.value'], 'message') != '')"
                  for where in ("attributes", "payloads"))
    + ")")
# Migration 226: the same failure under OpenInference's google-adk instrumentation, whose TOOL span (ADK's
# `execute_tool`, ending OK) records the plugin's answer as its `output.value`, the FunctionResponse ADK sent the model
# (`{"id", "name", "response"}`: trajectory/mappers/google_adk.py `openinference_tool` flags its `response` by the same
# test). Each map read by itself, as 221's rule: only that scope's tool spans parse JSON.
_ADK_OPENINFERENCE_REFLECTED_FAILURE = (
    f"scope_name = '{google_adk.OPENINFERENCE_SCOPE}' AND operation = 'execute_tool' AND ("
    + " OR ".join(f"JSONExtractString({where}['output.value'], 'response', 'response_type') = "
                  f"'{google_adk.REFLECTED_FAILURE}'" for where in ("attributes", "payloads"))
    + ")")
# Migration 230: Gemini CLI ends a failed tool's `tool_call` span OK; only the span's `gen_ai.output.messages` (the
# scheduler's record of the call, JSON) says `"status": "error"` (trajectory/mappers/gemini_cli.py flags the same
# result by the same test). Each map read by itself, as 221's rule: only that scope's tool_call spans parse JSON.
_GEMINI_CLI_TOOL_FAILED = (
    f"scope_name = '{gemini_cli.SCOPE}' AND name = '{gemini_cli.TOOL_CALL}' AND ("
    + " OR ".join(f"JSONExtractString({where}['gen_ai.output.messages'], 'status') = 'error'"
                  for where in ("attributes", "payloads"))
    + ")")
_FAILED = (
    f"status_code = 2 OR has(event_names, 'exception') OR attributes['{ERROR_TYPE}'] != '' "
    f"OR lower(attributes['{haystack.TOOL_ERROR}']) = 'true' OR attributes['{strands.TOOL_STATUS}'] = 'error' "
    f"OR ((operation = 'execute_tool' OR attributes['traceloop.span.kind'] = 'tool') AND "
    f"arrayExists(r -> {_WRAPPER_SAYS_FAILED}, arrayMap(o -> {_TOOL_RESULT}, [{_TOOL_OUTPUT}]))) "
    f"OR ({_HAYSTACK_RESULT_FAILED}) OR ({_AUTOGEN_RESULT_FAILED}) OR ({_LLAMAINDEX_STEP_FAILED}) "
    f"OR ({_GOOGLE_GENAI_RESULT_FAILED}) OR ({_ADK_REFLECTED_FAILURE}) OR ({_CREWAI_TOOL_FAILURE}) "
    f"OR ({_ADK_OPENINFERENCE_REFLECTED_FAILURE}) OR ({_GEMINI_CLI_TOOL_FAILED})")
_TRACE_SUMMARY_FAILED_ROWS = _TRACE_SUMMARY_PRICED_ROWS.replace("toUInt8(status_code = 2)", "toUInt8(failed)")
TRACE_SUMMARY_FAILED_FEED = MaterializedView(name="trace_summary_failed_feed", source="spans",
                                             target="trace_summary", select=_TRACE_SUMMARY_FAILED_ROWS)
# Only `failing` of the traces it changes: the other figures are sets, bounds and sums already counted.
_FAILED_BACKFILL = (
    "SELECT agent_id, trace_id, uniqExactState(span_id) AS span_ids, toUInt8(1) AS failing, "
    "CAST([], 'Array(String)') AS models, min(start_time) AS first_start, max(end_time) AS last_end, "
    "toUInt64(0) AS span_rows, CAST(([], [], [], []), "
    "'Tuple(Array(Tuple(String, String)), Array(UInt64), Array(UInt64), Array(Float64))') AS llm_usage "
    "FROM {source} WHERE failed AND status_code != 2 GROUP BY agent_id, trace_id")
# The traces stored before migration 214 with such a span (their `failed` was computed by 212's expression).
_HAYSTACK_FAILED_BACKFILL = _FAILED_BACKFILL.replace("WHERE failed AND status_code != 2",
                                                     f"WHERE ({_HAYSTACK_RESULT_FAILED}) AND status_code != 2")
# The traces stored before migration 215 with a LangSmith tool span whose ToolMessage failed.
_LANGSMITH_FAILED_BACKFILL = _FAILED_BACKFILL.replace(
    "WHERE failed AND status_code != 2",
    f"WHERE scope_name = 'langsmith' AND operation = 'execute_tool' AND ({_FAILED}) AND status_code != 2")
# The traces stored before migration 216 with an AgentChat LLM span whose input records a failed tool.
_AUTOGEN_FAILED_BACKFILL = _FAILED_BACKFILL.replace("WHERE failed AND status_code != 2",
                                                    f"WHERE ({_AUTOGEN_RESULT_FAILED}) AND status_code != 2")
# The traces stored before migration 217 with a LlamaIndex call_tool step whose ToolOutput failed.
_LLAMAINDEX_FAILED_BACKFILL = _FAILED_BACKFILL.replace("WHERE failed AND status_code != 2",
                                                       f"WHERE ({_LLAMAINDEX_STEP_FAILED}) AND status_code != 2")
# The traces stored before migration 220 with a google-genai LLM span whose input records a failed function.
_GOOGLE_GENAI_FAILED_BACKFILL = _FAILED_BACKFILL.replace(
    "WHERE failed AND status_code != 2", f"WHERE ({_GOOGLE_GENAI_RESULT_FAILED}) AND status_code != 2")
# The traces stored before migration 221 with an ADK tool span ReflectAndRetryToolPlugin answered for.
_ADK_FAILED_BACKFILL = _FAILED_BACKFILL.replace(
    "WHERE failed AND status_code != 2", f"WHERE ({_ADK_REFLECTED_FAILURE}) AND status_code != 2")
# The traces stored before migration 223 with a CrewAI tool span whose output is a ToolFailure.
_CREWAI_FAILED_BACKFILL = _FAILED_BACKFILL.replace(
    "WHERE failed AND status_code != 2", f"WHERE ({_CREWAI_TOOL_FAILURE}) AND status_code != 2")
# The traces stored before migration 226 with an OpenInference ADK tool span ReflectAndRetryToolPlugin answered for.
_ADK_OPENINFERENCE_FAILED_BACKFILL = _FAILED_BACKFILL.replace(
    "WHERE failed AND status_code != 2", f"WHERE ({_ADK_OPENINFERENCE_REFLECTED_FAILURE}) AND status_code != 2")
# The traces stored before migration 230 with a Gemini CLI tool_call span whose record says it failed (read by the rule,
# not the column: computed again in the background, a part written before holds the old value until then).
_GEMINI_CLI_FAILED_BACKFILL = _FAILED_BACKFILL.replace(
    "WHERE failed AND status_code != 2", f"WHERE ({_GEMINI_CLI_TOOL_FAILED}) AND status_code != 2")

# Migration 213: an LLM span's response id also where OpenInference's client instrumentations record it, the start
# of `output.value` (`openinference.OUTPUT_RESPONSE_ID`, in either map: a long one is a payload), so that the list
# counts once a call that they and the Anthropic SDK's own spans both report, as the trajectory does
# (trajectory/same_call.py). A column of its own, 207's dropped: spans stored before it read it computed from their
# attributes, so their list agrees with their trajectory too (a changed MATERIALIZED expression would leave the
# old value stored in the old parts).
_CALL_RESPONSE_ID = (
    "if(is_llm_call, multiIf(" + ", ".join(f"attributes['{k}'] != '', attributes['{k}']" for k in RESPONSE_ID_KEYS)
    + ", attributes['openinference.span.kind'] = 'LLM', extract(coalesce(nullIf(attributes['output.value'], ''), "
    + "payloads['output.value']), '" + OUTPUT_RESPONSE_ID.replace("\\", "\\\\") + "'), ''), '')")

# Migration 219: OpenLIT's ag2 spans (`ConversableAgent.send`, `receive`, `generate_reply`, each of operation `chat`,
# the replies with made-up usage) are no LLM calls: ingest no longer marks them `is_llm_call` (ingest/attribution.py).
# Stored before, they listed every reply as a call (the user proxy's wrap none): their `is_llm_call` is set as ingest
# sets it now (`UpdateRows`; `call_response_id` and `prepares_call`, which read it, are computed again with it).
# `trace_summary` summed them at insert (`models` took their `unknown`, `llm_usage` their made-up tokens) and keeps no
# span's part of a sum or a set: the rows of the traces holding such spans are deleted, then summarised again from
# their spans as 212's view does (by scope alone, not `is_llm_call`: run again, it finds the same traces and writes the
# same rows). A span of those traces inserted meanwhile, by the view and the backfill both, only raises the bounds.
# (`GLOBAL`, as 218's: on a cluster both reads are of the Distributed `spans`.)
_OPENLIT_AG2 = f"scope_name = '{openlit_ag2.SCOPE}'"
_OPENLIT_AG2_TRACES = f"(agent_id, trace_id) IN (SELECT agent_id, trace_id FROM {{database}}.spans " \
    f"WHERE {_OPENLIT_AG2})"


def _summary_of_traces(select: str, spans_where: str, spans_prewhere: str | None = None) -> str:
    """A per-trace summary `select` of `{source}` for the traces holding a span `spans_where` selects alone (read
    first by `spans_prewhere` where given: a cheap test, so that the other spans' columns `spans_where` reads are
    not). Raises if the select has not exactly the one place to restrict: a backfill of every trace would count them
    twice."""
    whole = "FROM {source} GROUP BY"
    if select.count(whole) != 1:
        raise ValueError(f"the trace summary's select has {select.count(whole)} places of {whole!r}, not one")
    prewhere = f"PREWHERE {spans_prewhere} " if spans_prewhere else ""
    return select.replace(whole, "FROM {source} WHERE (agent_id, trace_id) GLOBAL IN "
                                 f"(SELECT agent_id, trace_id FROM {{source}} {prewhere}WHERE {spans_where}) GROUP BY")


_OPENLIT_AG2_SUMMARY = _summary_of_traces(_TRACE_SUMMARY_FAILED_ROWS, _OPENLIT_AG2)

# Migration 222: ingest's `reasoning_tokens` also reads the keys the mappers read after the others
# (`attribution.REASONING_KEYS_ADDED_222`: AI SDK 7's GenAI integration's `ai.usage.outputTokenDetails.reasoningTokens`,
# pydantic-ai's `gen_ai.usage.details.thinking_tokens` and its siblings, ...), so that the list counts the reasoning
# tokens the trajectory does. Stored before, a span holding one reads 0 (or its usage JSON's count): it is set as ingest
# sets it now (`UpdateRows`), only where none of the keys ranked before them is usable (then the new value is the
# first usable added key's, as the flattening's `coalesce`), and only where that changes it (run again, nothing is
# found). A count is read as ingest reads it (an int; a finite double, truncated; a string holding an integer, spaces
# trimmed), from the stored text and its type (evalkit/attributes.py), in either map (a short value is an attribute,
# but a payload threshold is a setting). `trace_summary` holds no reasoning tokens: nothing to summarise again.
def _stored_count(key: str) -> str:
    """A stored span's `key` as the flattening reads a token count (ingest/attribution.py, `wanted_maps`), or NULL."""
    text = f"if(has(attributes.keys, '{key}'), attributes['{key}'], payloads['{key}'])"
    kind = f"attribute_types['{key}']"
    return (f"multiIf({kind} = {INT}, toInt64OrNull({text}), {kind} = {DOUBLE}, "
            f"if(abs(toFloat64OrNull({text})) < 9e18, toInt64(trunc(toFloat64OrNull({text}))), NULL), "
            f"{kind} = 0, toInt64OrNull(trimBoth({text})), NULL)")


_REASONING_RANKED_BEFORE = tuple(k for k in REASONING_KEYS if k not in REASONING_KEYS_ADDED_222)
_REASONING_ADDED = f"coalesce({', '.join(_stored_count(k) for k in REASONING_KEYS_ADDED_222)})"
_REASONING_NOW = f"toUInt64(greatest(assumeNotNull({_REASONING_ADDED}), 0))"
_REASONING_CHANGED = (
    "(" + " OR ".join(f"has(attributes.keys, '{k}') OR has(payloads.keys, '{k}')" for k in REASONING_KEYS_ADDED_222)
    + f") AND isNotNull({_REASONING_ADDED}) AND "
    + " AND ".join(f"isNull({_stored_count(k)})" for k in _REASONING_RANKED_BEFORE)
    + f" AND reasoning_tokens != {_REASONING_NOW}")

# Migration 225: what pricing a call needs beyond its four token counts, as columns of `spans` computed as a span is
# stored (MATERIALIZED, as 212's `failed`), so that the session list prices what the trajectory prices
# (trajectory/cost.py, `price_step`; trajectory/prices.py, `TokenCounts`):
# - `input_audio_tokens`, `output_audio_tokens`: of an LLM span's prompt and completion tokens, the audio ones
#   (`attribution.INPUT_AUDIO_KEYS` / `OUTPUT_AUDIO_KEYS`, the first usable, in either map: an int, a double
#   truncated, a string of a number), which an audio model bills at rates of its own;
# - `web_search_requests`: the web searches the provider ran within an Anthropic answer, which OpenInference's
#   anthropic instrumentation records only in the span's `metadata` JSON (`server_tool_use.web_search_requests`,
#   trajectory/mappers/anthropic_server_tools.py), in either map (its citations make it long).
# Each is a key test first (an LLM span, the key in a map's `keys` subcolumn; the scope for the JSON), so the spans
# that hold none pay that alone: the value is read and the JSON parsed only for the rows that pass. A count is read
# from its text alone: 222's `_stored_count` (the value's type from `attribute_types`, the text four times) cost every
# span of an insert ~0.3-0.6 µs, this form ~0.15 µs (~0.3 % of a flattening insert, whose own A/B shows nothing;
# docs/performance.md, session 53). Spans stored before are computed again in the background (`MATERIALIZE COLUMN`,
# as `RedefineColumn` does; until then a read computes them from the stored attributes, the same values).
def _stored_audio(keys: tuple[str, ...]) -> str:
    present = " OR ".join(f"has(attributes.keys, '{k}') OR has(payloads.keys, '{k}')" for k in keys)
    counts = ", ".join(f"toFloat64OrNull(trimBoth(if(has(attributes.keys, '{k}'), attributes['{k}'], payloads['{k}'])))"
                       for k in keys)
    return f"if(is_llm_call AND ({present}), toUInt64(least(greatest(ifNull(coalesce({counts}), 0), 0), 9e18)), 0)"


_INPUT_AUDIO_TOKENS = f"input_audio_tokens UInt64 MATERIALIZED {_stored_audio(INPUT_AUDIO_KEYS)}"
_OUTPUT_AUDIO_TOKENS = f"output_audio_tokens UInt64 MATERIALIZED {_stored_audio(OUTPUT_AUDIO_KEYS)}"
_METADATA = "if(has(attributes.keys, 'metadata'), attributes['metadata'], payloads['metadata'])"
_ANTHROPIC_OPENINFERENCE_SEARCHES = (
    f"if(scope_name = '{anthropic_openinference.SCOPE}' AND is_llm_call "
    f"AND (has(attributes.keys, 'metadata') OR has(payloads.keys, 'metadata')), "
    f"JSONExtractUInt({_METADATA}, 'server_tool_use', 'web_search_requests'), 0)")
_WEB_SEARCH_REQUESTS = f"web_search_requests UInt64 MATERIALIZED {_ANTHROPIC_OPENINFERENCE_SEARCHES}"
AUDIO_AND_SEARCH_COLUMNS = (_INPUT_AUDIO_TOKENS, _OUTPUT_AUDIO_TOKENS, _WEB_SEARCH_REQUESTS)
# The list by cost reads sessions in the order of a bound of their cost (206's `llm_usage`), which priced searches
# would exceed: the per-trace summary also sums an LLM span's web searches (of a call that reported no cost), under the
# key (model, `WEB_SEARCHES` + provider), in the prompt tokens' place, which the list bounds at the model's price of a
# search (trajectory/session_list.py, `_cost_bounds`). A key, not a column: the table's other backfills insert by
# position. A view that sums them replaces 212's (the new one first, then the old one dropped: a span fed by both
# meanwhile only raises the bound); then the traces stored before that hold a search are given their searches' keys
# (the scope first, so that the stored spans of other scopes compute nothing; run again, the bound only rises).
WEB_SEARCHES = "web_search@"
_REPORTED = "ifNull(isFinite(reported_cost_usd), false)"
_USAGE_KEY = "(toString(model), toString(provider))"
_USAGE_PROMPT = (f"toUInt64(if({_REPORTED}, 0, if(input_tokens < cache_read_tokens + cache_write_tokens, "
                 "input_tokens + cache_read_tokens + cache_write_tokens, input_tokens)))")
_USAGE_COMPLETION = f"toUInt64(if({_REPORTED}, 0, output_tokens))"
_USAGE_COST = f"if({_REPORTED}, greatest(assumeNotNull(reported_cost_usd), 0), 0)"
_SEARCHED = f"web_search_requests > 0 AND NOT {_REPORTED}"
_SEARCH_KEY = f"(toString(model), concat('{WEB_SEARCHES}', toString(provider)))"
_LLM_USAGE_SEARCHED = (
    f"sumMap(if(is_llm_call, if({_SEARCHED}, "
    f"([{_USAGE_KEY}, {_SEARCH_KEY}], [{_USAGE_PROMPT}, toUInt64(web_search_requests)], "
    f"[{_USAGE_COMPLETION}, toUInt64(0)], [{_USAGE_COST}, toFloat64(0)]), "
    f"([{_USAGE_KEY}], [{_USAGE_PROMPT}], [{_USAGE_COMPLETION}], [{_USAGE_COST}])), ([], [], [], []))) AS llm_usage ")
_TRACE_SUMMARY_SEARCHED_ROWS = _TRACE_SUMMARY_FAILED_ROWS.replace(_LLM_USAGE, _LLM_USAGE_SEARCHED)
TRACE_SUMMARY_SEARCHED_FEED = MaterializedView(name="trace_summary_searched_feed", source="spans",
                                               target="trace_summary", select=_TRACE_SUMMARY_SEARCHED_ROWS)
_SEARCHES_BACKFILL = (
    "SELECT agent_id, trace_id, uniqExactState(span_id) AS span_ids, toUInt8(0) AS failing, "
    "CAST([], 'Array(String)') AS models, min(start_time) AS first_start, max(end_time) AS last_end, "
    f"toUInt64(0) AS span_rows, sumMap(([{_SEARCH_KEY}], [toUInt64(web_search_requests)], [toUInt64(0)], "
    "[toFloat64(0)])) AS llm_usage "
    f"FROM {{source}} WHERE scope_name = '{anthropic_openinference.SCOPE}' AND is_llm_call AND {_SEARCHED} "
    "GROUP BY agent_id, trace_id")

# Migration 227: the web searches pydantic-ai records (`gen_ai.usage.details.web_search_requests` on its chat span:
# `pydantic_ai.WEB_SEARCHES`, which the trajectory prices; its Anthropic adapter's server-tool count, its OpenAI
# Responses adapter's `search` actions) in the same column, read as 225 reads an audio count (an LLM span, the key in a
# map's `keys` subcolumn first, so the spans that hold none pay that alone), else 225's reading. The traces stored
# before that hold one are given their searches' keys in the per-trace summary, as 225 did (the key first, so other
# spans compute nothing), their count read from the key, not the column: the spans' column is computed again in the
# background (`MATERIALIZE COLUMN`), and until then a part written before holds 225's value.
_PYDANTIC_AI_KEY = (f"(has(attributes.keys, '{pydantic_ai.WEB_SEARCHES}') "
                    f"OR has(payloads.keys, '{pydantic_ai.WEB_SEARCHES}'))")
_PYDANTIC_AI_SEARCHES = (
    f"toUInt64(least(greatest(ifNull(toFloat64OrNull(trimBoth(if(has(attributes.keys, '{pydantic_ai.WEB_SEARCHES}'), "
    f"attributes['{pydantic_ai.WEB_SEARCHES}'], payloads['{pydantic_ai.WEB_SEARCHES}']))), 0), 0), 9e18))")
_WEB_SEARCH_REQUESTS_227 = (f"web_search_requests UInt64 MATERIALIZED if(is_llm_call AND {_PYDANTIC_AI_KEY}, "
                            f"{_PYDANTIC_AI_SEARCHES}, {_ANTHROPIC_OPENINFERENCE_SEARCHES})")
_PYDANTIC_AI_SEARCHES_BACKFILL = _SEARCHES_BACKFILL.replace(
    f"scope_name = '{anthropic_openinference.SCOPE}' AND is_llm_call AND {_SEARCHED}",
    f"is_llm_call AND {_PYDANTIC_AI_KEY} AND {_PYDANTIC_AI_SEARCHES} > 0 AND NOT {_REPORTED}").replace(
    "toUInt64(web_search_requests)", _PYDANTIC_AI_SEARCHES)

# Migration 228: the web searches OpenAI bills in an openai-agents answer, which its Responses usage does not count and
# the trajectory counts from the answer's `web_search_call` items whose action is a `search`
# (`openai_agents_hosted_tools.count_billed_searches`), as each instrumentation records them: OpenInference's in its
# LLM span's `output.value` (the Response's JSON: `"action":{"type":"search"`, compact, no text's escaped quote can
# make it), OpenTelemetry's in its chat span's `gen_ai.output.messages` (each item's repr,
# `action=ActionSearch(type='search'`). A scope test first (then an LLM span, the key in a map's `keys` subcolumn),
# so that the spans of every other scope pay that alone and only these scopes' LLM spans are searched; else 227's
# reading. The traces stored before that hold one are given their searches' keys in the per-trace summary, as 227
# did (the scope first), their count read from the text, not the column (computed again in the background).
def _counted_in(key: str, needle: str) -> str:
    """The condition and value of a `multiIf` branch: an LLM span holding `key`, the times its text holds `needle`."""
    text = f"if(has(attributes.keys, '{key}'), attributes['{key}'], payloads['{key}'])"
    return (f"is_llm_call AND (has(attributes.keys, '{key}') OR has(payloads.keys, '{key}')), "
            f"countSubstrings({text}, '{needle}')")


_OPENAI_AGENTS_SCOPES = f"scope_name IN ('{openai_sdk.OPENAI_AGENTS_SCOPE}', '{otel_openai_agents.SCOPE}')"
_OPENAI_AGENTS_SEARCHES = (
    f"multiIf(scope_name = '{openai_sdk.OPENAI_AGENTS_SCOPE}' AND "
    + _counted_in("output.value", '"action":{"type":"search"')
    + f", scope_name = '{otel_openai_agents.SCOPE}' AND "
    + _counted_in("gen_ai.output.messages", "action=ActionSearch(type=\\'search\\'")
    + ", 0)")
_WEB_SEARCH_REQUESTS_228 = (f"web_search_requests UInt64 MATERIALIZED if({_OPENAI_AGENTS_SCOPES}, "
                            f"{_OPENAI_AGENTS_SEARCHES}, if(is_llm_call AND {_PYDANTIC_AI_KEY}, "
                            f"{_PYDANTIC_AI_SEARCHES}, {_ANTHROPIC_OPENINFERENCE_SEARCHES}))")
_BACKFILLED_SEARCHES = _OPENAI_AGENTS_SEARCHES.replace("{", "{{").replace("}", "}}")  # a backfill is a format string
_OPENAI_AGENTS_SEARCHES_BACKFILL = _SEARCHES_BACKFILL.replace(
    f"scope_name = '{anthropic_openinference.SCOPE}' AND is_llm_call AND {_SEARCHED}",
    f"{_OPENAI_AGENTS_SCOPES} AND {_BACKFILLED_SEARCHES} > 0 AND NOT {_REPORTED}").replace(
    "toUInt64(web_search_requests)", _BACKFILLED_SEARCHES)

# Migration 229: session 54's two token rules of the flattening (ingest/attribution.py), for the spans stored before:
# - `input_tokens` adds the cache's tokens for OpenLLMetry's Bedrock scope (`OPENLLMETRY_BEDROCK_SCOPE`: Bedrock's
#   `inputTokens` leave the cache reads and writes out, as OpenLIT's Anthropic ones do). The list's read-time rule adds
#   them only where they outnumber the rest: bedrock-runtime_openllmetry's last call was listed 2,550 tokens short.
#   Also for OpenLIT's Anthropic scope (`OPENLIT_ANTHROPIC_SCOPE`), whose rule 36ea472 gave ingest with no migration:
#   its spans stored before were listed short alike (anthropic-sdk_openlit's streamed turn 2,048 tokens short).
# - `output_tokens` adds Langfuse's `output_reasoning` (or `output_reasoning_tokens`) to its own `output` key of
#   `langfuse.observation.usage_details`, which leaves the reasoning tokens out (its usage keys are exclusive): the
#   LangChain CallbackHandler's reasoning calls were listed with 214 completion tokens for 662.
# Each is set as ingest sets it now (`UpdateRows`), from the stored attributes in either map (counts read as 222
# reads them), only where the rule gave the value: a span of either scope whose prompt tokens are a key's (not a usage
# JSON's, which neither scope writes) with cache tokens, a span whose completion tokens are its Langfuse JSON's (no key
# of `OUTPUT_TOKEN_KEYS` usable, the JSON a string: the flattening reads no other type) with reasoning tokens; a value
# already set is kept (run again, nothing changes). (The keys of the rules' time: their lists may grow after it.)
# A mutation's condition is read with no PREWHERE, every column it names for every span: the full test as the
# condition read every span's attribute maps (2-4 s on 204,800 spans, docs/performance.md, session 55), so the
# condition is the scope or the key alone (the scope column; the maps' `keys` subcolumns) and the rest is in the
# assignment, evaluated for those spans only. `trace_summary` summed the old counts in its cost bound (`llm_usage`):
# the traces holding a span either rule changes are summarised again, as 219's are, their spans found by a read whose
# PREWHERE is that scope or key test (the full test read the other spans' maps: ~1.7 s against ~0.15 s).
_CACHE_LEFT_OUT = f"scope_name IN ('{OPENLLMETRY_BEDROCK_SCOPE}', '{OPENLIT_ANTHROPIC_SCOPE}')"
_CACHE_LEFT_OUT_PROMPT = f"coalesce({', '.join(_stored_count(k) for k in INPUT_TOKEN_KEYS)})"
_CACHE_LEFT_OUT_CACHE = " + ".join(f"coalesce({', '.join(_stored_count(k) for k in keys)}, 0)"
                                  for keys in (CACHE_READ_KEYS, CACHE_WRITE_KEYS))
_CACHE_LEFT_OUT_INPUT_NOW = (f"toUInt64(greatest({_CACHE_LEFT_OUT_PROMPT}, 0)) "
                             f"+ toUInt64(greatest({_CACHE_LEFT_OUT_CACHE}, 0))")
_CACHE_LEFT_OUT_CACHED = (f"{_CACHE_LEFT_OUT} AND isNotNull({_CACHE_LEFT_OUT_PROMPT}) "
                          f"AND {_CACHE_LEFT_OUT_CACHE} > 0")
_LANGFUSE_USAGE = "langfuse.observation.usage_details"
_LANGFUSE_KEY = f"(has(attributes.keys, '{_LANGFUSE_USAGE}') OR has(payloads.keys, '{_LANGFUSE_USAGE}'))"
_LANGFUSE_JSON = f"if(has(attributes.keys, '{_LANGFUSE_USAGE}'), attributes['{_LANGFUSE_USAGE}'], " \
    f"payloads['{_LANGFUSE_USAGE}'])"
_LANGFUSE_OWN_OUTPUT = f"JSONExtract({_LANGFUSE_JSON}, 'output', 'Nullable(Int64)')"
_LANGFUSE_REASONING = ("coalesce(" + ", ".join(f"JSONExtract({_LANGFUSE_JSON}, '{k}', 'Nullable(Int64)')"
                                              for k in ("output_reasoning", "output_reasoning_tokens")) + ", 0)")
_LANGFUSE_OUTPUT_NOW = f"toUInt64(greatest({_LANGFUSE_OWN_OUTPUT} + {_LANGFUSE_REASONING}, 0))"
_LANGFUSE_REASONED = (
    f"{_LANGFUSE_KEY} AND attribute_types['{_LANGFUSE_USAGE}'] = 0 AND {_LANGFUSE_JSON} != '' "
    + " ".join(f"AND isNull({_stored_count(k)})" for k in OUTPUT_TOKEN_KEYS)
    + f" AND isNotNull({_LANGFUSE_OWN_OUTPUT}) AND {_LANGFUSE_REASONING} > 0")
# What is left to set (none once 229 has run).
INPUT_TOKENS_UNSET_229 = f"{_CACHE_LEFT_OUT_CACHED} AND input_tokens != {_CACHE_LEFT_OUT_INPUT_NOW}"
OUTPUT_TOKENS_UNSET_229 = f"{_LANGFUSE_REASONED} AND output_tokens != {_LANGFUSE_OUTPUT_NOW}"
_TOKENS_RECOUNTED_PREWHERE = f"{_CACHE_LEFT_OUT} OR {_LANGFUSE_KEY}"
_TOKENS_RECOUNTED = f"({_CACHE_LEFT_OUT_CACHED}) OR ({_LANGFUSE_REASONED})"
_TOKENS_RECOUNTED_TRACES = (f"(agent_id, trace_id) IN (SELECT agent_id, trace_id FROM {{database}}.spans "
                            f"PREWHERE {_TOKENS_RECOUNTED_PREWHERE} WHERE {_TOKENS_RECOUNTED})")
_TOKENS_RECOUNTED_SUMMARY = _summary_of_traces(_TRACE_SUMMARY_SEARCHED_ROWS, _TOKENS_RECOUNTED,
                                               spans_prewhere=_TOKENS_RECOUNTED_PREWHERE)

# Migration 230: session 55's rules of the flattening for Firebase Genkit's and Gemini CLI's spans (ingest/
# attribution.py), for the spans stored before, which the list counted nothing of:
# - Genkit's session (`genkit.SESSION_ID`, a session key now): `session_id` set on the spans holding it that had none
#   (the key test the condition: the maps' `keys` subcolumns), and their traces indexed under it (`session_traces`,
#   which feeds the indexes in list order and by trace). Stored before, a Genkit trace was no session at all: none of
#   its spans named one, nor did work the sessionless index knew (it has no GenAI operation).
# - Genkit's model calls (an action span of subtype `model` in its scope): `is_llm_call`, operation `chat`, the model
#   (the raw response's, else the action's name after its namespace) and the token counts of the output's `usage`, as
#   the flattening reads them. Genkit writes none of the flat token keys (a stored count was 0, the JSON's is the one
#   the flattening takes). As 229's, the condition is the scope alone and the rest in the assignments, evaluated for
#   those spans only; run again, they compute the same values. Their traces are then indexed as sessionless as the
#   sessionless view indexes them now (a call with no session id: under a session a named row wins; with none, a
#   Genkit run outside an agent, the trace is a session of its own).
# - Gemini CLI's `llm_call` spans: `is_llm_call` (the scope and the operation, columns).
# - `failed` given again with Gemini CLI's tool rule (`_GEMINI_CLI_TOOL_FAILED`).
# `trace_summary` summed the old figures (`models`, `llm_usage`): the traces holding a span of either scope are
# summarised again (by scope, as 219's: run again, the same traces, the same rows), then flagged where a Gemini CLI tool
# failed, read by the rule (`failed` is computed again in the background).
_GENKIT_CALL_STORED = f"{_stored(genkit.SUBTYPE)} = 'model' AND {_stored(genkit.TYPE)} = 'action'"
_GENKIT_OUTPUT_STORED = _stored(genkit.OUTPUT)
_GENKIT_MODEL_STORED = (f"coalesce(nullIf(JSONExtractString({_GENKIT_OUTPUT_STORED}, 'raw', 'model'), ''), "
                        f"arrayElement(splitByChar('/', {_stored(GENKIT_NAME)}), -1))")


def _genkit_count(column: str, key: str) -> str:
    """An assignment of a token count `column` from a Genkit call's stored `usage` (`key`), as ingest reads it."""
    found = f"JSONExtract({_GENKIT_OUTPUT_STORED}, 'usage', '{key}', 'Nullable(Int64)')"
    count = f"toUInt64(greatest(coalesce({found}, 0), 0))"
    return f"{column} = if({_GENKIT_CALL_STORED}, {count}, {column})"


_GENKIT_CALLS_SET = ", ".join((
    f"is_llm_call = is_llm_call OR ({_GENKIT_CALL_STORED})",
    f"operation = if(operation = '' AND {_GENKIT_CALL_STORED}, 'chat', operation)",
    f"model = if({_GENKIT_CALL_STORED} AND {_GENKIT_MODEL_STORED} != '', {_GENKIT_MODEL_STORED}, model)",
    _genkit_count("input_tokens", GENKIT_INPUT_TOKENS), _genkit_count("output_tokens", GENKIT_OUTPUT_TOKENS),
    _genkit_count("cache_read_tokens", GENKIT_CACHE_READ_TOKENS),
    _genkit_count("reasoning_tokens", GENKIT_REASONING_TOKENS)))
_GENKIT = f"scope_name = '{genkit.SCOPE}'"
_GENKIT_SESSION_KEY = f"(has(attributes.keys, '{genkit.SESSION_ID}') OR has(payloads.keys, '{genkit.SESSION_ID}'))"
_GENKIT_SESSIONS_INDEXED = (
    "SELECT agent_id, session_id, trace_id, min(start_time) AS first_start, max(end_time) AS last_end, "
    f"max(received_at) AS last_received FROM {{source}} PREWHERE {_GENKIT_SESSION_KEY} WHERE session_id != '' "
    "GROUP BY agent_id, session_id, trace_id")
_GENKIT_SESSIONLESS_INDEXED = _SESSIONLESS_ROWS.replace("__WORK__", f"s.session_id = '' AND {_GENKIT} AND is_llm_call")
_GEMINI_CLI_CALLS = (f"scope_name = '{gemini_cli.SCOPE}' AND operation = '{gemini_cli.LLM_CALL}' "
                     "AND NOT is_llm_call")
_COUNTED_230 = f"scope_name IN ('{genkit.SCOPE}', '{gemini_cli.SCOPE}')"
_COUNTED_230_TRACES = (f"(agent_id, trace_id) IN (SELECT agent_id, trace_id FROM {{database}}.spans "
                       f"WHERE {_COUNTED_230})")
_COUNTED_230_SUMMARY = _summary_of_traces(_TRACE_SUMMARY_SEARCHED_ROWS, _COUNTED_230)

MIGRATIONS: list[Migration] = [
    Migration(200, "per-agent mapping overrides, versioned", (MAPPING_OVERRIDES,)),
    Migration(201, "traces without a session id in the session index", (SESSIONLESS_TRACES_FEED,)),
    # Views first, then the copy of what was indexed before: a row inserted in between lands twice, harmlessly.
    Migration(202, "the session index by list order and by trace", (
        SESSION_ORDER, SESSION_ORDER_FEED, TRACE_SESSIONS, TRACE_SESSIONS_FEED,
        Backfill("session_order", "session_traces", _SESSION_ORDER_ROWS),
        Backfill("trace_sessions", "session_traces", _TRACE_SESSIONS_ROWS))),
    # Rows 201's view wrote for traces whose spans did carry a session id stay: harmless (a named row
    # wins), only no longer added.
    Migration(203, "traces with a session id no longer indexed as sessionless too", (
        DropView(SESSIONLESS_TRACES_FEED.name), SESSIONLESS_TRACES_FEED)),
    # The view first, then the spans stored before it: a span in both counts once (sets, min/max).
    Migration(204, "per-trace summary the session list sorts and filters by", (
        TRACE_SUMMARY, TRACE_SUMMARY_FEED, Backfill("trace_summary", "spans", _TRACE_SUMMARY_ROWS))),
    Migration(205, "per-trace bound of the span count the list by span count reads first", (
        AddColumn("trace_summary", "span_rows SimpleAggregateFunction(sum, UInt64) DEFAULT 0"),
        TRACE_SUMMARY_COUNTED_FEED, DropView(TRACE_SUMMARY_FEED.name),
        Backfill("trace_summary", "spans", _TRACE_SUMMARY_COUNTED_ROWS))),
    Migration(206, "per-trace bound of the LLM calls' cost the list by cost reads first", (
        AddColumn("trace_summary", "llm_usage SimpleAggregateFunction(sumMap, Tuple(Array(Tuple(String, String)), "
                                   "Array(UInt64), Array(UInt64), Array(Float64))) DEFAULT ([], [], [], [])"),
        TRACE_SUMMARY_PRICED_FEED, DropView(TRACE_SUMMARY_COUNTED_FEED.name),
        Backfill("trace_summary", "spans", _LLM_USAGE_BACKFILL))),
    Migration(207, "an LLM span's response id and whether it only prepares a call, kept as it is stored", (
        AddColumn("spans", f"response_id String MATERIALIZED {_RESPONSE_ID}"),
        AddColumn("spans", f"prepares_call Bool MATERIALIZED {_PREPARES_CALL}"))),
    # The view first, then every trace stored before it as active now: the keeper reads them all once.
    Migration(208, "the session list's rows kept per session, and when each trace last got spans", (
        TRACE_ACTIVITY, TRACE_ACTIVITY_FEED, SESSION_ROWS, SESSION_ROWS_MARK,
        Backfill("trace_activity", "trace_summary", _TRACE_ACTIVITY_ROWS))),
    # Rows kept before it are not used until kept again (`session_rows.rows_fingerprint`).
    Migration(209, "a kept session row's exact cost, as two floats that sort as it does", (
        AddColumn("session_rows", "cost_rest Float64 DEFAULT 0"),)),
    # The rows are kept again from the spans (`session_rows.rows_fingerprint`: the format changed with the table).
    Migration(210, "kept session rows written again as a cancelled copy and a new row", (
        DropTable(SESSION_ROWS.name), SESSION_ROWS)),
    Migration(211, "the session-row keeper's lease, held in its mark: one service of a cluster keeps the rows", (
        AddColumn("session_rows_mark", "holder String DEFAULT ''"),
        AddColumn("session_rows_mark", "held_until_ms Int64 DEFAULT 0"))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's errors changed).
    Migration(212, "whether a span failed, as its trajectory step shows it, for the session list's errors", (
        AddColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        TRACE_SUMMARY_FAILED_FEED, DropView(TRACE_SUMMARY_PRICED_FEED.name),
        Backfill("trace_summary", "spans", _FAILED_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's calls may change).
    Migration(213, "an LLM span's response id also from OpenInference's output, for calls reported twice", (
        AddColumn("spans", f"call_response_id String MATERIALIZED {_CALL_RESPONSE_ID}"),
        DropColumn("spans", "response_id"))),
    Migration(214, "a Haystack tool's failure OpenInference records only in the next LLM call's input", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _HAYSTACK_FAILED_BACKFILL))),
    Migration(215, "a LangSmith tool run's failed ToolMessage, recorded in its gen_ai.completion", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _LANGSMITH_FAILED_BACKFILL))),
    Migration(216, "an AutoGen AgentChat tool's failure OpenInference records only in the next LLM call's input", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _AUTOGEN_FAILED_BACKFILL))),
    Migration(217, "a LlamaIndex agent's failed tool, recorded in its call_tool step's ToolCallResult (OpenLLMetry)", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _LLAMAINDEX_FAILED_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`): the keeper then cancels the rows
    # of the sessions no longer indexed (a key listing nothing). A sessionless row of a named trace that goes too was
    # harmless (a named row wins), and is one the view no longer writes.
    Migration(218, "OpenLIT's pydantic-ai graph-node traces no sessions of their own (no agent's work in them)", (
        DropView(SESSIONLESS_TRACES_FEED.name), SESSIONLESS_AGENT_WORK_FEED,
        DeleteRows("session_traces", f"session_id = '' AND {_no_longer_indexed('trace_id')}"),
        DeleteRows("trace_sessions", f"session_id = '' AND {_no_longer_indexed('trace_id')}"),
        # A sessionless row's key in list order is its trace id.
        DeleteRows("session_order", _no_longer_indexed("session_key")))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's calls and tokens change).
    Migration(219, "OpenLIT's ag2 spans (an agent's reply, a message passed) no LLM calls", (
        UpdateRows("spans", "is_llm_call = false", f"{_OPENLIT_AG2} AND is_llm_call"),
        DeleteRows("trace_summary", _OPENLIT_AG2_TRACES),
        Backfill("trace_summary", "spans", _OPENLIT_AG2_SUMMARY))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's errors change). `failed`
    # given again also has 216's rule in the form only its scope's spans pay for (the same values).
    Migration(220, "a google-genai function's failure OpenInference records only in the next LLM call's input", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _GOOGLE_GENAI_FAILED_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's errors change).
    Migration(221, "an ADK tool failure ReflectAndRetryToolPlugin answered, which only the tool's result records", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _ADK_FAILED_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's reasoning tokens change).
    Migration(222, "reasoning tokens also from the keys the trajectory reads after the others (AI SDK, pydantic-ai)", (
        UpdateRows("spans", f"reasoning_tokens = {_REASONING_NOW}", _REASONING_CHANGED),)),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's errors change).
    Migration(223, "a CrewAI tool's ToolFailure (an MCP isError result), which only the tool span's output records", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _CREWAI_FAILED_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`), as for 218.
    Migration(224, "an MCP server's trace of tool calls its client sent no trace context for no session of its own", (
        DropView(SESSIONLESS_TRACES_FEED.name), SESSIONLESS_CLIENT_WORK_FEED,
        DeleteRows("session_traces", f"session_id = '' AND {_no_longer_indexed_224('trace_id')}"),
        DeleteRows("trace_sessions", f"session_id = '' AND {_no_longer_indexed_224('trace_id')}"),
        # A sessionless row's key in list order is its trace id.
        DeleteRows("session_order", _no_longer_indexed_224("session_key")))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's cost changes).
    Migration(225, "audio tokens and the provider's web searches, priced at their own rates in the session list", (
        *(AddColumn("spans", column) for column in AUDIO_AND_SEARCH_COLUMNS),
        # The spans stored before computed and written in the background (the same definition given again).
        *(RedefineColumn("spans", column) for column in AUDIO_AND_SEARCH_COLUMNS),
        TRACE_SUMMARY_SEARCHED_FEED, DropView(TRACE_SUMMARY_FAILED_FEED.name),
        Backfill("trace_summary", "spans", _SEARCHES_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's errors change).
    Migration(226, "an ADK tool failure ReflectAndRetryToolPlugin answered, under OpenInference's instrumentation", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        Backfill("trace_summary", "spans", _ADK_OPENINFERENCE_FAILED_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's cost changes).
    Migration(227, "the web searches pydantic-ai records, priced in the session list as in the trajectory", (
        RedefineColumn("spans", _WEB_SEARCH_REQUESTS_227),
        Backfill("trace_summary", "spans", _PYDANTIC_AI_SEARCHES_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's cost changes).
    Migration(228, "the web searches OpenAI bills in an openai-agents answer, priced in the session list", (
        RedefineColumn("spans", _WEB_SEARCH_REQUESTS_228),
        Backfill("trace_summary", "spans", _OPENAI_AGENTS_SEARCHES_BACKFILL))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: a row's tokens and cost change).
    Migration(229, "Bedrock's (OpenLLMetry) and Anthropic's (OpenLIT) cache tokens and Langfuse's reasoning tokens "
                   "in spans stored before", (
        UpdateRows("spans", f"input_tokens = if({_CACHE_LEFT_OUT_CACHED}, {_CACHE_LEFT_OUT_INPUT_NOW}, input_tokens)",
                   _CACHE_LEFT_OUT),
        UpdateRows("spans", f"output_tokens = if({_LANGFUSE_REASONED}, {_LANGFUSE_OUTPUT_NOW}, output_tokens)",
                   _LANGFUSE_KEY),
        DeleteRows("trace_summary", _TOKENS_RECOUNTED_TRACES),
        Backfill("trace_summary", "spans", _TOKENS_RECOUNTED_SUMMARY))),
    # Rows kept before it are not used until kept again (`session_rows._ROW_FORMAT`: sessions listed, a row's calls,
    # tokens, cost and errors change).
    Migration(230, "Genkit's sessions and model calls, Gemini CLI's model calls and failed tools, in the list", (
        RedefineColumn("spans", f"failed Bool MATERIALIZED {_FAILED}"),
        UpdateRows("spans", f"session_id = if(session_id = '', {_stored(genkit.SESSION_ID)}, session_id)",
                   _GENKIT_SESSION_KEY),
        Backfill("session_traces", "spans", _GENKIT_SESSIONS_INDEXED),
        UpdateRows("spans", _GENKIT_CALLS_SET, _GENKIT),
        Backfill("session_traces", "spans", _GENKIT_SESSIONLESS_INDEXED),
        UpdateRows("spans", "is_llm_call = true", _GEMINI_CLI_CALLS),
        DeleteRows("trace_summary", _COUNTED_230_TRACES),
        Backfill("trace_summary", "spans", _COUNTED_230_SUMMARY),
        Backfill("trace_summary", "spans", _GEMINI_CLI_FAILED_BACKFILL))),
]
