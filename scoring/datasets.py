"""Datasets and their cases: pushed whole, versioned by content hash, cases stored content-addressed.

A dataset version is the hash of its cases in canonical JSON sorted by id, so
pushing the same folder twice makes no new version. A case's review belongs to
its content hash: changing a case sends it back to `pending`.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalkit.store import Store

_CASE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
REVIEW_STATES = ("pending", "approved", "rejected", "needs_changes")


class DatasetError(ValueError):
    """A dataset request that cannot work; the message names the case and field."""


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    size: int | None = None
    context: str | None = None


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    input: Any
    expected: Any = None
    rubric: str | None = None
    tags: list[str] = Field(default_factory=list)
    evaluators: list[str | dict[str, Any]] | None = None
    files: list[CaseFile] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id")
    @classmethod
    def _id(cls, value: str) -> str:
        if not _CASE_ID.match(value):
            raise ValueError("a case id is 1-128 of letters, digits, '.', '_' or '-'")
        return value

    def wanted_evaluators(self) -> list[str | dict[str, Any]]:
        """The evaluators the case asks for; a case with a rubric and no list asks for the judge."""
        if self.evaluators is not None:
            return list(self.evaluators)
        return ["judge"] if self.rubric else []

    def canonical(self) -> str:
        return json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), default=str)

    def content_hash(self) -> str:
        return hashlib.sha256(self.canonical().encode()).hexdigest()[:32]


def parse_cases(raw: Any) -> list[Case]:
    if not isinstance(raw, list) or not raw:
        raise DatasetError("`cases` must be a non-empty list of cases ({\"id\": ..., \"input\": ...})")
    cases: list[Case] = []
    seen: set[str] = set()
    for index, item in enumerate(raw):
        label = item.get("id", f"#{index}") if isinstance(item, dict) else f"#{index}"
        if not isinstance(item, dict) or "input" not in item:
            raise DatasetError(f"case {label}: a case is an object with at least `id` and `input`")
        try:
            case = Case.model_validate(item)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors(include_url=False))
            raise DatasetError(f"case {label}: {problems}") from exc
        if case.id in seen:
            raise DatasetError(f"case id {case.id!r} appears twice; case ids are unique in a dataset")
        seen.add(case.id)
        cases.append(case)
    return sorted(cases, key=lambda c: c.id)


def unknown_evaluators(cases: list[Case], known: set[str]) -> list[tuple[str, str]]:
    """(case id, name) of every evaluator a case names that is not in `known`. A spec (a mapping) is
    checked when an experiment is made from it; a name must be known at push, or it would be dropped
    silently at run time."""
    return [(case.id, item) for case in cases for item in case.wanted_evaluators()
            if isinstance(item, str) and item not in known]


def dataset_version(cases: list[Case]) -> str:
    digest = hashlib.sha256()
    for case in sorted(cases, key=lambda c: c.id):
        digest.update(case.id.encode() + b"\0" + case.content_hash().encode() + b"\n")
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class DatasetVersion:
    workspace: str
    name: str
    version: str
    git_revision: str
    description: str
    case_ids: list[str]
    case_hashes: list[str]
    pushed_by: str
    pushed_at: float

    @property
    def dataset(self) -> str:
        return f"{self.name}@{self.workspace}"

    def summary(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "name": self.name, "workspace": self.workspace, "version": self.version,
                "git_revision": self.git_revision or None, "cases": len(self.case_ids),
                "pushed_at": self.pushed_at, "pushed_by": self.pushed_by, "description": self.description}


@dataclass
class PushResult:
    version: DatasetVersion
    created: bool
    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


_VERSION_COLUMNS = ("workspace, name, version, git_revision, description, case_ids, case_hashes, pushed_by, "
                    "toUnixTimestamp64Milli(pushed_at)")


def _version(row: tuple[Any, ...]) -> DatasetVersion:
    return DatasetVersion(row[0], row[1], row[2], row[3], row[4], list(row[5]), list(row[6]), row[7], row[8] / 1000)


class Datasets:
    def __init__(self, store: Store) -> None:
        self.store = store

    def push(self, workspace: str, name: str, cases: list[Case], *, git_revision: str, description: str,
             by: str, now: float) -> PushResult:
        version = dataset_version(cases)
        previous = self.latest(workspace, name)
        hashes = [c.content_hash() for c in cases]
        if previous is not None and previous.version == version:
            return PushResult(previous, False)
        known = self._known_hashes(workspace, name, hashes)
        new = [(h, c) for h, c in zip(hashes, cases, strict=True) if h not in known]
        if new:
            self.store.insert("dataset_cases",
                              [[workspace] * len(new), [name] * len(new), [h for h, _ in new],
                               [c.id for _, c in new], [c.canonical() for _, c in new]],
                              ["workspace", "dataset", "case_hash", "case_id", "doc"])
        ids = [c.id for c in cases]
        self.store.insert("dataset_versions",
                          [[workspace], [name], [version], [git_revision], [description], [ids], [hashes], [by],
                           [int(now * 1000)]],
                          ["workspace", "name", "version", "git_revision", "description", "case_ids", "case_hashes",
                           "pushed_by", "pushed_at"])
        result = PushResult(DatasetVersion(workspace, name, version, git_revision, description, ids, hashes, by,
                                           now), True)
        before = dict(zip(previous.case_ids, previous.case_hashes, strict=True)) if previous else {}
        now_ids = dict(zip(ids, hashes, strict=True))
        result.added = [i for i in ids if i not in before]
        result.changed = [i for i in ids if i in before and before[i] != now_ids[i]]
        result.removed = sorted(set(before) - set(now_ids))
        return result

    def _known_hashes(self, workspace: str, name: str, hashes: list[str]) -> set[str]:
        rows = self.store.query("SELECT case_hash FROM dataset_cases WHERE workspace = {w:String} AND "
                                "dataset = {d:String} AND case_hash IN {h:Array(String)}",
                                {"w": workspace, "d": name, "h": hashes})
        return {r[0] for r in rows}

    def versions(self, workspace: str, name: str) -> list[DatasetVersion]:
        rows = self.store.query(f"SELECT {_VERSION_COLUMNS} FROM dataset_versions FINAL WHERE workspace = {{w:String}} "
                                "AND name = {n:String} ORDER BY pushed_at DESC", {"w": workspace, "n": name})
        return [_version(r) for r in rows]

    def versions_page(self, workspace: str, name: str, *, limit: int, after: tuple[int, str] | None = None,
                      offset: int = 0) -> list[DatasetVersion]:
        """At most `limit` versions, newest first (ties by version, so that the order is total), from after `after`
        (a page's last version's push time in milliseconds and version: a keyset cursor) or `offset`."""
        params: dict[str, Any] = {"w": workspace, "n": name, "l": limit, "o": offset}
        where = "workspace = {w:String} AND name = {n:String}"
        if after is not None:
            where += " AND (toUnixTimestamp64Milli(pushed_at), version) < ({ap:Int64}, {av:String})"
            params.update(ap=after[0], av=after[1])
        rows = self.store.query(f"SELECT {_VERSION_COLUMNS} FROM dataset_versions FINAL WHERE {where} "
                                "ORDER BY pushed_at DESC, version DESC LIMIT {l:UInt64} OFFSET {o:UInt64}", params)
        return [_version(r) for r in rows]

    def latest(self, workspace: str, name: str) -> DatasetVersion | None:
        found = self.versions(workspace, name)
        return found[0] if found else None

    def get(self, workspace: str, name: str, version: str | None) -> DatasetVersion | None:
        for v in self.versions(workspace, name):
            if version is None or v.version == version:
                return v
        return None

    def latest_of_each(self, workspaces: list[str] | None) -> list[DatasetVersion]:
        rows = self.store.query(
            f"SELECT {_VERSION_COLUMNS} FROM dataset_versions FINAL ORDER BY workspace, name, pushed_at DESC "
            "LIMIT 1 BY workspace, name")
        found = [_version(r) for r in rows]
        return [v for v in found if workspaces is None or v.workspace in workspaces]

    def cases(self, version: DatasetVersion) -> list[Case]:
        rows = self.store.query("SELECT case_hash, doc FROM dataset_cases FINAL WHERE workspace = {w:String} AND "
                                "dataset = {d:String} AND case_hash IN {h:Array(String)}",
                                {"w": version.workspace, "d": version.name, "h": version.case_hashes})
        docs = {r[0]: r[1] for r in rows}
        return [Case.model_validate_json(docs[h]) for h in version.case_hashes if h in docs]

    # -- reviews ------------------------------------------------------------------------
    def review(self, version: DatasetVersion, case_id: str, state: str, note: str, *, by: str, now: float,
               row_version: int) -> dict[str, Any]:
        if state not in REVIEW_STATES:
            raise DatasetError(f"review state {state!r} is not known; use one of {', '.join(REVIEW_STATES)}")
        if case_id not in version.case_ids:
            raise KeyError(case_id)
        case_hash = version.case_hashes[version.case_ids.index(case_id)]
        self.store.insert("case_reviews",
                          [[version.workspace], [version.name], [case_id], [case_hash], [state], [note], [by],
                           [int(now * 1000)], [row_version]],
                          ["workspace", "dataset", "case_id", "case_hash", "state", "note", "reviewer", "reviewed_at",
                           "version"])
        return {"dataset": version.dataset, "case_id": case_id, "state": state, "by": by, "at": now, "note": note}

    def reviews(self, version: DatasetVersion) -> dict[str, dict[str, Any]]:
        """case id → the review of the case's current content (pending when none)."""
        rows = self.store.query(
            "SELECT case_id, case_hash, state, note, reviewer, toUnixTimestamp64Milli(reviewed_at) FROM case_reviews "
            "FINAL WHERE workspace = {w:String} AND dataset = {d:String}", {"w": version.workspace, "d": version.name})
        by_key = {(r[0], r[1]): r for r in rows}
        out: dict[str, dict[str, Any]] = {}
        for case_id, case_hash in zip(version.case_ids, version.case_hashes, strict=True):
            r = by_key.get((case_id, case_hash))
            out[case_id] = ({"state": r[2], "note": r[3], "by": r[4], "at": r[5] / 1000} if r else
                            {"state": "pending", "note": "", "by": None, "at": None})
        return out
