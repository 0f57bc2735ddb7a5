"""Versioned, idempotent schema migrations, applied at start and recorded in `schema_migrations`.

Each migration is a list of table definitions. On a single server (or chDB) a
table is created as written. With a cluster name, the same definition becomes a
Replicated table `<name>_local ON CLUSTER` with a Distributed table `<name>` in
front, so readers and writers use the same name in both shapes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from evalkit.store import Store, StoreError, StoreUnavailable

# Attribute sets are kept losslessly as two maps: the value's text and, for every
# value that is not a string, its OTLP type (see ingest/attributes.py).
_ATTRS = "Map(LowCardinality(String), String)"
_TYPES = "Map(LowCardinality(String), UInt8)"


@dataclass(frozen=True)
class Table:
    name: str
    columns: str
    engine: str  # e.g. "ReplacingMergeTree(version)"
    order_by: str
    partition_by: str | None = None
    settings: str | None = None
    sharding_key: str = "rand()"

    def statements(self, database: str, cluster: str | None) -> list[str]:
        tail = f"ORDER BY ({self.order_by})"
        if self.partition_by:
            tail = f"PARTITION BY {self.partition_by} " + tail
        if self.settings:
            tail += f" SETTINGS {self.settings}"
        if not cluster:
            return [f"CREATE TABLE IF NOT EXISTS {database}.{self.name} ({self.columns}) ENGINE = {self.engine} {tail}"]
        local = f"{database}.{self.name}_local"
        return [
            f"CREATE TABLE IF NOT EXISTS {local} ON CLUSTER {cluster} ({self.columns}) "
            f"ENGINE = Replicated{self.engine} {tail}",
            f"CREATE TABLE IF NOT EXISTS {database}.{self.name} ON CLUSTER {cluster} AS {local} "
            f"ENGINE = Distributed({cluster}, {database}, {self.name}_local, {self.sharding_key})",
        ]


SPANS = Table(
    name="spans",
    columns=f"""
        agent_id LowCardinality(String),
        trace_id String,
        span_id String,
        parent_span_id String,
        session_id String,
        name LowCardinality(String),
        kind UInt8,
        start_time DateTime64(9, 'UTC'),
        end_time DateTime64(9, 'UTC'),
        status_code UInt8,
        status_message String,
        service_name LowCardinality(String),
        scope_name LowCardinality(String),
        scope_version LowCardinality(String),
        operation LowCardinality(String),
        provider LowCardinality(String),
        model LowCardinality(String),
        is_llm_call Bool,
        input_tokens UInt64,
        output_tokens UInt64,
        cache_read_tokens UInt64,
        cache_write_tokens UInt64,
        reasoning_tokens UInt64,
        reported_cost_usd Nullable(Float64),
        tool_name LowCardinality(String),
        tool_call_id String,
        attributes {_ATTRS} CODEC(ZSTD(1)),
        payloads {_ATTRS} CODEC(ZSTD(3)),
        attribute_types {_TYPES},
        truncated Map(LowCardinality(String), UInt64),
        resource_attributes {_ATTRS} CODEC(ZSTD(1)),
        resource_attribute_types {_TYPES},
        event_times Array(DateTime64(9, 'UTC')),
        event_names Array(LowCardinality(String)),
        event_attributes Array({_ATTRS}) CODEC(ZSTD(3)),
        event_attribute_types Array({_TYPES}),
        link_trace_ids Array(String),
        link_span_ids Array(String),
        link_attributes Array({_ATTRS}),
        link_attribute_types Array({_TYPES}),
        received_at DateTime64(3, 'UTC')
    """,
    # Replacing on the span's identity: a retried export collapses into one row, and
    # readers deduplicate with FINAL before merges catch up.
    engine="ReplacingMergeTree(received_at)",
    # The query that matters reads every span of a few traces of one agent.
    order_by="agent_id, trace_id, span_id",
    # Start time is fixed for a span, so a replacement row always lands in the original's partition.
    partition_by="toYYYYMMDD(start_time)",
    # Granules of 1,024 rows, not 8,192: trace ids are random, so the sessions a page lists (the newest,
    # the costliest) lie a granule apart each, and every column of a whole granule is read for each
    # session's few dozen spans. (A table's granule is fixed when it is created: stores made before keep
    # 8,192; migration 6's smaller compressed blocks apply to them too.)
    settings="non_replicated_deduplication_window = 1000, index_granularity = 1024",
    sharding_key="cityHash64(agent_id, trace_id)",
)

# Session -> traces. Only min/max aggregates: a re-sent batch cannot inflate anything.
SESSION_TRACES = Table(
    name="session_traces",
    columns="""
        agent_id LowCardinality(String),
        session_id String,
        trace_id String,
        first_start SimpleAggregateFunction(min, DateTime64(9, 'UTC')),
        last_end SimpleAggregateFunction(max, DateTime64(9, 'UTC')),
        last_received SimpleAggregateFunction(max, DateTime64(3, 'UTC'))
    """,
    engine="AggregatingMergeTree",
    order_by="agent_id, session_id, trace_id",
    sharding_key="cityHash64(agent_id, session_id)",
)

@dataclass(frozen=True)
class StagingTable:
    """A Null table: rows inserted into it are handed to its materialized views and not kept.

    On a cluster it exists on every node as it is (no Distributed table in front): a
    writer inserts into the node it is connected to, and the view routes the rows."""

    name: str
    columns: str

    def statements(self, database: str, cluster: str | None) -> list[str]:
        on_cluster = f" ON CLUSTER {cluster}" if cluster else ""
        return [f"CREATE TABLE IF NOT EXISTS {database}.{self.name}{on_cluster} ({self.columns}) ENGINE = Null"]


@dataclass(frozen=True)
class LocalTable:
    """A MergeTree table of the node that writes it: no replica, no Distributed table in front.

    For what one server process owns alone (the span exports it acknowledged and has not yet
    flattened, ingest/tables.py): on a cluster every node stages and flattens its own."""

    name: str
    columns: str
    engine: str
    order_by: str
    partition_by: str | None = None
    settings: str | None = None

    def statements(self, database: str, cluster: str | None) -> list[str]:
        on_cluster = f" ON CLUSTER {cluster}" if cluster else ""
        tail = f"ORDER BY ({self.order_by})"
        if self.partition_by:
            tail = f"PARTITION BY {self.partition_by} " + tail
        if self.settings:
            tail += f" SETTINGS {self.settings}"
        return [f"CREATE TABLE IF NOT EXISTS {database}.{self.name}{on_cluster} ({self.columns}) "
                f"ENGINE = {self.engine} {tail}"]


@dataclass(frozen=True)
class MaterializedView:
    """A view run by ClickHouse inside every insert into its source table.

    On a cluster the view reads the node's local source table and writes the local target
    table; a view over a staging table (`from_staging`) writes the Distributed table
    instead, which shards the rows (they arrive on whichever node was asked)."""

    name: str
    source: str
    target: str
    select: str  # with {source} where the source table goes
    from_staging: bool = False

    def statements(self, database: str, cluster: str | None) -> list[str]:
        local = "" if self.from_staging or not cluster else "_local"
        on_cluster = f" ON CLUSTER {cluster}" if cluster else ""
        source = f"{database}.{self.source}{local}"
        return [f"CREATE MATERIALIZED VIEW IF NOT EXISTS {database}.{self.name}{on_cluster} "
                f"TO {database}.{self.target}{local} AS {self.select.format(source=source)}"]


# The session index is filled by ClickHouse in the same insert as the spans: no second
# statement per batch, and an index row can never exist without its spans.
SESSION_TRACES_FEED = MaterializedView(
    name="session_traces_feed",
    source="spans",
    target="session_traces",
    select="SELECT agent_id, session_id, trace_id, min(start_time) AS first_start, max(end_time) AS last_end, "
           "max(received_at) AS last_received FROM {source} WHERE session_id != '' "
           "GROUP BY agent_id, session_id, trace_id",
)

LOGS = Table(
    name="logs",
    columns=f"""
        agent_id LowCardinality(String),
        trace_id String,
        span_id String,
        log_id String,
        time DateTime64(9, 'UTC'),
        observed_time DateTime64(9, 'UTC'),
        severity_number UInt8,
        severity_text LowCardinality(String),
        event_name LowCardinality(String),
        body String CODEC(ZSTD(3)),
        attributes {_ATTRS} CODEC(ZSTD(1)),
        attribute_types {_TYPES},
        resource_attributes {_ATTRS} CODEC(ZSTD(1)),
        resource_attribute_types {_TYPES},
        scope_name LowCardinality(String),
        received_at DateTime64(3, 'UTC')
    """,
    engine="ReplacingMergeTree(received_at)",
    order_by="agent_id, trace_id, span_id, time, log_id",
    partition_by="toYYYYMMDD(time)",
    settings="non_replicated_deduplication_window = 1000",
    sharding_key="cityHash64(agent_id, trace_id)",
)

WORKSPACES = Table(
    name="workspaces",
    columns="""
        name String,
        kind LowCardinality(String),
        created_at DateTime64(3, 'UTC'),
        archived Bool,
        version UInt64
    """,
    engine="ReplacingMergeTree(version)",
    order_by="name",
)

AGENTS = Table(
    name="agents",
    columns="""
        agent_id String,
        name String,
        workspace String,
        kind LowCardinality(String),
        description String,
        harness_url String,
        max_concurrent_runs UInt32,
        trajectory_wait_seconds Float64,
        session_attribute String,
        archived Bool,
        created_at DateTime64(3, 'UTC'),
        version UInt64
    """,
    engine="ReplacingMergeTree(version)",
    order_by="agent_id",
)

INGEST_KEYS = Table(
    name="ingest_keys",
    columns="""
        key_hash String,
        key_id String,
        prefix String,
        agent_id String,
        created_at DateTime64(3, 'UTC'),
        revoked Bool,
        version UInt64
    """,
    engine="ReplacingMergeTree(version)",
    order_by="key_hash",
)

API_TOKENS = Table(
    name="api_tokens",
    columns="""
        token_hash String,
        token_id String,
        principal String,
        role LowCardinality(String),
        created_at DateTime64(3, 'UTC'),
        revoked Bool,
        version UInt64
    """,
    engine="ReplacingMergeTree(version)",
    order_by="token_hash",
)

MIGRATIONS_TABLE = Table(
    name="schema_migrations",
    columns="version UInt32, name String, applied_at DateTime64(3, 'UTC')",
    engine="ReplacingMergeTree(applied_at)",
    order_by="version",
)


@dataclass(frozen=True)
class AddColumn:
    """A column added to an existing table; rows written before read its DEFAULT.

    On a cluster both the local tables and the Distributed one in front get it."""

    table: str
    column: str  # name, type and DEFAULT, as in CREATE TABLE

    def statements(self, database: str, cluster: str | None) -> list[str]:
        if not cluster:
            return [f"ALTER TABLE {database}.{self.table} ADD COLUMN IF NOT EXISTS {self.column}"]
        add = f"ADD COLUMN IF NOT EXISTS {self.column}"
        return [f"ALTER TABLE {database}.{self.table}_local ON CLUSTER {cluster} {add}",
                f"ALTER TABLE {database}.{self.table} ON CLUSTER {cluster} {add}"]


@dataclass(frozen=True)
class RedefineColumn:
    """A MATERIALIZED column's expression given again. Rows written from then on are computed by the new one; the
    rows written before are computed again in the background (`MATERIALIZE COLUMN`, a mutation that rewrites that
    column's files only, reading what the expression reads), so what reads the column agrees once it is done; what
    is derived from it at insert (a view's target) is the migration's own step. On a cluster the local tables (and
    the Distributed one in front, which holds no rows)."""

    table: str
    column: str  # name, type and expression, as in CREATE TABLE

    def statements(self, database: str, cluster: str | None) -> list[str]:
        modify, name = f"MODIFY COLUMN {self.column}", self.column.split()[0]
        if not cluster:
            return [f"ALTER TABLE {database}.{self.table} {modify}",
                    f"ALTER TABLE {database}.{self.table} MATERIALIZE COLUMN {name}"]
        return [f"ALTER TABLE {database}.{self.table}_local ON CLUSTER {cluster} {modify}",
                f"ALTER TABLE {database}.{self.table} ON CLUSTER {cluster} {modify}",
                f"ALTER TABLE {database}.{self.table}_local ON CLUSTER {cluster} MATERIALIZE COLUMN {name}"]


@dataclass(frozen=True)
class DropColumn:
    """A column removed from an existing table (its files go; no other column is rewritten). On a cluster from
    the local tables and the Distributed one in front."""

    table: str
    column: str  # the name

    def statements(self, database: str, cluster: str | None) -> list[str]:
        drop = f"DROP COLUMN IF EXISTS {self.column}"
        if not cluster:
            return [f"ALTER TABLE {database}.{self.table} {drop}"]
        return [f"ALTER TABLE {database}.{self.table}_local ON CLUSTER {cluster} {drop}",
                f"ALTER TABLE {database}.{self.table} ON CLUSTER {cluster} {drop}"]


@dataclass(frozen=True)
class TableSettings:
    """MergeTree settings of an existing table changed (they apply to parts written from then on,
    by inserts and merges alike). `replicated`: a `Table`, whose rows live in `{name}_local` on a
    cluster; otherwise a `LocalTable`."""

    table: str
    settings: str  # as after MODIFY SETTING
    replicated: bool = True

    def statements(self, database: str, cluster: str | None) -> list[str]:
        if not cluster:
            return [f"ALTER TABLE {database}.{self.table} MODIFY SETTING {self.settings}"]
        name = f"{self.table}_local" if self.replicated else self.table
        return [f"ALTER TABLE {database}.{name} ON CLUSTER {cluster} MODIFY SETTING {self.settings}"]


# A wide part is written through one compression buffer per column stream, each as large as
# `max_compress_block_size` (1 MiB by default): `spans` has ~100 streams (maps, arrays, nullable and
# low-cardinality columns have several each), so every insert and merge of it held ~200 MB of buffers
# whatever its size. 128 KiB blocks: ~1/8 of that, 7% more bytes on disk (docs/performance.md).
SMALL_COMPRESS_BLOCKS = "max_compress_block_size = 131072"
# A compressed block holds at least `min_compress_block_size` bytes (64 KiB by default): a read of one
# trace's rows decompresses that much of every column it reads, 64K rows of a one-byte column. 16 KiB:
# ~40% less CPU to read 67 scattered traces at 10M spans, 4% more bytes on disk (docs/performance.md).
SMALLER_READS = "min_compress_block_size = 16384"


@dataclass(frozen=True)
class DropView:
    """A materialized view removed, to be created again with a corrected SELECT in the same
    migration (a view's SELECT cannot be altered in place)."""

    name: str

    def statements(self, database: str, cluster: str | None) -> list[str]:
        on_cluster = f" ON CLUSTER {cluster}" if cluster else ""
        return [f"DROP VIEW IF EXISTS {database}.{self.name}{on_cluster}"]


@dataclass(frozen=True)
class DropTable:
    """A table removed, to be created again in the same migration with another engine (a table's engine cannot
    be altered). Only for a table whose rows are derived and written again on their own (the session list's
    kept rows: the keeper keeps them again from the spans)."""

    name: str

    def statements(self, database: str, cluster: str | None) -> list[str]:
        if not cluster:
            return [f"DROP TABLE IF EXISTS {database}.{self.name} SYNC"]
        return [f"DROP TABLE IF EXISTS {database}.{self.name} ON CLUSTER {cluster} SYNC",
                f"DROP TABLE IF EXISTS {database}.{self.name}_local ON CLUSTER {cluster} SYNC"]


@dataclass(frozen=True)
class Backfill:
    """Rows a new table derives from an existing one, copied once when its migration runs.

    Run after the view that keeps the table fed exists, so no row falls between the two; a row
    copied twice (a migration cut short and re-run, or one inserted meanwhile) must be harmless to
    the target (min/max aggregates, replacing keys)."""

    target: str
    source: str
    select: str  # with {source} where the source table goes

    def statements(self, database: str, cluster: str | None) -> list[str]:
        # On a cluster both names are the Distributed tables: every shard is read, the rows re-sharded.
        return [f"INSERT INTO {database}.{self.target} {self.select.format(source=f'{database}.{self.source}')}"]


@dataclass(frozen=True)
class DeleteRows:
    """Rows of a derived table that a corrected view would not have written, removed (`where` may read other tables,
    `{database}` where their database goes: on a cluster the Distributed ones, every shard). Waited for
    (`mutations_sync`), so that what reads the table next, the service starting on the migrated store and its
    session-row keeper included, no longer sees them; run again, it finds nothing more. On a cluster from the local
    tables: ClickHouse refuses a replicated table's mutation whose condition holds a subquery (it cannot tell it is
    deterministic) unless `allow_nondeterministic_mutations` is set."""

    table: str
    where: str

    def statements(self, database: str, cluster: str | None) -> list[str]:
        target = f"{database}.{self.table}_local ON CLUSTER {cluster}" if cluster else f"{database}.{self.table}"
        return [f"ALTER TABLE {target} DELETE WHERE {self.where.format(database=database)} "
                "SETTINGS mutations_sync = 2, allow_nondeterministic_mutations = 1"]


@dataclass(frozen=True)
class UpdateRows:
    """Values of stored rows set as the code that writes them now would have (`ALTER … UPDATE`); the MATERIALIZED
    columns that read an updated one are computed again with it. Waited for, as `DeleteRows` is, so that a step after
    it (a backfill reading the values) sees them; `where` must leave out the rows already set, so that run again it
    changes nothing. On a cluster on the local tables."""

    table: str
    assignments: str  # as after UPDATE
    where: str

    def statements(self, database: str, cluster: str | None) -> list[str]:
        target = f"{database}.{self.table}_local ON CLUSTER {cluster}" if cluster else f"{database}.{self.table}"
        return [f"ALTER TABLE {target} UPDATE {self.assignments} WHERE {self.where} SETTINGS mutations_sync = 2"]


# When an API token was last used, one row per token and minute of use at most (a separate table:
# a new version of the token's own row could race its revocation and undo it).
TOKEN_USES = Table(
    name="api_token_uses",
    columns="""
        token_id String,
        principal String,
        last_used_at DateTime64(3, 'UTC')
    """,
    engine="ReplacingMergeTree(last_used_at)",
    order_by="token_id",
)


# What a migration does, each step rendered to statements for one server or a cluster.
Step = (Table | StagingTable | LocalTable | MaterializedView | AddColumn | RedefineColumn | DropColumn | TableSettings
        | DropView | DropTable | Backfill | DeleteRows | UpdateRows)


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    tables: tuple[Step, ...]


MIGRATIONS: list[Migration] = [
    Migration(1, "spans, session index and logs", (SPANS, SESSION_TRACES, LOGS)),
    Migration(3, "session index fed by a materialized view over spans", (SESSION_TRACES_FEED,)),
    Migration(2, "workspaces, agents, keys and tokens", (WORKSPACES, AGENTS, INGEST_KEYS, API_TOKENS)),
    # Keys made before scopes existed keep what they could do: send spans and read their workspace.
    Migration(4, "ingest key scopes, token last use", (
        AddColumn("ingest_keys", "scopes Array(LowCardinality(String)) DEFAULT ['ingest', 'read']"), TOKEN_USES)),
    Migration(5, "spans written in smaller compressed blocks (less memory per insert and merge)",
              (TableSettings("spans", SMALL_COMPRESS_BLOCKS),)),
    Migration(6, "spans read in smaller compressed blocks (a few traces read less of every column)",
              (TableSettings("spans", SMALLER_READS),)),
]


def all_migrations() -> list[Migration]:
    """The foundation's migrations plus those of ingest/ (10-99), scoring/ (100-199) and trajectory/ (200-299).

    Each part keeps its tables in its own `tables.py` exporting `MIGRATIONS`.
    """
    import importlib

    found = list(MIGRATIONS)
    for module_name in ("evalkit.ingest.tables", "evalkit.scoring.tables", "evalkit.trajectory.tables"):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name != module_name:
                raise
            continue
        found.extend(module.MIGRATIONS)
    versions = [m.version for m in found]
    if len(versions) != len(set(versions)):
        raise ValueError(f"two migrations share a version: {sorted(versions)}")
    return sorted(found, key=lambda m: m.version)


# The tables an acknowledged export writes (span exports are acknowledged once staged, and
# flattened into spans behind: ingest/flattener.py; session_order and trace_sessions are fed from
# session_traces, and trace_summary from spans, in the flattening insert, trajectory/tables.py): with
# EVALKIT_FSYNC each part of them is fsynced (files and directory) before the insert returns.
DURABLE_TABLES = ("span_staging", "span_flatten_state", "spans", "session_traces", "session_order",
                  "trace_sessions", "trace_summary", "logs")


def set_fsync(store: Store, fsync: bool) -> None:
    """Turn fsync of inserted parts on or off (idempotent, run at every start)."""
    value = 1 if fsync else 0
    for table in DURABLE_TABLES:
        local = table.startswith("span_staging") or table == "span_flatten_state"  # LocalTable: no _local suffix
        name = f"{store.database}.{table}{'' if local else '_local'} ON CLUSTER {store.cluster}" if store.cluster \
            else f"{store.database}.{table}"
        store.command(f"ALTER TABLE {name} MODIFY SETTING fsync_after_insert = {value}, "
                      f"fsync_part_directory = {value}")


def applied_versions(store: Store) -> set[int]:
    rows = store.query(f"SELECT version FROM {store.database}.schema_migrations FINAL")
    return {int(r[0]) for r in rows}


def migrate(store: Store) -> list[int]:
    """Apply every migration not yet recorded; returns the versions applied now."""
    for statement in MIGRATIONS_TABLE.statements(store.database, store.cluster):
        store.command(statement)
    done = applied_versions(store)
    applied: list[int] = []
    for migration in all_migrations():
        if migration.version in done:
            continue
        # Every statement is IF NOT EXISTS, so a migration cut short is simply re-run.
        for table in migration.tables:
            for statement in table.statements(store.database, store.cluster):
                try:
                    store.command(statement)
                except StoreUnavailable:
                    raise
                except StoreError as exc:
                    # ClickHouse quotes the whole statement; the first line says what is wrong.
                    reason = str(exc).split(". In scope")[0].splitlines()[0][:300]
                    raise StoreError(f"migration {migration.version} ({migration.name}) failed: {reason}") from exc
        store.insert(
            "schema_migrations",
            [[migration.version], [migration.name], [time.time_ns() // 1_000_000]],
            ["version", "name", "applied_at"],
        )
        applied.append(migration.version)
    return applied
