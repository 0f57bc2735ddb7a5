"""docs/api.md says what the code does: its port, its evaluator examples, its archived-agent status."""

from __future__ import annotations

import json
import re
from pathlib import Path

from evalkit.scoring.evaluators import build_evaluator
from evalkit.settings import Settings

DOC = (Path(__file__).parents[2] / "docs" / "api.md").read_text()


def test_the_port_is_the_default_one() -> None:
    ports = re.findall(r"default `:(\d+)`", DOC)
    assert ports and all(int(p) == Settings().api_port for p in ports), ports


def test_evaluator_specs_in_the_doc_build() -> None:
    specs = re.findall(r'(\{"type": "(?:contains|regex|exact|http)"[^{}]*(?:\{[^{}]*\}[^{}]*)?\})', DOC)
    assert any('"contains"' in s for s in specs), specs
    for text in specs:
        spec = json.loads(text.replace("…", "x"))
        build_evaluator({"name": "doc", **spec})


def test_archived_agent_status() -> None:
    assert "refuses new experiments and keys\n(**409**" in DOC
