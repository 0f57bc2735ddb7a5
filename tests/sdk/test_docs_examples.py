"""docs/sdk.md's evalkit.yaml and case file are what a reader copies: they load as the SDK reads them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evalkit.sdk.config import load_project
from evalkit.sdk.datasets import read_dataset

DOC = (Path(__file__).parents[2] / "docs" / "sdk.md").read_text()
YAML_BLOCKS = re.findall(r"```yaml\n(.*?)```", DOC, re.S)


def _block(first_key: str) -> str:
    found = [b for b in YAML_BLOCKS if b.startswith(first_key)]
    assert len(found) == 1, f"docs/sdk.md has {len(found)} yaml block(s) starting {first_key!r}"
    return found[0]


def test_the_evalkit_yaml_example_loads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "SUPPORT_BOT_KEY", "GRADER_TOKEN"):
        monkeypatch.setenv(name, f"value-of-{name}")
    (tmp_path / "evalkit.yaml").write_text(_block("cases:"))
    project = load_project(tmp_path / "evalkit.yaml")
    assert project.cases_dir == tmp_path / "cases" and project.otlp_url == "http://127.0.0.1:4318"
    assert project.agent_key("support-bot@acme") == "value-of-SUPPORT_BOT_KEY"


def test_the_case_file_example_reads(tmp_path: Path) -> None:
    folder, fixtures = tmp_path / "cases" / "capitals", tmp_path / "fixtures"
    folder.mkdir(parents=True)
    fixtures.mkdir()
    (fixtures / "notes.txt").write_text("notes")
    (fixtures / "report.pdf").write_bytes(b"%PDF")
    (folder / "france.yaml").write_text(_block("id:"))
    case, = read_dataset(folder, fixtures_dir=fixtures).cases
    assert case.id == "capital-of-france"
    assert case.input == {"question": "What is the capital of France?"}
    assert [f.name for f in case.files] == ["notes.txt", "report.pdf"]
