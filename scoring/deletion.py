"""Deleting an experiment (its runs, evaluations and lease) or a dataset (every version, case and review).

A deleted experiment keeps one row, status `deleted` and nothing else, so that its id is never given to
another experiment (ids are the highest one + 1) and a link to it says "deleted", not someone else's work.

ClickHouse deletes by mutation: `ALTER TABLE … DELETE` rewrites the parts holding the rows, waited for
(`mutations_sync`), so that what a delete answers is what a read sees next. On a cluster the mutation
runs on every node's local table. Blobs stay: they are shared by content across datasets of a workspace.
"""

from __future__ import annotations

from typing import Any

from evalkit.store import Store

from .experiments import Experiment, Experiments

_EXPERIMENT_TABLES = ("runs", "evaluations", "experiment_leases")
DELETED = "deleted"
_DATASET_TABLES = ("case_reviews", "dataset_cases", "dataset_versions")


def _delete(store: Store, table: str, where: str, params: dict[str, Any]) -> int:
    count = int(store.query(f"SELECT count() FROM {table} WHERE {where}", params)[0][0])
    if count:
        target = f"{table}_local ON CLUSTER {store.cluster}" if store.cluster else table
        store.command(f"ALTER TABLE {target} DELETE WHERE {where}", params, settings={"mutations_sync": 2})
    return count


def delete_experiment(store: Store, experiments: Experiments, e: Experiment, now: float) -> dict[str, int]:
    """Row counts removed per table (every stored version counts). The tombstone is written last, so a
    delete cut short leaves a visible experiment that can be deleted again."""
    params = {"i": e.experiment_id}
    removed = {table: _delete(store, table, "experiment_id = {i:UInt64}", params) for table in _EXPERIMENT_TABLES}
    experiments.save(Experiment(e.experiment_id, e.workspace, e.agent_id, e.dataset, e.dataset_version, e.created_by,
                                e.created_at, {}, [], [], DELETED, f"deleted at {now:.0f} (unix time)", "", now))
    return removed


def delete_dataset(store: Store, workspace: str, name: str) -> dict[str, int]:
    params = {"w": workspace, "n": name}
    removed = {}
    for table in _DATASET_TABLES:
        column = "name" if table == "dataset_versions" else "dataset"
        removed[table] = _delete(store, table, f"workspace = {{w:String}} AND {column} = {{n:String}}", params)
    return removed


def experiments_using(store: Store, workspace: str, name: str) -> list[int]:
    rows = store.query("SELECT experiment_id FROM experiments FINAL WHERE dataset = {d:String} AND "
                       "status != 'deleted' ORDER BY experiment_id", {"d": f"{name}@{workspace}"})
    return [int(r[0]) for r in rows]


def rename_dataset(store: Store, workspace: str, name: str, new_name: str) -> dict[str, int]:
    """Copy every version, case and review to `new_name`, then delete the old name's rows."""
    params = {"w": workspace, "n": name, "new": new_name}
    store.command("INSERT INTO dataset_versions (workspace, name, version, git_revision, description, case_ids, "
                  "case_hashes, pushed_by, pushed_at) SELECT workspace, {new:String}, version, git_revision, "
                  "description, case_ids, case_hashes, pushed_by, pushed_at FROM dataset_versions FINAL "
                  "WHERE workspace = {w:String} AND name = {n:String}", params)
    store.command("INSERT INTO dataset_cases (workspace, dataset, case_hash, case_id, doc) SELECT workspace, "
                  "{new:String}, case_hash, case_id, doc FROM dataset_cases FINAL WHERE workspace = {w:String} AND "
                  "dataset = {n:String}", params)
    store.command("INSERT INTO case_reviews (workspace, dataset, case_id, case_hash, state, note, reviewer, "
                  "reviewed_at, version) SELECT workspace, {new:String}, case_id, case_hash, state, note, reviewer, "
                  "reviewed_at, version FROM case_reviews FINAL WHERE workspace = {w:String} AND "
                  "dataset = {n:String}", params)
    return delete_dataset(store, workspace, name)
