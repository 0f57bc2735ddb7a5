"""The ingest part's own tables (migrations 10-99).

Span exports are acknowledged once staged: the writer inserts each request, read by
ClickHouse from the exporter's protobuf bytes, as one row of `span_staging` (a plain
MergeTree, no view on it, so the insert is cheap). The flattener (ingest/flattener.py)
then turns staged rows into rows of `spans` in large batches with the SELECT of
`ingest/flatten.py` (`INSERT INTO spans SELECT ... FROM span_staging WHERE seq ...`),
records the range it is flattening in `span_flatten_state` first (so a crash repeats
that very range, deduplicated by its token) and drops staging partitions once
flattened. A staged request the engine refuses to flatten, alone, is moved to
`span_staging_refused` (counted on /metrics) instead of blocking the rest.

`span_exports` (a Null table) with its view `span_exports_to_spans` is the former path
(flatten inside the acknowledged insert); it stays for what inserts there, and as the
bare insert `bench/ingest.py` compares one exporter's latency with. A view is created
once: changing `ingest/flatten.py` needs a new migration that drops and recreates
`span_exports_to_spans` (the flattener's own statement follows the code at once).
"""

from __future__ import annotations

from evalkit.ingest.export_schema import COLUMNS, STAGING_COLUMNS
from evalkit.ingest.flatten import span_rows
from evalkit.migrations import (
    SMALL_COMPRESS_BLOCKS,
    LocalTable,
    MaterializedView,
    Migration,
    StagingTable,
    TableSettings,
)

# Requests per staging partition: a partition is dropped once all its requests are flattened.
STAGING_PARTITION_REQUESTS = 1024
_STAGED = ", ".join(f"{name} {type_name}" for name, type_name in STAGING_COLUMNS)

SPAN_EXPORTS = StagingTable(
    name="span_exports",
    columns=", ".join(f"{name} {type_name}" for name, type_name in COLUMNS),
)

SPAN_EXPORTS_TO_SPANS = MaterializedView(
    name="span_exports_to_spans",
    source="span_exports",
    target="spans",
    select=span_rows(),
    from_staging=True,
)

SPAN_STAGING = LocalTable(
    name="span_staging",
    columns=_STAGED,
    engine="MergeTree",
    order_by="seq",
    partition_by=f"intDiv(seq, {STAGING_PARTITION_REQUESTS})",
    # Staged rows live a second or two and are dropped by partition: merging them would be wasted
    # work (a merge may take at most 1 byte: none runs), and dropped parts leave the disk soon.
    settings="max_bytes_to_merge_at_max_space_in_pool = 1, old_parts_lifetime = 30, index_granularity = 4",
)

SPAN_STAGING_REFUSED = LocalTable(
    name="span_staging_refused",
    columns=f"{_STAGED}, refused_at DateTime64(3, 'UTC'), reason String",
    engine="MergeTree",
    order_by="seq",
    # A request set aside again after a crash (same token) is not kept twice.
    settings="non_replicated_deduplication_window = 1000",
)

# The ranges of staged requests being flattened (several workers at once), written before a
# batch's insert: the latest row (FINAL, versioned by the highest sequence number handed out)
# lists every range that may be unfinished; every other range up to `version` is flattened.
SPAN_FLATTEN_STATE = LocalTable(
    name="span_flatten_state",
    columns="slot UInt8, version UInt64, ranges Array(Tuple(UInt64, UInt64)), at DateTime64(3, 'UTC')",
    engine="ReplacingMergeTree(version)",
    order_by="slot",
)

MIGRATIONS: list[Migration] = [
    Migration(10, "span exports read by ClickHouse from OTLP protobuf", (SPAN_EXPORTS, SPAN_EXPORTS_TO_SPANS)),
    Migration(11, "span exports acknowledged once staged, flattened behind",
              (SPAN_STAGING, SPAN_STAGING_REFUSED, SPAN_FLATTEN_STATE)),
    # A staging insert over 10 MiB (one 10,000-span request, say) writes a wide part: one insert of
    # 10,240 spans took 244 MB of engine memory with 1 MiB blocks, 59 MB with these. Inserts of the
    # usual 512-span requests write compact parts, which this does not change.
    Migration(12, "staged exports written in smaller compressed blocks",
              (TableSettings("span_staging", SMALL_COMPRESS_BLOCKS, replicated=False),)),
]
