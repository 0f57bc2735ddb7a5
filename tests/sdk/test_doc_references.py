"""Every Markdown file the SDK's docs and docstrings name exists: they pointed to "the contract: SDK.md", which no
version of the repository ever had."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# A file name ending in .md, with its folders when written with them (`docs/sdk.md`, `../SDK.md`).
MARKDOWN_NAME = re.compile(r"(?<![\w./-])((?:\.\./|[\w-]+/)*[\w-]+\.md)\b")


def _named_files(path: Path) -> list[str]:
    return MARKDOWN_NAME.findall(path.read_text(encoding="utf-8"))


def _exists(name: str, where: Path) -> bool:
    """Named from the repository's root, from the naming file's folder, or as a page of docs/."""
    return any((base / name).exists() for base in (ROOT, where.parent, ROOT / "docs"))


def test_the_markdown_files_the_sdk_names_exist() -> None:
    sources = [ROOT / "docs" / "sdk.md", *sorted((ROOT / "sdk").glob("*.py")), ROOT / "evalkit" / "__init__.py"]
    missing = [f"{path.relative_to(ROOT)} names {name}" for path in sources for name in _named_files(path)
               if not _exists(name, path)]
    assert missing == []
