"""How to finish scoring an experiment: the one wording the service, the SDK, the CLI and the UI give.

`evalkit evaluate N` alone runs the service's evaluators only. A Python evaluator runs in the caller's process,
so the command names each one the experiment declared with `--evaluator module:name`, where it is loaded from as
recorded when the experiment was created (`code_evaluator_refs` of its config); `MODULE:name` when that is not
known (a function of a script run as `__main__`: loading that file would run the script again).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# What `evalkit evaluate --evaluator` loads: `package.module:attribute` or `path/to/file.py:attribute`.
# No spaces or backticks, so that a recorded one can be pasted into a command inside a message.
EVALUATOR_REF = re.compile(r"^[^\s`:]+:[A-Za-z_][A-Za-z0-9_.]*$")


def evaluate_command(experiment_id: int | str, python_evaluators: Mapping[str, str | None], *,
                     rescore: bool = False, partial: bool = False) -> str:
    """`evalkit evaluate N [--rescore] [--partial] [--evaluator module:name]…`: the command that scores what
    is left of experiment N, its Python evaluators (name → where it is loaded from, or None) included."""
    parts = [f"evalkit evaluate {experiment_id}"]
    if rescore:
        parts.append("--rescore")  # re-scoring stopped midway is finished by re-scoring: else scored runs are kept
    if partial:
        parts.append("--partial")
    return " ".join([*parts, *evaluator_flags(python_evaluators)])


def evaluator_flags(python_evaluators: Mapping[str, str | None]) -> list[str]:
    """`--evaluator module:name` for each Python evaluator (name → where it is loaded from, or None)."""
    return [f"--evaluator {ref if ref and EVALUATOR_REF.match(ref) else f'MODULE:{name}'}"
            for name, ref in python_evaluators.items()]


def finish_scoring_hint(experiment_id: int | str, python_evaluators: Mapping[str, str | None], *,
                        rescore: bool = False, partial: bool = False) -> str:
    """The command, then the SDK call that does the same (the CLI shows only the command, see cli_words)."""
    keywords = [f"experiment_id={experiment_id}"]
    if python_evaluators:
        keywords.append(f"evaluators=[{', '.join(python_evaluators)}]")
    if rescore:
        keywords.append("rescore=True")
    if partial:
        keywords.append("partial=True")
    return (f"`{evaluate_command(experiment_id, python_evaluators, rescore=rescore, partial=partial)}` or "
            f"`evaluate_experiment({', '.join(keywords)})`")


def python_evaluator_refs(config: Mapping[str, Any]) -> dict[str, str | None]:
    """The Python evaluators an experiment's config declares, each with where it is loaded from (or None)."""
    refs = config.get("code_evaluator_refs") or {}
    return {name: refs.get(name) for name in config.get("code_evaluators") or []}
