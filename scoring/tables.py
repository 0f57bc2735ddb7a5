"""The scoring part's tables (migrations 100-199).

Mutable entities (members, experiments, leases, runs) are versioned rows in
ReplacingMergeTree tables keyed by fixed ids: a change is a new row with a
higher version, readers deduplicate (FINAL / argMax) before filtering on any
column that can change. Evaluations keep every version (re-scoring appends);
readers take the latest per (run, evaluator).

The users and workspace-member tables belong to `evalkit/access.py` but live
here because they arrived with the scoring service.
"""

from __future__ import annotations

import threading
import time

from evalkit.migrations import Migration, Table

_last_version = 0
_version_lock = threading.Lock()


def next_version() -> int:
    """A row version that is strictly increasing within this process (nanoseconds, bumped on ties):
    two writes within one clock tick must still order."""
    global _last_version
    with _version_lock:
        _last_version = max(_last_version + 1, time.time_ns())
        return _last_version


USERS = Table(
    name="users",
    columns="name String, created_at DateTime64(3, 'UTC'), archived Bool, version UInt64",
    engine="ReplacingMergeTree(version)",
    order_by="name",
)

WORKSPACE_MEMBERS = Table(
    name="workspace_members",
    columns="""
        workspace String, user String, role LowCardinality(String), added_by String,
        added_at DateTime64(3, 'UTC'), removed Bool, version UInt64
    """,
    engine="ReplacingMergeTree(version)",
    order_by="workspace, user",
)

WORKSPACE_EVALUATORS = Table(
    name="workspace_evaluators",
    columns="workspace String, name String, spec String, removed Bool, created_by String, version UInt64",
    engine="ReplacingMergeTree(version)",
    order_by="workspace, name",
)

BLOBS = Table(
    name="blobs",
    columns="workspace String, sha256 String, size UInt64, created_by String, "
            "created_at DateTime64(3, 'UTC')",
    # A second put of the same content is the same row.
    engine="ReplacingMergeTree(created_at)",
    order_by="workspace, sha256",
)

DATASET_VERSIONS = Table(
    name="dataset_versions",
    columns="""
        workspace String, name String, version String, git_revision String, description String,
        case_ids Array(String), case_hashes Array(String), pushed_by String, pushed_at DateTime64(3, 'UTC')
    """,
    # Pushing the same content twice is one version; the latest push time wins.
    engine="ReplacingMergeTree(pushed_at)",
    order_by="workspace, name, version",
)

# Content-addressed: a case unchanged across versions is stored once.
DATASET_CASES = Table(
    name="dataset_cases",
    columns="workspace String, dataset String, case_hash String, case_id String, doc String CODEC(ZSTD(3))",
    engine="ReplacingMergeTree",
    order_by="workspace, dataset, case_hash",
)

CASE_REVIEWS = Table(
    name="case_reviews",
    columns="""
        workspace String, dataset String, case_id String, case_hash String, state LowCardinality(String),
        note String, reviewer String, reviewed_at DateTime64(3, 'UTC'), version UInt64
    """,
    engine="ReplacingMergeTree(version)",
    order_by="workspace, dataset, case_id, case_hash",
)

EXPERIMENTS = Table(
    name="experiments",
    columns="""
        experiment_id UInt64, workspace String, agent_id String, dataset String, dataset_version String,
        created_by String, created_at DateTime64(3, 'UTC'), config String CODEC(ZSTD(3)),
        cases Array(String), dropped String, status LowCardinality(String), status_reason String,
        model String, updated_at DateTime64(3, 'UTC'), version UInt64
    """,
    engine="ReplacingMergeTree(version)",
    order_by="experiment_id",
)

LEASES = Table(
    name="experiment_leases",
    columns="experiment_id UInt64, holder String, expires_at Float64, acquired_at Float64, version UInt64",
    engine="ReplacingMergeTree(version)",
    order_by="experiment_id",
)

RUNS = Table(
    name="runs",
    columns="""
        experiment_id UInt64, case_id String, repetition UInt32, attempt UInt32, run_id String,
        session_id String, status LowCardinality(String), answer Nullable(String) CODEC(ZSTD(3)),
        output String CODEC(ZSTD(3)), error Nullable(String), model String,
        started_at Nullable(Float64), ended_at Nullable(Float64),
        trajectory_status LowCardinality(String), trajectory_source LowCardinality(String),
        trajectory String CODEC(ZSTD(3)), problems Array(String),
        duration_seconds Nullable(Float64), steps Nullable(Int64), tool_calls Nullable(Int64),
        input_tokens Nullable(Int64), output_tokens Nullable(Int64), cost_usd Nullable(Float64),
        recorded_by String, recorded_at Float64, version UInt64
    """,
    # The slot and attempt are the identity: a retried POST or a re-fetched trajectory replaces the row.
    engine="ReplacingMergeTree(version)",
    order_by="experiment_id, case_id, repetition, attempt",
)

EVALUATIONS = Table(
    name="evaluations",
    columns="""
        experiment_id UInt64, run_id String, evaluator String, version UInt64,
        score Nullable(Float64), passed Nullable(Bool), label Nullable(String), explanation Nullable(String),
        metadata String, error Nullable(String), evaluator_version String, cost_usd Nullable(Float64),
        source LowCardinality(String), created_by String, created_at Float64
    """,
    # Every version is kept (re-scoring appends); a retried identical insert collapses.
    engine="ReplacingMergeTree",
    order_by="experiment_id, evaluator, run_id, version",
)

WORKSPACE_SECRETS = Table(
    name="workspace_secrets",
    columns="workspace String, name String, ciphertext String, removed Bool, created_by String, version UInt64",
    engine="ReplacingMergeTree(version)",
    order_by="workspace, name",
)

MIGRATIONS: list[Migration] = [
    Migration(100, "users and workspace members", (USERS, WORKSPACE_MEMBERS, WORKSPACE_EVALUATORS)),
    Migration(101, "blobs, datasets, cases and reviews", (BLOBS, DATASET_VERSIONS, DATASET_CASES, CASE_REVIEWS)),
    Migration(102, "experiments, leases, runs and evaluations", (EXPERIMENTS, LEASES, RUNS, EVALUATIONS)),
    Migration(150, "workspace secrets (encrypted judge and evaluator keys)", (WORKSPACE_SECRETS,)),
]
