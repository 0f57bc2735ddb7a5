"""Syncing a local dataset folder to the service: fixture blobs first, then the cases."""

from __future__ import annotations

import asyncio
from typing import Any

from evalkit.sdk.datasets import LocalDataset
from evalkit.sdk.service import Service, dataset_workspace


async def sync_dataset(service: Service, local: LocalDataset, dataset: str, description: str = "", *,
                       python_evaluators: list[str] | None = None) -> dict[str, Any]:
    """Put the fixtures the service lacks, push the cases; the push answer (version, added, changed, …).

    `python_evaluators` are the names of the Python evaluators that will score the cases: given, the
    service refuses a case naming an evaluator it does not know and that is not one of these."""
    workspace = dataset_workspace(dataset)
    blobs = {f.sha256: f.path for case in local.cases for f in case.files}

    async def put(sha256: str) -> None:
        if not await service.has_blob(workspace, sha256):
            await service.put_blob(workspace, sha256, await asyncio.to_thread(blobs[sha256].read_bytes))

    await asyncio.gather(*(put(sha) for sha in blobs))
    body: dict[str, Any] = {"cases": [case.wire() for case in local.cases],
                            "description": description or f"synced from {local.folder}",
                            "git_revision": local.git_revision}
    if python_evaluators is not None:
        body["python_evaluators"] = sorted(python_evaluators)
    return await service.push_dataset(dataset, body)
