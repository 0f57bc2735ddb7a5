"""A dataset folder on disk: one file per case (YAML or JSON), fixtures beside them.

A case file:

```yaml
id: capital-of-france        # default: the file name without its extension
input: What is the capital of France?
expected: Paris
rubric: The answer names Paris.
tags: [smoke]                # splits
evaluators:                  # what the case asks for: a name or a spec
  - contains
  - {type: regex, pattern: "Paris"}
files:                       # fixtures, relative to `fixtures` in evalkit.yaml (or the dataset folder)
  - notes.txt
  - {name: report.pdf, context: the quarterly report}
```
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evalkit.sdk.config import ConfigError
from evalkit.sdk.provenance import git_revision

CASE_SUFFIXES = (".yaml", ".yml", ".json")


class FixtureRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    path: str | None = None
    context: str | None = None


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str | None = None
    input: Any
    expected: Any = None
    rubric: str | None = None
    tags: list[str] = Field(default_factory=list)
    evaluators: list[str | dict[str, Any]] = Field(default_factory=list)
    files: list[str | FixtureRef] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class LocalFixture(BaseModel):
    name: str
    path: Path
    context: str | None = None
    sha256: str
    size: int


class LocalCase(BaseModel):
    id: str
    input: Any
    expected: Any = None
    rubric: str | None = None
    tags: list[str] = Field(default_factory=list)
    evaluators: list[str | dict[str, Any]] = Field(default_factory=list)
    files: list[LocalFixture] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def wire(self, *, with_content: bool = False) -> dict[str, Any]:
        """The case as the service takes it; fixtures by content hash (and content when asked)."""
        files = []
        for f in self.files:
            entry: dict[str, Any] = {"name": f.name, "sha256": f.sha256, "size": f.size, "context": f.context}
            if with_content:
                entry["content_base64"] = base64.b64encode(f.path.read_bytes()).decode("ascii")
            files.append(entry)
        return {"id": self.id, "input": self.input, "expected": self.expected, "rubric": self.rubric,
                "tags": self.tags, "evaluators": self.evaluators, "files": files, "metadata": self.metadata}


class LocalDataset(BaseModel):
    name: str
    folder: Path
    cases: list[LocalCase]
    content_hash: str
    git_revision: str | None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fixture(ref: str | FixtureRef, folder: Path, fixtures_dir: Path | None, case_file: Path) -> LocalFixture:
    ref = FixtureRef(name=ref) if isinstance(ref, str) else ref
    relative = ref.path or ref.name
    candidates = [base / relative for base in (fixtures_dir, folder) if base is not None]
    for candidate in candidates:
        if candidate.is_file():
            return LocalFixture(name=ref.name, path=candidate.resolve(), context=ref.context,
                                sha256=_sha256(candidate), size=candidate.stat().st_size)
    looked = ", ".join(str(c) for c in candidates)
    raise ConfigError(f"{case_file}: fixture {relative!r} not found (looked in {looked})")


_FIXES = {
    "input": "every case needs `input:` (what the task is called with)",
    "tags": "write a list of words: `tags: [smoke, billing]`",
    "evaluators": "write a list of names or specs: `evaluators: [contains, {type: regex, pattern: Paris}]`",
    "files": "write a list of fixture names or `{name: ..., context: ...}`: `files: [notes.txt]`",
    "metadata": "write a mapping: `metadata: {owner: billing}`",
    "rubric": "write the rubric as text: `rubric: The answer names Paris.`",
    "id": "write the id as text (letters, digits, '.', '_' or '-'); by default it is the file name",
}


def case_file_problems(path: Path, exc: ValidationError) -> str:
    """`file: field: what is wrong; how to fix it`, one per problem: no raw pydantic dicts."""
    problems = []
    for error in exc.errors(include_url=False):
        field = ".".join(str(p) for p in error["loc"]) or "the case"
        top = str(error["loc"][0]) if error["loc"] else ""
        if error["type"] == "extra_forbidden":
            fix = (f"`{field}` is not a case field; the fields are {', '.join(CaseFile.model_fields)} "
                   "(put anything else under `metadata:`)")
        elif error["type"] == "missing":
            fix = _FIXES.get(top, f"`{field}` is required")
        else:
            fix = f"{error['msg'].lower()}; {_FIXES.get(top, 'see docs/sdk.md for the case file format')}"
        problems.append(f"{field}: {fix}")
    return f"case file {path}: " + "; ".join(problems)


def read_dataset(folder: Path, name: str | None = None, fixtures_dir: Path | None = None) -> LocalDataset:
    """Read every case file of a dataset folder; the content hash covers cases and fixture contents."""
    if not folder.is_dir():
        raise ConfigError(f"dataset folder {folder} does not exist")
    cases: list[LocalCase] = []
    seen: dict[str, Path] = {}
    for path in sorted(p for p in folder.iterdir() if p.suffix in CASE_SUFFIXES and p.is_file()):
        try:
            raw = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
        except (OSError, ValueError, yaml.YAMLError) as exc:
            raise ConfigError(f"case file {path} cannot be read as {'JSON' if path.suffix == '.json' else 'YAML'}: "
                              f"{exc}") from exc
        if not isinstance(raw, dict):
            raise ConfigError(f"case file {path}: a case is a mapping with at least `input:` (and optionally "
                              "id, expected, rubric, tags, evaluators, files, metadata); this file holds "
                              f"{type(raw).__name__ if raw is not None else 'nothing'}")
        try:
            parsed = CaseFile.model_validate(raw)
        except ValidationError as exc:
            raise ConfigError(case_file_problems(path, exc)) from exc
        case_id = parsed.id or path.stem
        if case_id in seen:
            raise ConfigError(f"case id {case_id!r} is in both {seen[case_id]} and {path}; ids must be unique")
        seen[case_id] = path
        files = [_fixture(ref, folder, fixtures_dir, path) for ref in parsed.files]
        cases.append(LocalCase(id=case_id, input=parsed.input, expected=parsed.expected, rubric=parsed.rubric,
                               tags=parsed.tags, evaluators=parsed.evaluators, files=files,
                               metadata=parsed.metadata))
    if not cases:
        raise ConfigError(f"dataset folder {folder} has no case files ({', '.join(CASE_SUFFIXES)})")
    canonical = json.dumps([c.wire() for c in cases], sort_keys=True, separators=(",", ":"), default=str)
    content_hash = "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()
    return LocalDataset(name=name or folder.name, folder=folder.resolve(), cases=cases, content_hash=content_hash,
                        git_revision=git_revision(folder))
