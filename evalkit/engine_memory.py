"""How much memory the ClickHouse engine may use, sized for the machine evalkit runs on.

ClickHouse's server defaults assume it owns the machine (5 GiB per cache, 90% of RAM for queries,
horizontal merges that hold a block of every column of every part they merge). The embedded
engine shares its process with evalkit, and usually its machine with the agents it measures, so
the budget starts from what this process may use: the physical RAM or the cgroup (container)
limit, whichever is smaller. Every figure can be set (Settings: `EVALKIT_ENGINE_MEMORY_BYTES`,
`EVALKIT_INSERT_MEMORY_BYTES`, `EVALKIT_ENGINE_CACHE_BYTES`); docs/performance.md has what they
measured to.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

_UNLIMITED = 1 << 60  # cgroup v1 writes 2^63 rounded down to a page for "no limit"


def machine_memory_bytes(cgroup_root: Path = Path("/sys/fs/cgroup"),
                         proc_cgroup: Path = Path("/proc/self/cgroup")) -> int:
    """Physical RAM, or this process's cgroup memory limit when that is lower (in a container)."""
    try:
        ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        ram = 8 << 30
    limit = _cgroup_limit(cgroup_root, proc_cgroup)
    return min(ram, limit) if limit else ram


def _cgroup_limit(root: Path, proc_cgroup: Path) -> int | None:
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    candidates: list[Path] = []
    for line in lines:
        fields = line.split(":", 2)
        if len(fields) != 3:
            continue
        _, controllers, path = fields
        relative = path.lstrip("/")
        if controllers == "":  # cgroup v2: one unified hierarchy
            candidates += [root / relative / "memory.max", root / "memory.max"]
        elif "memory" in controllers.split(","):  # cgroup v1
            candidates += [root / "memory" / relative / "memory.limit_in_bytes",
                           root / "memory" / "memory.limit_in_bytes"]
    for candidate in candidates:
        try:
            text = candidate.read_text().strip()
        except OSError:
            continue
        if text == "max" or not text.isdigit():
            return None
        value = int(text)
        return value if 0 < value < _UNLIMITED else None
    return None


@dataclass(frozen=True)
class EngineMemory:
    """The engine's memory budget: a cap for everything it tracks, a cap per insert, its caches."""

    engine_bytes: int
    insert_bytes: int
    cache_bytes: int

    @classmethod
    def for_machine(cls, machine_bytes: int, *, insert_concurrency: int = 2, engine_bytes: int | None = None,
                    insert_bytes: int | None = None, cache_bytes: int | None = None) -> EngineMemory:
        """Defaults: the engine a quarter of the machine (1-4 GiB); each insert an equal share of it
        with the other inserts in flight and one more for merges and reads; caches 1/256 of the
        machine (32-256 MiB: marks and primary indexes of evalkit's tables are small, ~20 bytes per
        column per 8,192 rows), and as much again for decompressed blocks of short reads."""
        engine = engine_bytes or min(4 << 30, max(1 << 30, machine_bytes // 4))
        insert = insert_bytes or engine // (max(1, insert_concurrency) + 1)
        cache = cache_bytes or min(256 << 20, max(32 << 20, machine_bytes // 256))
        return cls(engine, min(insert, engine), cache)

    def server_options(self) -> dict[str, str]:
        """Server settings of the embedded engine (chDB startup arguments)."""
        return {
            "max_server_memory_usage": str(self.engine_bytes),
            # Merges start only while the engine tracks less than this, so they leave room for inserts.
            "merges_mutations_memory_usage_soft_limit": str(self.engine_bytes // 2),
            "mark_cache_size": str(self.cache_bytes // 2),
            "index_mark_cache_size": str(self.cache_bytes // 4),
            "primary_index_cache_size": str(self.cache_bytes // 4),
            "compiled_expression_cache_size": str(min(32 << 20, self.cache_bytes // 4)),
            "query_condition_cache_size": str(min(32 << 20, self.cache_bytes // 4)),
            # Decompressed blocks, for the reads that ask for it (`SHORT_READ`, evalkit/store.py): a page of
            # the session list looks up random trace ids in the index tables, reading every granule of them
            # each time (their columns it reads are ~370 bytes a session: 74 MB at 200,000 sessions); kept
            # decompressed, a page costs ~8 ms less (docs/performance.md). Filled only by those reads, and
            # by none past 1,048,576 rows (`merge_tree_max_rows_to_use_cache`), so a scan does not evict it.
            "uncompressed_cache_size": str(self.cache_bytes),
        }

    def insert_settings(self) -> dict[str, int]:
        """Session settings of the store's insert connections: an insert past its share is refused
        with MEMORY_LIMIT_EXCEEDED, which the store reports as retryable (overloaded)."""
        return {"max_memory_usage": self.insert_bytes}


# MergeTree defaults of the embedded engine (a server's are its administrator's). Vertical merges
# merge the sort key first, then one column at a time: measured, a merge of 4 MiB span batches
# peaked at ~420 MB tracked when horizontal (a block of every column of every part at once) and
# ~130 MB vertical, at the same CPU time (docs/performance.md, Memory).
MERGE_TREE_SETTINGS = {
    "vertical_merge_algorithm_min_rows_to_activate": 1,
    "vertical_merge_algorithm_min_columns_to_activate": 1,
    "merge_max_block_size": 1024,
}


def write_config_file(path: Path, merge_tree: dict[str, int] | None = None) -> Path:
    """The engine's configuration file (chDB's `config-file`): settings that have no startup
    argument, the MergeTree defaults. Written at every start, so it always matches this evalkit."""
    entries = "".join(f"    <{name}>{escape(str(value))}</{name}>\n"
                      for name, value in (MERGE_TREE_SETTINGS if merge_tree is None else merge_tree).items())
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"<clickhouse>\n  <merge_tree>\n{entries}  </merge_tree>\n</clickhouse>\n"
    if not path.exists() or path.read_text() != text:
        path.write_text(text)
    return path
