"""The trajectory part's own tables (migrations 200-299).

`mapping_overrides` keeps every version of an agent's mapping overrides: a new
version is a new row, never an update, so a trajectory's `mapping_version` can
always be looked up. `sessionless_traces_feed` indexes traces that carry no session id.
"""

from __future__ import annotations

from evalkit.migrations import MaterializedView, Migration, Table

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
SESSIONLESS_TRACES_FEED = MaterializedView(
    name="sessionless_traces_feed",
    source="spans",
    target="session_traces",
    select="SELECT agent_id, '' AS session_id, trace_id, min(start_time) AS first_start, max(end_time) AS last_end, "
           "max(received_at) AS last_received FROM {source} "
           "WHERE session_id = '' AND (is_llm_call OR operation NOT IN ('', 'create_agent')) "
           "GROUP BY agent_id, trace_id",
)

MIGRATIONS: list[Migration] = [
    Migration(200, "per-agent mapping overrides, versioned", (MAPPING_OVERRIDES,)),
    Migration(201, "traces without a session id in the session index", (SESSIONLESS_TRACES_FEED,)),
]
