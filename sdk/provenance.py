"""What an experiment records about where it came from: git revision, versions."""

from __future__ import annotations

import subprocess
from importlib import metadata
from pathlib import Path


def git_revision(folder: Path) -> str | None:
    """HEAD of the repository holding `folder`, with `-dirty` when the folder has uncommitted changes."""
    try:
        head = subprocess.run(["git", "-C", str(folder), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=5, check=False)
        if head.returncode != 0:
            return None
        dirty = subprocess.run(["git", "-C", str(folder), "status", "--porcelain", "--", "."], capture_output=True,
                               text=True, timeout=5, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    revision = head.stdout.strip()
    return revision + ("-dirty" if dirty.returncode == 0 and dirty.stdout.strip() else "")


def package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def versions() -> dict[str, str | None]:
    """evalkit's version and the price table's (genai-prices, when this install has it; the service's
    own is what prices the runs, and it records that too)."""
    return {"evalkit": package_version("evalkit"), "genai_prices": package_version("genai-prices")}
