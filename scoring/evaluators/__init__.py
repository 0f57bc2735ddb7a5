"""Evaluators: built-in checks, HTTP evaluators and the LLM judge."""

from .base import Evaluation, EvaluationInput, Evaluator, EvaluatorConfig, EvaluatorConfigError, TokenUsage
from .registry import EVALUATOR_TYPES, EvaluatorSpec, build_evaluator

__all__ = [
    "EVALUATOR_TYPES",
    "Evaluation",
    "EvaluationInput",
    "Evaluator",
    "EvaluatorConfig",
    "EvaluatorConfigError",
    "EvaluatorSpec",
    "TokenUsage",
    "build_evaluator",
]
