"""Per-agent mapping overrides, stored and versioned.

Versions are 1, 2, 3… per agent; a trajectory reports the label it was built with
(`v3`, or the label the user gave in `version`), or `built-in` when the agent has none.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from evalkit.store import Store
from evalkit.trajectory.overrides import MappingOverrides

# Serialises "read the latest version, write the next" within this process (the API's only writer).
_WRITE_LOCK = threading.Lock()


@dataclass(frozen=True)
class StoredMapping:
    agent_id: str
    version: int  # 0: none stored
    overrides: MappingOverrides | None
    created_by: str = ""
    created_at_ms: int = 0

    @property
    def label(self) -> str:
        return self.overrides.label if self.overrides is not None else "built-in"


def with_label(overrides: MappingOverrides, version: int) -> MappingOverrides:
    """The overrides as stored: `version` says which stored version they are unless the user named it."""
    if overrides.version:
        return overrides
    return overrides.model_copy(update={"version": f"v{version}"})


def current_mapping(store: Store, agent_id: str, version: int | None = None) -> StoredMapping:
    """The newest stored overrides of an agent (or the given version); version 0 when none were set."""
    where = "" if version is None else " AND version = {v:UInt32}"
    rows = store.query(
        "SELECT version, overrides, created_by, toUnixTimestamp64Milli(created_at) FROM mapping_overrides FINAL "
        "WHERE agent_id = {a:String}" + where + " ORDER BY version DESC LIMIT 1",
        {"a": agent_id, "v": version or 0},
    )
    if not rows:
        return StoredMapping(agent_id, 0, None)
    number, text, by, at = rows[0]
    overrides = MappingOverrides.model_validate_json(text) if text else None
    return StoredMapping(agent_id, int(number), overrides, by, int(at))


def mapping_history(store: Store, agent_id: str) -> list[StoredMapping]:
    rows = store.query(
        "SELECT version, overrides, created_by, toUnixTimestamp64Milli(created_at) FROM mapping_overrides FINAL "
        "WHERE agent_id = {a:String} ORDER BY version",
        {"a": agent_id},
    )
    return [
        StoredMapping(agent_id, int(n), MappingOverrides.model_validate_json(t) if t else None, by, int(at))
        for n, t, by, at in rows
    ]


def save_mapping(store: Store, agent_id: str, overrides: MappingOverrides | None, created_by: str) -> StoredMapping:
    """Store the overrides as the agent's next version (None: back to the built-in mapping)."""
    with _WRITE_LOCK:
        version = current_mapping(store, agent_id).version + 1
        labelled = with_label(overrides, version) if overrides is not None else None
        text = labelled.model_dump_json(exclude_defaults=False) if labelled is not None else ""
        now_ms = int(time.time() * 1000)
        store.insert(
            "mapping_overrides",
            [[agent_id], [version], [text], [created_by], [now_ms]],
            ["agent_id", "version", "overrides", "created_by", "created_at"],
        )
    return StoredMapping(agent_id, version, labelled, created_by, now_ms)


def overrides_json(mapping: StoredMapping) -> dict[str, object]:
    return {
        "agent": mapping.agent_id,
        "version": mapping.version,
        "mapping_version": mapping.label,
        "overrides": json.loads(mapping.overrides.model_dump_json()) if mapping.overrides is not None else None,
        "created_by": mapping.created_by or None,
        "created_at_ms": mapping.created_at_ms or None,
    }


class CurrentMappings:
    """Each agent's newest overrides, remembered for `seconds`: every trajectory request asks.

    A mapping saved through this service (`forget`) applies at once; one saved by another
    process sharing the store, within `seconds`.
    """

    def __init__(self, seconds: float = 10.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.seconds = seconds
        self.clock = clock
        self._current: dict[str, tuple[StoredMapping, float]] = {}
        self._lock = threading.Lock()  # asked from worker threads

    def get(self, store: Store, agent_id: str) -> StoredMapping:
        with self._lock:
            entry = self._current.get(agent_id)
        if entry is not None and entry[1] > self.clock():
            return entry[0]
        mapping = current_mapping(store, agent_id)
        with self._lock:
            if len(self._current) >= 10_000:
                self._current.clear()  # agent ids come from requests: bounded
            self._current[agent_id] = (mapping, self.clock() + self.seconds)
        return mapping

    def forget(self, agent_id: str) -> None:
        """After a save: the next request reads the new mapping."""
        with self._lock:
            self._current.pop(agent_id, None)
