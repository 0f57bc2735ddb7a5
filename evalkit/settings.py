"""Service settings: flags win over environment variables, which win over defaults."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError


class Settings(BaseModel):
    data_dir: Path = Path(".evalkit")
    host: str = "127.0.0.1"
    # 0: a free port, chosen when the service starts.
    grpc_port: int = Field(default=4317, ge=0, le=65535)
    otlp_http_port: int = Field(default=4318, ge=0, le=65535)
    api_port: int = Field(default=8000, ge=0, le=65535)
    # `chdb://PATH` runs the ClickHouse engine in-process; `http(s)://user:pass@host:port/db` a server.
    clickhouse_url: str | None = None
    clickhouse_cluster: str | None = None
    bootstrap_token: str | None = None
    # OTLP limits.
    max_request_bytes: int = 64 * 1024 * 1024
    max_attribute_bytes: int = 16 * 1024 * 1024
    # The largest API request body (a dataset push, a blob): past it, 413 before it is read.
    max_api_body_bytes: int = 32 * 1024 * 1024
    # Internal addresses (loopback, private, link-local, metadata) the server may call on a workspace
    # writer's behalf (HTTP evaluators, judges, harnesses): host names and CIDRs, comma-separated.
    outbound_allow: str = ""
    # Values at least this long are kept in the compressed payload column.
    payload_threshold_bytes: int = 1024
    # Group commit: one insert per this many rows or this many milliseconds, whichever comes first.
    batch_max_rows: int = 20_000
    batch_max_delay_ms: int = 50
    # ... and at most this many bytes of requests per insert (the engine holds about 20-25x that
    # while it inserts span exports, docs/performance.md); a larger request is inserted alone.
    batch_max_bytes: int = 16 * 1024 * 1024
    # Inserts in flight at once per table, each on a connection of its own: one insert runs on
    # one core, so a second lets ClickHouse use the next while the first is busy.
    insert_concurrency: int = 2
    # Store connections for reads (the API's, the UI's, scoring's), each running one statement at a time:
    # a long read (a scorecard of 100,000 runs, a page sorted by cost) holds one, and the others go on.
    read_connections: int = Field(default=4, ge=1, le=64)
    # Rows waiting to be written before new requests get a retryable "overloaded" answer.
    queue_max_rows: int = 400_000
    # Span exports are acknowledged once staged and flattened into spans behind (ingest/flattener.py):
    # at most this many spans and bytes of staged requests per flattening insert, and at most this
    # many spans staged and not yet flattened (past it acknowledgements wait for the flattener).
    flatten_max_rows: int = 50_000
    flatten_max_bytes: int = 48 * 1024 * 1024
    staged_max_rows: int = 200_000
    # How long the flattener may wait for a fuller batch (fewer, larger inserts at low rates); a
    # read waiting for staged spans ends the wait at once.
    flatten_delay_ms: int = 0
    # Flattening inserts run at once. One insert already works on every core (it reads staging and
    # writes `spans` on two threads): on two cores a second one at once cost 5-50% more CPU a span,
    # pair by pair, in smaller batches (docs/performance.md). More may pay on a ClickHouse server
    # with cores to spare.
    flatten_workers: int = Field(default=1, ge=1, le=16)
    retry_after_seconds: int = 2
    # Bytes of export requests in flight (read, decoding, queued, being inserted) past which new
    # ones get a retryable 429 / RESOURCE_EXHAUSTED before they are decoded (one request alone
    # is always admitted). Peak memory is a small multiple of it (docs/performance.md).
    memory_limit_bytes: int = 128 * 1024 * 1024
    # The embedded engine's memory (evalkit/engine_memory.py; None: sized from the machine's RAM or
    # cgroup limit). Everything ClickHouse tracks (inserts, merges, reads, caches) stays under
    # engine_memory_bytes; one insert under insert_memory_bytes (past it the insert is refused as
    # "overloaded, retry"); the mark and primary-index caches share engine_cache_bytes, and the cache of
    # decompressed blocks for short reads has as much again.
    engine_memory_bytes: int | None = Field(default=None, gt=0)
    insert_memory_bytes: int | None = Field(default=None, gt=0)
    engine_cache_bytes: int | None = Field(default=None, gt=0)
    # Page out the library code that starting touched, once the engine is open and once ready
    # (evalkit/process_memory.py).
    release_code_pages: bool = True
    # fsync every part written to spans, session_traces and logs before an export is acknowledged:
    # acknowledged spans then survive a power loss, not only a crash of the process.
    fsync: bool = False
    # Processes that check span exports and decode log records; 0 does it in the server process
    # (spans cost ~5 us each there since ClickHouse reads them), -1 uses one per core.
    ingest_workers: int = 0
    # Settling: a session is complete after this long without a new span.
    settle_quiet_seconds: float = 5.0
    session_span_limit: int = 50_000
    # The session list's rows are kept for sessions quiet this long, every interval (trajectory/session_rows.py);
    # an interval of 0 keeps none (pages then read every session from its spans).
    session_rows_interval_seconds: float = 2.0
    session_rows_slack_seconds: float = 5.0
    # Longest `?wait=` a trajectory request may long-poll.
    max_trajectory_wait_seconds: float = 300.0
    # User prices (rules over genai-prices); default `<data-dir>/prices.yaml` when that file exists.
    prices_file: Path | None = None
    public_url: str | None = None
    # The host clients should use for the OTLP ports when it differs from --host (behind NAT, in Docker).
    public_host: str | None = None
    extra: dict[str, str] = Field(default_factory=dict)

    @property
    def store_url(self) -> str:
        if self.clickhouse_url:
            return self.clickhouse_url
        return f"chdb://{(self.data_dir / 'clickhouse').resolve()}"

    @property
    def price_file_path(self) -> Path | None:
        """The price file to load, if any: the setting, else `<data-dir>/prices.yaml` when present."""
        if self.prices_file is not None:
            return self.prices_file
        default = self.data_dir / "prices.yaml"
        return default if default.is_file() else None

    @property
    def api_url(self) -> str:
        return self.public_url or f"http://{self.host}:{self.api_port}"


_ENV = {
    "data_dir": "EVALKIT_DATA_DIR",
    "host": "EVALKIT_HOST",
    "grpc_port": "EVALKIT_GRPC_PORT",
    "otlp_http_port": "EVALKIT_OTLP_HTTP_PORT",
    "api_port": "EVALKIT_API_PORT",
    "clickhouse_url": "EVALKIT_CLICKHOUSE_URL",
    "clickhouse_cluster": "EVALKIT_CLICKHOUSE_CLUSTER",
    "bootstrap_token": "EVALKIT_BOOTSTRAP_TOKEN",
    "max_request_bytes": "EVALKIT_MAX_REQUEST_BYTES",
    "max_attribute_bytes": "EVALKIT_MAX_ATTRIBUTE_BYTES",
    "max_api_body_bytes": "EVALKIT_MAX_API_BODY_BYTES",
    "outbound_allow": "EVALKIT_OUTBOUND_ALLOW",
    "batch_max_rows": "EVALKIT_BATCH_MAX_ROWS",
    "batch_max_delay_ms": "EVALKIT_BATCH_MAX_DELAY_MS",
    "batch_max_bytes": "EVALKIT_BATCH_MAX_BYTES",
    "queue_max_rows": "EVALKIT_QUEUE_MAX_ROWS",
    "flatten_max_rows": "EVALKIT_FLATTEN_MAX_ROWS",
    "flatten_max_bytes": "EVALKIT_FLATTEN_MAX_BYTES",
    "staged_max_rows": "EVALKIT_STAGED_MAX_ROWS",
    "flatten_delay_ms": "EVALKIT_FLATTEN_DELAY_MS",
    "flatten_workers": "EVALKIT_FLATTEN_WORKERS",
    "memory_limit_bytes": "EVALKIT_MEMORY_LIMIT_BYTES",
    "fsync": "EVALKIT_FSYNC",
    "engine_memory_bytes": "EVALKIT_ENGINE_MEMORY_BYTES",
    "insert_memory_bytes": "EVALKIT_INSERT_MEMORY_BYTES",
    "engine_cache_bytes": "EVALKIT_ENGINE_CACHE_BYTES",
    "release_code_pages": "EVALKIT_RELEASE_CODE_PAGES",
    "insert_concurrency": "EVALKIT_INSERT_CONCURRENCY",
    "read_connections": "EVALKIT_READ_CONNECTIONS",
    "ingest_workers": "EVALKIT_INGEST_WORKERS",
    "settle_quiet_seconds": "EVALKIT_SETTLE_QUIET_SECONDS",
    "session_span_limit": "EVALKIT_SESSION_SPAN_LIMIT",
    "session_rows_interval_seconds": "EVALKIT_SESSION_ROWS_INTERVAL_SECONDS",
    "session_rows_slack_seconds": "EVALKIT_SESSION_ROWS_SLACK_SECONDS",
    "max_trajectory_wait_seconds": "EVALKIT_MAX_TRAJECTORY_WAIT_SECONDS",
    "prices_file": "EVALKIT_PRICES_FILE",
    "public_url": "EVALKIT_PUBLIC_URL",
    "public_host": "EVALKIT_PUBLIC_HOST",
}


def load_settings(flags: Mapping[str, object] | None = None, env: Mapping[str, str] | None = None) -> Settings:
    """Settings from flags (None means "not given") over environment over defaults."""
    env = os.environ if env is None else env
    values: dict[str, object] = {}
    given_by: dict[str, str] = {}  # field -> the variable or flag it came from, for the error message
    for field, var in _ENV.items():
        if env.get(var):
            values[field] = env[var]
            given_by[field] = var
    for field, value in (flags or {}).items():
        if value is not None:
            values[field] = value
            given_by[field] = "--" + field.replace("_", "-")
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise SettingsError(_problems(exc, values, given_by)) from None


class SettingsError(ValueError):
    """A setting given a value it cannot take; the message names the variable (or flag) and the value."""


def _problems(exc: ValidationError, values: Mapping[str, object], given_by: Mapping[str, str]) -> str:
    problems = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else ""
        source = given_by.get(field, field)
        problems.append(f"{source}={values.get(field)!r}: {error['msg'][0].lower()}{error['msg'][1:]}")
    return "; ".join(problems) + "; change or unset it and start again"
