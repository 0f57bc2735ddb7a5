"""Where encoding runs: in worker processes, so that decoding uses every core instead of the
event loop's one, or, when `workers` is 0, on threads of this process (never on the event
loop itself, which must keep answering other requests while a large export is decoded).

Workers are spawned, not forked: the embedded ClickHouse engine in this process
has threads and must not be copied into a child. A worker dies with the server, however
the server ends (SIGKILL included): the kernel signals it when its parent dies
(PR_SET_PDEATHSIG on Linux), and a watchdog thread ends it when its pipe from the parent
closes (everywhere else, and for a parent that died before the worker set up the signal).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from multiprocessing.connection import Connection
from typing import Any, TypeVar

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1


def _die_with_parent(parent_pid: int, lifeline: Connection) -> None:
    """In a worker: end this process when the server ends."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        try:
            lifeline.recv()  # nothing is ever sent: this returns (EOF) when the parent's end closes
        except (EOFError, OSError):
            pass
        os._exit(1)

    threading.Thread(target=watch, name="evalkit-worker-lifeline", daemon=True).start()


def _start_worker(parent_pid: int, lifeline: Connection) -> None:
    _die_with_parent(parent_pid, lifeline)
    _warm()


def _warm() -> None:
    # Import the encoding stack once per worker, not on the first request.
    import evalkit.ingest.encode  # noqa: F401


class EncodePool:
    def __init__(self, workers: int, threads: int = 2) -> None:
        self.workers = workers
        self._executor: Executor
        self._lifeline: Connection | None = None
        if workers > 0:
            # The parent keeps the sending end open for its whole life and never writes to it.
            receive, self._lifeline = multiprocessing.get_context("spawn").Pipe(duplex=False)
            self._executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_start_worker, initargs=(os.getpid(), receive))
        else:
            self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="evalkit-ingest-decode")

    async def warm_up(self) -> None:
        """Start every worker now, so the first exports do not wait for processes to spawn."""
        if self.workers > 0:
            loop = asyncio.get_running_loop()
            await asyncio.gather(*(loop.run_in_executor(self._executor, _warm) for _ in range(self.workers)))

    def worker_pids(self) -> list[int]:
        processes = getattr(self._executor, "_processes", None) or {}
        return sorted(int(pid) for pid in processes)

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
        if self._lifeline is not None:
            self._lifeline.close()
            self._lifeline = None
