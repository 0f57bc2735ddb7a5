"""Where encoding runs: in worker processes, so that decoding spans (pure Python) uses
every core instead of the event loop's one, or inline when `workers` is 0.

Workers are spawned, not forked: the embedded ClickHouse engine in this process
has threads and must not be copied into a child.
"""

from __future__ import annotations

import asyncio
import multiprocessing
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def _warm() -> None:
    # Import the encoding stack once per worker, not on the first request.
    import evalkit.ingest.encode  # noqa: F401


class EncodePool:
    def __init__(self, workers: int) -> None:
        self.workers = workers
        self._executor: Executor | None = None
        if workers > 0:
            self._executor = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                                 initializer=_warm)

    async def warm_up(self) -> None:
        """Start every worker now, so the first exports do not wait for processes to spawn."""
        if self._executor is not None:
            loop = asyncio.get_running_loop()
            await asyncio.gather(*(loop.run_in_executor(self._executor, _warm) for _ in range(self.workers)))

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        if self._executor is None:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)
            self._executor = None
