"""Holding an experiment's lease while running it: renewed in the background, loss noticed at once."""

from __future__ import annotations

import asyncio
import os
import socket
import time
import uuid
from typing import Any

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


class LeaseBusy(LeaseLost):
    """Resuming was refused: another runner's lease is live, and its holder is not provably gone."""

    def __init__(self, experiment_id: int, holder: str, expires_at: float | None) -> None:
        RuntimeError.__init__(self, busy_text(experiment_id, holder, expires_at))
        self.experiment_id = experiment_id


def busy_text(experiment_id: int, holder: str, expires_at: float | None, now: float | None = None) -> str:
    """Who runs the experiment until when, in this machine's local time, and how to take over."""
    when = ""
    if expires_at is not None:
        left = max(0, round(expires_at - (time.time() if now is None else now)))
        local = time.strftime("%H:%M:%S %Z", time.localtime(expires_at))
        when = f" until {local} (in {left} s)"
    return (f"experiment {experiment_id} is being run by {holder}{when}. If that runner is gone (killed, its "
            f"machine down), take over now: `evalkit run … --resume {experiment_id} --take-over` or "
            f"run_experiment(..., resume={experiment_id}, take_over=True); otherwise wait for it to finish, or "
            "resume once its lease has run out")


def holder_gone(holder: str) -> bool:
    """True when `holder` is a runner of this host (`sdk:host:pid:…`, see new_holder) whose process is gone:
    it can never renew its lease, so waiting for the lease to run out would only waste time."""
    parts = holder.split(":")
    if len(parts) != 4 or parts[0] != "sdk" or parts[1] != socket.gethostname() or not parts[2].isdigit():
        return False
    pid = int(parts[2])
    if pid == os.getpid():
        return False  # another runner of this process: alive by definition
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False  # a process of another user has that pid: alive
    return False


async def resume_lease(service: Service, experiment_id: int, holder: str, ttl: float, take_over: bool = False
                       ) -> dict[str, Any]:
    """Resume experiment `experiment_id` under a new lease. A live lease of a runner that is provably gone
    (same host, no such process) is taken over at once; any other live lease is taken over only with
    `take_over`, and otherwise refused with a LeaseBusy that says until when and how."""
    try:
        return await service.resume(experiment_id, holder, ttl, take_over=take_over)
    except ServiceError as exc:
        if exc.status != 409 or take_over:
            raise
        info = await service.experiment(experiment_id)
        lease = info.get("lease") or {}
        current = str(lease.get("holder") or "")
        if not current or lease.get("expired") or "being run by" not in exc.message:
            raise
        if holder_gone(current):
            return await service.resume(experiment_id, holder, ttl, take_over=True)
        raise LeaseBusy(experiment_id, current, lease.get("expires_at")) from exc


# How long stopping waits for the lease to be given back. Stopping runs on Ctrl-C too, where the person is
# waiting for the prompt: a lease not given back only runs out by itself (and a runner of this host resuming
# takes it over at once, see holder_gone), so a slow or stuck service must not hold the process.
STOP_SECONDS = 5.0


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
        self._stopping = False
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._renew(), name="evalkit-lease")

    async def _renew(self) -> None:
        # `_stopping` too, not only the cancellation: a cancellation that races an HTTP timeout can come out
        # as a TimeoutError (retried, then ServiceUnreachable, which this loop survives).
        while not self.lost.is_set() and not self._stopping:
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

    async def stop(self, release: bool = True, hurry: bool = False, why: str | None = None) -> str | None:
        """Stop renewing and, with `release`, give the lease back; with `hurry` (Ctrl-C, an error) within about
        STOP_SECONDS and one try. `why` (`interrupted`, an error) is told to the service, which puts it in the
        status reason of an experiment left with runs to do. Returns what to tell the person when the lease could
        not be given back (it then runs out by itself), else None."""
        self._stopping = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=STOP_SECONDS)
        if not release or self.lost.is_set():
            return None
        try:
            if hurry:
                await self.service.release(self.experiment_id, self.holder, timeout=STOP_SECONDS, attempts=1,
                                           reason=why)
            else:
                await self.service.release(self.experiment_id, self.holder, reason=why)
        except (ServiceError, ServiceUnreachable) as exc:
            until = time.strftime("%H:%M:%S %Z", time.localtime(self.expires_at))
            return (f"the lease of experiment {self.experiment_id} was not given back ({exc}); it runs out at "
                    f"{until}. Resuming from this machine takes it over at once; from another one before then, "
                    f"add --take-over (take_over=True)")
        return None


def stop_reason(failure: BaseException | None) -> str | None:
    """Why a runner stops early, as the experiment's status reason starts: `interrupted` for Ctrl-C (asyncio.run
    cancels the main task) or a cancelled task, else the error, short. None when it did not fail."""
    if failure is None:
        return None
    if isinstance(failure, asyncio.CancelledError | KeyboardInterrupt):
        return "interrupted"
    text = " ".join(f"{type(failure).__name__}: {failure}".split())
    return "stopped by " + (text if len(text) <= 200 else text[:199] + "…")
