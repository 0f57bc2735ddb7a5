"""Experiments: a config snapshot, pinned cases, and a status machine kept as versioned rows.

    pending → running → evaluating → completed, or failed / cancelled
                running → stopped (→ running again by resuming)

`evaluating`: every planned run has a final attempt and running is over: the
runner holding the lease said so (`PATCH status=evaluating`), the harness driver
finished its pass, or the last slot was recorded while no runner held a live
lease; `completed`: every applicable evaluator has scored every final run; `stopped`: the runner stopped
before the end (its budget ran out, Ctrl-C, an error) with planned runs never run: not finished, and it says
so (why, planned vs ran, how to resume in its status reason; the scorecard) until it is resumed. A runner
killed outright gives nothing back: its experiment stays `running` and, once the lease runs out, its reason
says nobody runs it. Transitions are serialised per
experiment by the service (an asyncio lock per id); the rows only record them.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from dataclasses import dataclass, field, replace
from typing import Any

from evalkit.store import Store

from .tables import next_version

STATUSES = ("pending", "running", "evaluating", "completed", "failed", "cancelled", "stopped")
FINAL_STATUSES = ("completed", "failed", "cancelled")
# Where a PATCH may move an experiment. Resuming (back to running) has its own route.
TRANSITIONS: dict[str, tuple[str, ...]] = {
    "pending": ("running", "cancelled", "failed"),
    "running": ("evaluating", "stopped", "cancelled", "failed"),
    "stopped": ("cancelled", "failed"),
    "evaluating": ("completed", "cancelled", "failed"),
    "completed": ("evaluating",),
    "failed": (),
    "cancelled": (),
}


@dataclass(frozen=True)
class Experiment:
    experiment_id: int
    workspace: str
    agent_id: str
    dataset: str
    dataset_version: str
    created_by: str
    created_at: float
    config: dict[str, Any]
    cases: list[str]
    dropped: list[dict[str, Any]] = field(default_factory=list)
    status: str = "pending"
    status_reason: str = ""
    model: str = ""
    updated_at: float = 0.0

    @property
    def repetitions(self) -> int:
        return int(self.config.get("repetitions", 1))

    @property
    def planned(self) -> int:
        return len(self.cases) * self.repetitions

    @property
    def code_evaluators(self) -> list[str]:
        return list(self.config.get("code_evaluators", []))

    @property
    def service_evaluators(self) -> dict[str, dict[str, Any]]:
        return dict(self.config.get("service_evaluators", {}))

    @property
    def case_evaluators(self) -> dict[str, list[str]]:
        """case id → the evaluators it asked for: the config's own mapping, read-only (a copy of 100,000
        cases' lists cost more than the scorecard computed from them)."""
        return dict(self.config.get("case_evaluators", {}))

    @property
    def evaluator_names(self) -> list[str]:
        names = list(self.service_evaluators) + self.code_evaluators
        return list(dict.fromkeys(names))

    def with_status(self, status: str, reason: str, now: float) -> Experiment:
        return replace(self, status=status, status_reason=reason, updated_at=now)


_COLUMNS = ["experiment_id", "workspace", "agent_id", "dataset", "dataset_version", "created_by", "created_at",
            "config", "cases", "dropped", "status", "status_reason", "model", "updated_at", "version"]
_SELECT = ("SELECT experiment_id, workspace, agent_id, dataset, dataset_version, created_by, "
           "toUnixTimestamp64Milli(created_at), config, cases, dropped, status, status_reason, model, "
           "toUnixTimestamp64Milli(updated_at) FROM experiments FINAL")


def _experiment(r: tuple[Any, ...]) -> Experiment:
    return Experiment(int(r[0]), r[1], r[2], r[3], r[4], r[5], r[6] / 1000, _config(r[7]), list(r[8]),
                      json.loads(r[9] or "[]"), r[10], r[11], r[12], r[13] / 1000)


# Every page and scorecard of an experiment reads its row again, and a config of 100,000 cases' evaluator
# lists takes ~30 ms to parse where hashing and comparing its text takes ~3: a large config is parsed once per
# text. The dict is then shared by every Experiment read with that text, so it is never changed in place (a
# change is a new dict: `dataclasses.replace(e, config={**e.config, ...})`, as ScoringService does).
_LARGE_CONFIG = 65_536
_CONFIGS_KEPT = 4
_configs: OrderedDict[str, dict[str, Any]] = OrderedDict()
_configs_lock = threading.Lock()


def _share_case_lists(config: dict[str, Any]) -> None:
    """One list object per distinct evaluator list in `case_evaluators` (100,000 cases usually ask for a handful
    of lists): a fifth of the memory, and the scorecard groups cases by object (`_applies_groups`)."""
    mapping = config.get("case_evaluators")
    if not isinstance(mapping, dict):
        return
    shared: dict[tuple[Any, ...], Any] = {}
    try:
        for case, value in mapping.items():
            if isinstance(value, list):
                mapping[case] = shared.setdefault(tuple(value), value)
    except TypeError:  # an unhashable name: not a config this service wrote; kept as parsed
        return


def _config(text: str) -> dict[str, Any]:
    if len(text) < _LARGE_CONFIG:
        return json.loads(text)  # type: ignore[no-any-return]
    with _configs_lock:
        parsed = _configs.get(text)
        if parsed is not None:
            _configs.move_to_end(text)
            return parsed
    parsed = json.loads(text)
    _share_case_lists(parsed)
    with _configs_lock:
        _configs[text] = parsed
        while len(_configs) > _CONFIGS_KEPT:
            _configs.popitem(last=False)
    return parsed


class Experiments:
    def __init__(self, store: Store) -> None:
        self.store = store
        self._id_lock = threading.Lock()

    def create(self, experiment: Experiment) -> Experiment:
        """Give the experiment the next id and store it.

        Ids are allocated under a process lock: one process owns an embedded store,
        and with a server one scoring process serves the API (see docs/api.md).
        """
        with self._id_lock:
            rows = self.store.query("SELECT max(experiment_id) FROM experiments")
            new_id = int(rows[0][0] or 0) + 1 if rows else 1
            created = replace(experiment, experiment_id=new_id)
            self.save(created)
            return created

    def save(self, e: Experiment) -> None:
        self.store.insert("experiments", [[v] for v in (
            e.experiment_id, e.workspace, e.agent_id, e.dataset, e.dataset_version, e.created_by,
            int(e.created_at * 1000), json.dumps(e.config, default=str), e.cases, json.dumps(e.dropped), e.status,
            e.status_reason, e.model, int(e.updated_at * 1000), next_version())], _COLUMNS)

    def get(self, experiment_id: int) -> Experiment | None:
        rows = self.store.query(_SELECT + " WHERE experiment_id = {i:UInt64}", {"i": experiment_id})
        return _experiment(rows[0]) if rows else None

    def find(self, *, workspaces: list[str] | None, agent: str | None = None, status: str | None = None,
             limit: int = 50) -> list[Experiment]:
        # Status changes, so it is filtered after FINAL has deduplicated the versions.
        where = ["status != 'deleted'"]  # scoring/deletion.py leaves a tombstone row
        params: dict[str, Any] = {"n": limit}
        if workspaces is not None:
            where.append("workspace IN {ws:Array(String)}")
            params["ws"] = workspaces
        if agent:
            where.append("agent_id = {a:String}")
            params["a"] = agent
        if status:
            where.append("status = {s:String}")
            params["s"] = status
        rows = self.store.query(f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY experiment_id DESC "
                                "LIMIT {n:UInt32}", params)
        return [_experiment(r) for r in rows]

    def running(self) -> list[Experiment]:
        return self.find(workspaces=None, status="running", limit=100_000)
