"""The thin client: run_experiment and friends, over HTTP (its reference: docs/sdk.md)."""

from evalkit.sdk.evaluators import Evaluation, PythonEvaluator, evaluator
from evalkit.sdk.experiments import aevaluate_experiment, evaluate_experiment
from evalkit.sdk.interrupt import ExperimentInterrupted
from evalkit.sdk.lease import LeaseBusy, LeaseLost
from evalkit.sdk.models import ExperimentResult, Fixture, JudgeSettings, RunResult, RunSummary
from evalkit.sdk.runner import arun_experiment, run_experiment
from evalkit.sdk.scoring import ScoringError

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
