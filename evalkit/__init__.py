"""evalkit: measure LLM agents.

The plain install is the thin SDK; these names are its public surface. The
service (`evalkit serve`) lives in modules this one never imports.
"""

from evalkit.sdk import (
    Evaluation,
    ExperimentResult,
    Fixture,
    RunResult,
    RunSummary,
    aevaluate_experiment,
    arun_experiment,
    evaluate_experiment,
    evaluator,
    run_experiment,
)

__all__ = [
    "Evaluation",
    "ExperimentResult",
    "Fixture",
    "RunResult",
    "RunSummary",
    "aevaluate_experiment",
    "arun_experiment",
    "evaluate_experiment",
    "evaluator",
    "run_experiment",
]
