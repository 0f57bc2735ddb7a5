"""The files of a case as `Fixture`s with local paths: from the dataset folder, or fetched from the service."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

from evalkit.sdk.datasets import LocalDataset
from evalkit.sdk.models import Fixture
from evalkit.sdk.service import Service


def cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "evalkit" / "blobs"


class FixtureCache:
    def __init__(self, service: Service, workspace: str, local: LocalDataset | None) -> None:
        self.service = service
        self.workspace = workspace
        self.local_paths: dict[str, Path] = {}
        if local is not None:
            for case in local.cases:
                for f in case.files:
                    self.local_paths[f.sha256] = f.path

    async def path_of(self, sha256: str) -> Path:
        if sha256 in self.local_paths:
            return self.local_paths[sha256]
        target = cache_dir() / sha256[:2] / sha256
        if target.is_file():
            return target
        content = await self.service.get_blob(self.workspace, sha256)
        if hashlib.sha256(content).hexdigest() != sha256:
            raise RuntimeError(f"blob {sha256} from {self.service.url} does not match its hash; fetch it again")
        target.parent.mkdir(parents=True, exist_ok=True)
        partial = target.with_suffix(f".{os.getpid()}.part")
        partial.write_bytes(content)
        partial.replace(target)
        self.local_paths[sha256] = target
        return target

    async def for_case(self, case: dict[str, Any]) -> list[Fixture]:
        fixtures = []
        for f in case.get("files") or []:
            path = await self.path_of(str(f["sha256"]))
            fixtures.append(Fixture(name=str(f["name"]), path=path, context=f.get("context")))
        return fixtures
