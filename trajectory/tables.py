"""The trajectory part's own tables (migrations 200-299).

`mapping_overrides` keeps every version of an agent's mapping overrides: a new
version is a new row, never an update, so a trajectory's `mapping_version` can
always be looked up.
"""

from __future__ import annotations

from evalkit.migrations import Migration, Table

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

MIGRATIONS: list[Migration] = [
    Migration(200, "per-agent mapping overrides, versioned", (MAPPING_OVERRIDES,)),
]
