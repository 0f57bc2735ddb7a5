"""evalkit: measure LLM agents.

The plain install is the thin SDK; these names are its public surface. The
service (`evalkit serve`) lives in modules this one never imports.

The names are imported on first use (PEP 562): `import evalkit.cli` or `evalkit serve` does not pay for
the SDK's imports (the OpenTelemetry SDK and exporter, aiohttp, rich), which made every CLI command start
a second later.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalkit.sdk import (
        Evaluation,
        ExperimentInterrupted,
        ExperimentResult,
        Fixture,
        JudgeSettings,
        LeaseBusy,
        LeaseLost,
        PythonEvaluator,
        RunResult,
        RunSummary,
        ScoringError,
        aevaluate_experiment,
        arun_experiment,
        evaluate_experiment,
        evaluator,
        run_experiment,
    )

# Every name of evalkit.sdk (docs/sdk.md: `import evalkit`), the errors a script catches included
# (tests/sdk/test_public_names.py holds the two lists equal).
__all__ = [
    "Evaluation",
    "ExperimentInterrupted",
    "ExperimentResult",
    "Fixture",
    "JudgeSettings",
    "LeaseBusy",
    "LeaseLost",
    "PythonEvaluator",
    "RunResult",
    "RunSummary",
    "ScoringError",
    "aevaluate_experiment",
    "arun_experiment",
    "evaluate_experiment",
    "evaluator",
    "run_experiment",
]


def __getattr__(name: str) -> Any:
    if name in __all__:
        import evalkit.sdk

        value = getattr(evalkit.sdk, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
