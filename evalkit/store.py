"""The ClickHouse store: one clickhouse-connect client for either kind of URL.

`chdb://PATH` opens the real ClickHouse engine in this process (one process may
own a path); `http(s)://user:pass@host:port/db` talks to a server. Every other
module receives a `Store` and never opens its own connection.
"""

from __future__ import annotations

import queue
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import clickhouse_connect
from clickhouse_connect.driver.client import Client
from clickhouse_connect.driver.exceptions import OperationalError

_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# What clickhouse-connect escapes in a bound string (its binding.must_escape).
_ESCAPED = re.compile(r"[\\'`\t\n]")
_ESCAPES = str.maketrans({c: "\\" + c for c in ("\\", "'", "`", "\t", "\n")})
# Lists of strings at least this long are bound by `_StringArray`.
_LONG_LIST = 32


class _StringArray:
    """A list of strings bound as a server-side parameter, as clickhouse-connect would bind it but formatted in a
    few C calls: it escapes a string a character at a time in Python, 33 ms for 5,000 trace ids of a session list
    or trajectory read, against 1 ms here. (clickhouse-connect formats a value of a type it does not know with
    `str`.)"""

    def __init__(self, values: list[str]) -> None:
        self._values = values

    def __str__(self) -> str:
        if not _ESCAPED.search("".join(self._values)):
            return "['" + "', '".join(self._values) + "']"
        return "[" + ", ".join(["'" + value.translate(_ESCAPES) + "'" for value in self._values]) + "]"


def _bound(sql: str, parameters: dict[str, Any] | None) -> dict[str, Any] | None:
    """The parameters, long lists of strings of a server-side placeholder (`{name:Array(String)}`) made
    `_StringArray`s."""
    if not parameters:
        return parameters
    return {name: _StringArray(value) if isinstance(value, list) and len(value) >= _LONG_LIST
            and all(type(v) is str for v in value) and "{" + name + ":" in sql else value
            for name, value in parameters.items()}


class StoreUnavailable(Exception):
    """The store could not be reached or refused the operation; the caller may retry later."""


class StoreLocked(Exception):
    """Another process owns the chDB data directory."""


def compact_sql(sql: str) -> str:
    """`sql` without its `--` comments and runs of whitespace, for a long query sent often.

    clickhouse-connect tokenizes a query's text in Python several times a call (about 1 ms per 4 kB
    each time): a commented query can cost more there than in the engine. Only for text whose string
    literals hold neither `--` nor runs of whitespace."""
    return re.sub(r"\s+", " ", re.sub(r"--[^\n]*", "", sql)).strip()


def parse_store_url(url: str) -> tuple[str, dict[str, Any], str]:
    """Split a store URL into (kind, client kwargs, database)."""
    parsed = urlparse(url)
    query = {k: v[-1] for k, v in parse_qs(parsed.query).items()}
    if parsed.scheme == "chdb":
        path = unquote(parsed.netloc + parsed.path) or ":memory:"
        return "chdb", {"path": path}, query.get("database", "evalkit")
    if parsed.scheme in ("http", "https"):
        database = parsed.path.strip("/") or query.get("database", "evalkit")
        kwargs: dict[str, Any] = {
            "host": parsed.hostname or "localhost",
            "port": parsed.port or (8443 if parsed.scheme == "https" else 8123),
            "username": unquote(parsed.username) if parsed.username else "default",
            "password": unquote(parsed.password) if parsed.password else "",
            "secure": parsed.scheme == "https",
            "connect_timeout": float(query.get("connect_timeout", 5)),
            # Above the server's own insert wait, so a slow insert is never retried while it lands.
            "send_receive_timeout": float(query.get("send_receive_timeout", 60)),
            "autogenerate_session_id": False,
        }
        return "http", kwargs, database
    raise ValueError(
        f"EVALKIT_CLICKHOUSE_URL {url!r} is not a store URL; use chdb://PATH for the embedded engine "
        "or http(s)://user:pass@host:port/db for a ClickHouse server"
    )


# Settings of a short read of a small table that is repeated, as the session list's lookups in the index
# tables are: its decompressed blocks are kept in the engine's cache of them (`uncompressed_cache_size`,
# evalkit/engine_memory.py), so looking up random trace ids, which reads every granule of such a table,
# decompresses nothing the next time. A read of more rows than `merge_tree_max_rows_to_use_cache` neither
# uses nor fills it. Not for reads of `spans`: a page's spans are read once, and putting their blocks in the
# cache cost a first read more than it saved a second. (A ClickHouse server's administrator sizes that
# cache; at 0 this does nothing.)
SHORT_READ: dict[str, Any] = {"use_uncompressed_cache": 1}

# What `Store.query` streams: the embedded engine never ends the stream of a DESCRIBE or SHOW.
_SELECT = re.compile(r"\s*(SELECT|WITH)\b", re.IGNORECASE)
# The tables one flattening insert fills: `spans` and the session indexes and summary its views feed.
_FLATTENED = re.compile(r"\b(spans|session_traces|session_order|trace_sessions|trace_summary|trace_activity)\b")


class ConnectionPool:
    """Up to `size` connections, opened when first needed, each lent to one statement at a time; a
    statement finding them all lent waits for one."""

    def __init__(self, open_connection: Callable[[], Client], size: int) -> None:
        self.size = max(1, size)
        self._open = open_connection
        self._idle: queue.SimpleQueue[Client] = queue.SimpleQueue()
        self._made = 0
        self._lock = threading.Lock()
        # Which opening of the pool each lent connection belongs to: one given back after `close` is closed
        # too (the embedded engine stops, freeing its directory, only once its last connection closes).
        self._opening = 0
        self._lent: dict[int, int] = {}
        # Statements that found every connection lent and waited for one (past `size`, they queue).
        self.waits = 0

    @property
    def lent(self) -> int:
        return len(self._lent)

    def add(self, client: Client) -> None:
        """An open connection joins the pool (counted against its size)."""
        with self._lock:
            self._made += 1
        self._idle.put(client)

    def borrow(self) -> Client:
        client = self._borrow()
        with self._lock:
            self._lent[id(client)] = self._opening
        return client

    def _borrow(self) -> Client:
        try:
            return self._idle.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            make = self._made < self.size
            if make:
                self._made += 1
        if not make:
            try:
                return self._idle.get_nowait()  # given back meanwhile
            except queue.Empty:
                pass
            with self._lock:
                self.waits += 1
            return self._idle.get()
        try:
            return self._open()
        except BaseException:
            with self._lock:
                self._made -= 1
            raise

    def give_back(self, client: Client) -> None:
        with self._lock:
            current = self._lent.pop(id(client), self._opening) == self._opening
        if current:
            self._idle.put(client)
        else:
            client.close()

    def close(self) -> None:
        """Close the idle connections now, and those lent out as they are given back."""
        with self._lock:
            self._opening += 1
            self._made = 0
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                break


class Store:
    """A thread-safe handle on one ClickHouse database."""

    def __init__(self, url: str, *, database: str | None = None, cluster: str | None = None,
                 insert_connections: int = 2, read_connections: int = 4,
                 engine_options: dict[str, str] | None = None,
                 insert_settings: dict[str, Any] | None = None) -> None:
        self.url = url
        self.kind, self._client_kwargs, url_database = parse_store_url(url)
        self.database = database or url_database
        if not _IDENT.match(self.database):
            raise ValueError(f"database name {self.database!r} must be a plain identifier")
        self.cluster = cluster
        # Server settings of the embedded engine (caches, memory cap); they apply when this store
        # is the first to open the engine in the process, as `evalkit serve`'s is.
        self.engine_options = dict(engine_options or {})
        # Session settings of the insert connections (a memory cap per insert, EngineMemory).
        self.insert_settings = dict(insert_settings or {})
        self._client: Client | None = None  # the first connection, opened by `connect`; the first reader
        self._connect_lock = threading.Lock()
        # Every statement runs on a connection lent to it alone: a driver connection runs one statement at a
        # time (the embedded engine's holds a lock for the whole of a streamed read), so statements sharing
        # one would queue behind each other, a page of the UI behind a scorecard. Reads (and other
        # statements) get `read_connections`; inserts connections of their own, so that a burst of exports
        # never leaves a read waiting for a connection.
        self._readers = ConnectionPool(self._open, read_connections)
        self._inserters = ConnectionPool(lambda: self._open(settings=self.insert_settings), insert_connections)
        # Read your writes: span exports are acknowledged once staged and flattened into spans a
        # moment later (ingest/flattener.py); with a barrier set, a read (query, query_dicts) of
        # the tables the flattening fills first waits for what was acknowledged before it. Reads
        # of other tables (keys, experiments, runs), statements and inserts never wait, nor reads
        # inside `unfenced()`.
        self.read_barrier: Callable[[], object] | None = None
        self._unfenced = threading.local()

    # -- connection -----------------------------------------------------------------
    def connect(self) -> None:
        """Open the client and create the database; raises StoreUnavailable when unreachable."""
        with self._connect_lock:
            if self._client is not None:
                return
            self._client = self._open(create_database=True)
            self._readers.add(self._client)

    def _open(self, *, create_database: bool = False, settings: dict[str, Any] | None = None) -> Client:
        if self.kind == "chdb":
            # Asked first, so that the engine's own "Cannot lock file … Another server instance" line (which it
            # prints to stderr before raising) does not come before this message.
            holder = _other_process_locking(self._client_kwargs["path"])
            if holder is not None:
                raise StoreLocked(f"the chDB data directory {self._client_kwargs['path']} is in use by another "
                                  f"process (pid {holder}); stop that `evalkit serve` or pass another --data-dir")
        try:
            if self.kind == "chdb":
                client = clickhouse_connect.get_client(dsn=f"chdb://{self._client_kwargs['path']}",
                                                       chdb_options=self.engine_options or None,
                                                       settings=settings or None)
            else:
                client = clickhouse_connect.get_client(**self._client_kwargs, settings=settings or None)
            if create_database:
                on_cluster = f" ON CLUSTER {self.cluster}" if self.cluster else ""
                client.command(f"CREATE DATABASE IF NOT EXISTS {self.database}{on_cluster}")
            client.database = self.database
        except Exception as exc:  # the driver raises many kinds; all mean "not now"
            message = str(exc)
            if self.kind == "chdb":
                path = self._client_kwargs["path"]
                if _held_by_another_process(path):
                    raise StoreLocked(
                        f"the chDB data directory {path} is in use by another process; stop that "
                        "`evalkit serve` or pass another --data-dir") from exc
                raise StoreLocked(f"cannot open the embedded ClickHouse engine at {path}: {message}") from exc
            raise StoreUnavailable(f"ClickHouse at {self.redacted_url} is unreachable: {message}") from exc
        return client

    @property
    def connected(self) -> bool:
        return self._client is not None

    @property
    def redacted_url(self) -> str:
        return re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", self.url)

    def _require(self) -> Client:
        if self._client is None:
            self.connect()
        assert self._client is not None
        return self._client

    def close(self) -> None:
        with self._connect_lock:
            self._inserters.close()
            self._readers.close()
            self._client = None

    @property
    def max_inserters(self) -> int:
        return self._inserters.size

    def connection_use(self) -> dict[str, tuple[int, int]]:
        """Per pool ("read", "insert"): connections lent right now, and statements that have waited for one."""
        return {"read": (self._readers.lent, self._readers.waits),
                "insert": (self._inserters.lent, self._inserters.waits)}

    @contextmanager
    def _inserter(self) -> Iterator[Client]:
        """An insert connection for one statement; ClickHouse's refusals come out classified."""
        self._require()  # the database exists before any insert connection opens
        with self._lent(self._inserters) as client:
            yield client

    @contextmanager
    def _reader(self) -> Iterator[Client]:
        """A connection for one read (or other statement), held until its rows are all read."""
        self._require()
        with self._lent(self._readers) as client:
            yield client

    @contextmanager
    def _lent(self, pool: ConnectionPool) -> Iterator[Client]:
        client = pool.borrow()
        try:
            yield client
        except StoreUnavailable:
            raise
        except Exception as exc:
            raise _classify(exc, self) from exc
        finally:
            pool.give_back(client)

    @contextmanager
    def unfenced(self) -> Iterator[None]:
        """Reads on this thread inside the block do not wait at the read barrier."""
        self._unfenced.active = True
        try:
            yield
        finally:
            self._unfenced.active = False

    def _fence(self, sql: str) -> None:
        barrier = self.read_barrier
        if barrier is not None and not getattr(self._unfenced, "active", False) and _FLATTENED.search(sql):
            barrier()

    # -- operations -----------------------------------------------------------------
    def command(self, sql: str, parameters: dict[str, Any] | None = None,
                settings: dict[str, Any] | None = None) -> Any:
        with self._reader() as client:
            return client.command(sql, parameters=_bound(sql, parameters), settings=settings)

    def query(self, sql: str, parameters: dict[str, Any] | None = None,
              settings: dict[str, Any] | None = None) -> list[tuple[Any, ...]]:
        self._fence(sql)
        # Streamed, block by block: a whole result copied out of the embedded engine at once is one
        # fresh buffer of its size (94 MB for a session of re-sent histories), and faulting its pages
        # in cost more than the query (a --history 100 session's trajectory read, in process, 20
        # alternating: median 194 -> 156 ms, slowest 1,224 -> 383 ms). Only a SELECT (`_SELECT`).
        with self._reader() as client:
            if not _SELECT.match(sql):
                return [tuple(row) for row in client.query(sql, parameters=_bound(sql, parameters),
                                                           settings=settings).result_rows]
            with client.query_rows_stream(sql, parameters=_bound(sql, parameters), settings=settings) as stream:
                return [tuple(row) for row in stream]

    def query_columns(self, sql: str, parameters: dict[str, Any] | None = None,
                      settings: dict[str, Any] | None = None) -> list[Sequence[Any]]:
        """A SELECT's result as one sequence per column, streamed block by block like `query`: for code that
        works a column at a time, the driver makes no tuple per row (0.6 µs a row of 21 columns). No rows: []."""
        self._fence(sql)
        with self._reader() as client, client.query_column_block_stream(
                sql, parameters=_bound(sql, parameters), settings=settings) as stream:
            blocks = list(stream)
        if len(blocks) <= 1:
            return list(blocks[0]) if blocks else []
        return [list(chain.from_iterable(block[column] for block in blocks)) for column in range(len(blocks[0]))]

    def query_arrow(self, sql: str, parameters: dict[str, Any] | None = None,
                    settings: dict[str, Any] | None = None) -> Any:
        """A SELECT's result as a `pyarrow.Table`: for columns of numbers (and arrays of them) that numpy should
        take as buffers, not as Python values one by one."""
        self._fence(sql)
        with self._reader() as client:
            return client.query_arrow(sql, parameters=_bound(sql, parameters), settings=settings)

    def query_dicts(self, sql: str, parameters: dict[str, Any] | None = None,
                    settings: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        self._fence(sql)
        with self._reader() as client:
            result = client.query(sql, parameters=_bound(sql, parameters), settings=settings)
        names = result.column_names
        return [dict(zip(names, row, strict=True)) for row in result.result_rows]

    def insert(self, table: str, columns: Sequence[Sequence[Any]], column_names: Sequence[str],
               settings: dict[str, Any] | None = None) -> None:
        """Insert column-oriented data; returns only once ClickHouse acknowledged it."""
        with self._reader() as client:
            client.insert(table, list(columns), column_names=list(column_names), column_oriented=True,
                          settings=settings)

    def insert_raw(self, table: str, column_names: Sequence[str], data: bytes | Sequence[bytes], fmt: str,
                   settings: dict[str, Any] | None = None) -> None:
        """Insert data already in a ClickHouse input format (Native blocks, length-delimited
        Protobuf messages, ...), whole or in pieces to be sent one after another (not joined into
        one more copy); returns once acknowledged."""
        block = data if isinstance(data, bytes) else (piece for piece in data)
        with self._inserter() as client:
            client.raw_insert(table, list(column_names), insert_block=block, fmt=fmt, settings=settings)

    def memory_tracked(self) -> float:
        """Bytes the embedded engine accounts for right now (its MemoryTracking metric); NaN while it
        is not open or does not answer, and for a ClickHouse server (whose memory is not this
        process's, and which a metrics scrape must not wait for when it is down)."""
        if self._client is None or self.kind != "chdb":
            return float("nan")
        try:
            rows = self.query("SELECT value FROM system.metrics WHERE metric = 'MemoryTracking'")
        except (StoreUnavailable, StoreError):
            return float("nan")
        return float(rows[0][0]) if rows else float("nan")

    def execute(self, sql: str, settings: dict[str, Any] | None = None) -> None:
        """A statement (an `INSERT ... SELECT`, an `ALTER`) on an insert connection, as inserts are:
        a long one does not hold up the API's reads."""
        with self._inserter() as client:
            client.command(sql, settings=settings)

    def column_types(self, table: str, column_names: Sequence[str]) -> list[str]:
        rows = self.query(f"DESCRIBE TABLE {self.database}.{table}")
        types = {r[0]: r[1] for r in rows}
        missing = [name for name in column_names if name not in types]
        if missing:
            raise StoreError(f"table {table} has no column(s) {missing}; the schema is older than this evalkit")
        return [types[name] for name in column_names]


def _other_process_locking(path: str) -> int | None:
    """The pid of another process holding ClickHouse's lock on `status` in `path` (Linux's /proc/locks), or None:
    none does, or it cannot be told here. This process's own engine holds it too, for every client it opens."""
    import os

    try:
        status = os.stat(os.path.join(path, "status"))
        with open("/proc/locks", encoding="ascii") as locks:
            lines = locks.read().splitlines()
    except OSError:
        return None
    file_id = f"{os.major(status.st_dev):02x}:{os.minor(status.st_dev):02x}:{status.st_ino}"
    for line in lines:
        fields = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 08:01:5678 0 EOF"; a blocked waiter's line has "->" after the number.
        if "->" in fields:
            continue
        if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == file_id:
            pid = int(fields[4])
            return pid if pid != os.getpid() else None
    return None


def _held_by_another_process(path: str) -> bool:
    """ClickHouse holds an exclusive lock on `status` in its data directory while it runs."""
    import fcntl
    import os

    status = os.path.join(path, "status")
    if not os.path.exists(status):
        return False
    with open(status, "a+") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return True
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
    return False


class StoreError(Exception):
    """ClickHouse rejected a statement (a bug or a schema mismatch, not a transient failure)."""


# What waiting can fix: the store unreachable, busy, short of memory or disk, behind on merges.
# Everything else ClickHouse refuses (a malformed row, too many partitions in one block, ...)
# would fail again the same way, so it is a StoreError and its request is not retried.
_TRANSIENT_CODES = frozenset({
    159,  # TIMEOUT_EXCEEDED
    164,  # READONLY
    202,  # TOO_MANY_SIMULTANEOUS_QUERIES
    203,  # NO_FREE_CONNECTION
    209,  # SOCKET_TIMEOUT
    210,  # NETWORK_ERROR
    225,  # NO_ZOOKEEPER
    236,  # ABORTED
    241,  # MEMORY_LIMIT_EXCEEDED
    242,  # TABLE_IS_READ_ONLY
    243,  # NOT_ENOUGH_SPACE
    319,  # UNKNOWN_STATUS_OF_INSERT
    394,  # QUERY_WAS_CANCELLED
    999,  # KEEPER_EXCEPTION
})
_TRANSIENT = ("connection", "timed out", "timeout", "refused", "unreachable", "too many parts",
              "too many simultaneous", "memory limit", "network", "broken pipe", "reset by peer",
              "no space left", "not enough space", "cannot reserve", "read-only", "readonly",
              "cannot allocate", "disk quota")
_PERMANENT = ("too many partitions",)
_CODE = re.compile(r"Code: (\d+)\.")


def is_transient(message: str, exc: BaseException | None = None) -> bool:
    """Whether a ClickHouse failure is about the store's availability (worth retrying later)."""
    if isinstance(exc, OperationalError):  # the driver could not talk to the server
        return True
    lower = message.lower()
    if any(phrase in lower for phrase in _PERMANENT):
        return False
    match = _CODE.search(message)
    if match is not None and int(match.group(1)) in _TRANSIENT_CODES:
        return True
    return any(phrase in lower for phrase in _TRANSIENT)


def is_memory_error(message: str) -> bool:
    """Whether ClickHouse refused a statement for want of memory: waiting may fix it, and so may
    asking less of it at once."""
    match = _CODE.search(message)
    return (match is not None and int(match.group(1)) == 241) or "memory limit" in message.lower()


# What a row's content makes ClickHouse refuse: malformed input, a value it cannot convert,
# too many partitions in one block. The same rows would be refused again.
_DATA_CODES = frozenset({6, 25, 26, 27, 32, 33, 36, 38, 41, 43, 53, 69, 70, 72, 117, 131, 321, 395, 434, 444})


def is_data_error(message: str) -> bool:
    """Whether ClickHouse refused a statement for the data it carried (not for its own state:
    a missing table, a broken disk)."""
    if any(phrase in message.lower() for phrase in _PERMANENT):
        return True
    match = _CODE.search(message)
    return match is not None and int(match.group(1)) in _DATA_CODES


def _classify(exc: Exception, store: Store) -> Exception:
    message = str(exc)
    if is_transient(message, exc):
        return StoreUnavailable(f"ClickHouse at {store.redacted_url} failed: {message}")
    return StoreError(message)
