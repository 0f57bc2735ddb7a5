"""How the service's process gives memory back: library code touched only at start, and what
glibc's allocator keeps of freed buffers.

Code pages. chDB is one 555 MB library; opening the engine runs the registration code of every function,
format and table engine in it, which leaves ~210 MB of its code resident (file-backed, clean
pages: RSS counts them, though the kernel could drop them). Asking the kernel to page out the
read-only file mappings (MADV_PAGEOUT, Linux 5.4+) once the engine is open and again once the
service is ready returns them; what a request needs again is read back from the page cache or
the disk at its first use (measured: ~8 MB of chDB's come back within 10 s of idling, ~60 MB
more with a first trajectory and UI page, ~170 MB in all under ingest; docs/performance.md,
Memory).

Only read-only mappings of files with no private (copy-on-write) page are advised, so no memory
that cannot be re-read from its file is touched.

glibc's malloc (Python's large objects, the C extensions; ClickHouse has its own jemalloc). By
default it raises its mmap threshold to the largest buffer freed so far and keeps up to 8 arenas
per core: an export request of a few hundred KB, once freed, makes every later one come from
arenas that keep their freed space. Measured under 16 gRPC clients: ~100 MB held by glibc with
~25-55 MB in use; with a fixed 128 KiB threshold and 2 arenas, ~55-60 MB.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
from pathlib import Path

log = logging.getLogger("evalkit.process_memory")

_MADV_PAGEOUT = 21
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8


def _libc() -> ctypes.CDLL | None:
    try:
        return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    except OSError:
        return None


def bound_malloc(arenas: int = 2, mmap_threshold: int = 128 << 10) -> bool:
    """Fix glibc's mmap threshold (buffers past it are returned to the system when freed) and its
    arena count; call before the service starts its threads. False where malloc is not glibc's."""
    libc = _libc()
    mallopt = getattr(libc, "mallopt", None)
    if mallopt is None:
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    ok = bool(mallopt(_M_MMAP_THRESHOLD, mmap_threshold))
    ok = bool(mallopt(_M_TRIM_THRESHOLD, 2 * mmap_threshold)) and ok
    return bool(mallopt(_M_ARENA_MAX, arenas)) and ok


def release_code_pages(smaps: Path = Path("/proc/self/smaps")) -> int:
    """Advise the kernel to page out this process's read-only file mappings; returns the resident
    bytes they held (what the kernel may reclaim), 0 where the kernel or platform has no such advice."""
    try:
        text = smaps.read_text()
    except OSError:
        return 0
    mappings = list(_read_only_file_mappings(text))
    if not mappings:
        return 0
    libc = _libc()
    madvise = getattr(libc, "madvise", None)
    if madvise is None:
        return 0
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    madvise.restype = ctypes.c_int
    released = 0
    for start, end, resident in mappings:
        if madvise(start, end - start, _MADV_PAGEOUT) != 0:
            # EINVAL: a kernel before 5.4; nothing is lost, the pages stay resident.
            log.info("MADV_PAGEOUT refused (errno %d); library code stays resident", ctypes.get_errno())
            return released
        released += resident
    return released


def _read_only_file_mappings(smaps: str) -> list[tuple[int, int, int]]:
    """(start, end, resident bytes) of each read-only file mapping with resident pages and no
    anonymous (copied-on-write) ones."""
    mappings: list[dict[str, int]] = []
    current: dict[str, int] | None = None
    for line in smaps.splitlines():
        fields = line.split()
        if not fields:
            continue
        if not fields[0].endswith(":"):  # a mapping's header: range perms offset dev inode [path]
            perms = fields[1] if len(fields) > 1 else ""
            path = fields[5] if len(fields) > 5 else ""
            current = None
            if perms in ("r-xp", "r--p") and path.startswith("/"):
                start, end = (int(x, 16) for x in fields[0].split("-"))
                current = {"start": start, "end": end, "rss": 0, "anon": -1}
                mappings.append(current)
        elif current is not None and fields[0] in ("Rss:", "Anonymous:"):
            current["rss" if fields[0] == "Rss:" else "anon"] = int(fields[1]) * 1024
    return [(m["start"], m["end"], m["rss"]) for m in mappings if m["rss"] > 0 and m["anon"] == 0]
