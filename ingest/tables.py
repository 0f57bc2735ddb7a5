"""The ingest part's own tables (migrations 10-99).

Span exports are inserted as the exporter's protobuf bytes into `span_exports`, a
Null table; the materialized view `span_exports_to_spans` flattens each request into
rows of `spans` (see `ingest/flatten.py`) inside the same insert, so an export is
acknowledged only once its spans (and, through the next view, the session index)
are written.

A view is created once: changing `ingest/flatten.py` needs a new migration that
drops and recreates `span_exports_to_spans`.
"""

from __future__ import annotations

from evalkit.ingest.export_schema import COLUMNS
from evalkit.ingest.flatten import span_rows
from evalkit.migrations import MaterializedView, Migration, StagingTable

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

MIGRATIONS: list[Migration] = [
    Migration(10, "span exports read by ClickHouse from OTLP protobuf", (SPAN_EXPORTS, SPAN_EXPORTS_TO_SPANS)),
]
