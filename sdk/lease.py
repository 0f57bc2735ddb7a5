"""Holding an experiment's lease while running it: renewed in the background, loss noticed at once."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid

from evalkit.sdk.client import ServiceError, ServiceUnreachable
from evalkit.sdk.service import Service


def lease_ttl_seconds() -> float:
    """60 s by default; EVALKIT_LEASE_TTL_SECONDS shortens it (a killed runner's lease expires sooner)."""
    try:
        return max(2.0, float(os.environ.get("EVALKIT_LEASE_TTL_SECONDS", "60")))
    except ValueError:
        return 60.0


def new_holder() -> str:
    return f"sdk:{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


class LeaseLost(RuntimeError):
    def __init__(self, experiment_id: int, reason: str) -> None:
        super().__init__(
            f"lost the lease of experiment {experiment_id}: {reason}. Another runner may hold it now; this one "
            f"stopped. Resume it with run_experiment(..., resume={experiment_id}) or "
            f"`evalkit run ... --resume {experiment_id}`")
        self.experiment_id = experiment_id


class LeaseKeeper:
    """Renews the lease every third of its time to live; sets `lost` when the service refuses it."""

    def __init__(self, service: Service, experiment_id: int, holder: str, ttl_seconds: float,
                 expires_at: float | None = None) -> None:
        self.service = service
        self.experiment_id = experiment_id
        self.holder = holder
        self.ttl = ttl_seconds
        self.expires_at = expires_at or time.time() + ttl_seconds
        self.lost = asyncio.Event()
        self.reason = ""
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renew(), name="evalkit-lease")

    async def _renew(self) -> None:
        while not self.lost.is_set():
            await asyncio.sleep(self.ttl / 3)
            try:
                data = await self.service.lease(self.experiment_id, self.holder, self.ttl)
                self.expires_at = float(data.get("expires_at") or time.time() + self.ttl)
            except ServiceError as exc:
                if exc.status in (404, 409, 403):
                    self.reason = exc.message
                    self.lost.set()
            except ServiceUnreachable as exc:
                # Keep trying while the lease still runs; past its expiry another runner may take over.
                if time.time() >= self.expires_at:
                    self.reason = f"could not renew it before it expired ({exc})"
                    self.lost.set()

    def check(self) -> None:
        if self.lost.is_set():
            raise LeaseLost(self.experiment_id, self.reason)

    async def stop(self, release: bool = True) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except (asyncio.CancelledError, Exception):
                pass
        if release and not self.lost.is_set():
            try:
                await self.service.release(self.experiment_id, self.holder)
            except (ServiceError, ServiceUnreachable):
                pass
