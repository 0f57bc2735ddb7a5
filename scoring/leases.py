"""The lease on an experiment: one runner at a time records runs.

A holder takes the lease for a time and renews it; when it expires another
holder may take it over, and the old holder is refused from then on. A released
lease has an empty holder.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from evalkit.store import Store

from .tables import next_version


@dataclass(frozen=True)
class Lease:
    experiment_id: int
    holder: str
    expires_at: float
    acquired_at: float

    def live(self, now: float) -> bool:
        return bool(self.holder) and self.expires_at > now

    def view(self, now: float) -> dict[str, object] | None:
        if not self.holder:
            return None
        return {"holder": self.holder, "expires_at": self.expires_at, "expired": not self.live(now)}


class LeaseRefused(Exception):
    """The lease is held by someone else, or was lost; the message says what to do."""


def resume_hint(experiment_id: int) -> str:
    return (f"resume with `run_experiment(..., resume={experiment_id})` or "
            f"`evalkit run … --resume {experiment_id}`")


def take_over_hint(experiment_id: int) -> str:
    return (f"`evalkit run … --resume {experiment_id} --take-over` or "
            f"`run_experiment(..., resume={experiment_id}, take_over=True)`")


def busy_message(experiment_id: int, lease: Lease, now: float) -> str:
    """Who holds a live lease until when (an ISO time with its offset, and how long from now), and the way out."""
    until = datetime.datetime.fromtimestamp(lease.expires_at).astimezone().isoformat(timespec="seconds")
    left = max(0, round(lease.expires_at - now))
    return (f"experiment {experiment_id} is being run by {lease.holder} until {until} (in {left} s); if that "
            f"runner is gone (killed, its machine down), take over now with {take_over_hint(experiment_id)}; "
            f"otherwise wait for it to finish, or resume once its lease has run out")


class Leases:
    def __init__(self, store: Store) -> None:
        self.store = store

    def get(self, experiment_id: int) -> Lease | None:
        rows = self.store.query("SELECT holder, expires_at, acquired_at FROM experiment_leases FINAL "
                                "WHERE experiment_id = {i:UInt64}", {"i": experiment_id})
        return Lease(experiment_id, rows[0][0], float(rows[0][1]), float(rows[0][2])) if rows else None

    def write(self, lease: Lease) -> None:
        self.store.insert("experiment_leases",
                          [[lease.experiment_id], [lease.holder], [lease.expires_at], [lease.acquired_at],
                           [next_version()]],
                          ["experiment_id", "holder", "expires_at", "acquired_at", "version"])

    def acquire(self, experiment_id: int, holder: str, ttl: float, now: float, *, take_over: bool = True,
                force: bool = False) -> tuple[Lease, bool]:
        """Take or renew the lease; returns (lease, renewed). Caller holds the experiment's lock.

        `force` takes a live lease of another holder over: the caller knows that holder is gone (the SDK
        checks that a holder of its own host has no process any more, or the user said `--take-over`)."""
        current = self.get(experiment_id)
        if current is not None and current.holder and current.holder != holder and current.live(now) \
                and not force:
            raise LeaseRefused(busy_message(experiment_id, current, now))
        renewed = current is not None and current.holder == holder
        if not take_over and current is not None and current.holder and current.holder != holder:
            raise LeaseRefused(f"experiment {experiment_id} is held by {current.holder}; {resume_hint(experiment_id)}")
        lease = Lease(experiment_id, holder, now + ttl, current.acquired_at if renewed and current else now)
        self.write(lease)
        return lease, renewed

    def check(self, experiment_id: int, holder: str | None) -> None:
        """Refuse a writer that does not hold the lease (an expired lease nobody took over still counts)."""
        current = self.get(experiment_id)
        if current is None or not current.holder:
            raise LeaseRefused(f"experiment {experiment_id} has no lease holder; take the lease first "
                               f"(POST /api/experiments/{experiment_id}/lease) or {resume_hint(experiment_id)}")
        if holder != current.holder:
            raise LeaseRefused(f"you ({holder or 'no lease_holder given'}) lost the lease of experiment "
                               f"{experiment_id}: {current.holder} holds it now; stop this runner and "
                               f"{resume_hint(experiment_id)}")

    def release(self, experiment_id: int, holder: str | None, now: float) -> bool:
        current = self.get(experiment_id)
        if current is None or not current.holder or (holder is not None and current.holder != holder):
            return False
        self.write(Lease(experiment_id, "", now, current.acquired_at))
        return True
