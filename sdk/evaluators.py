"""Python evaluators: `@evaluator` functions run in the SDK's process; their results go to the service."""

from __future__ import annotations

import inspect
import math
import sys
from collections.abc import Callable
from typing import Any, overload

from pydantic import BaseModel, ConfigDict, Field

from evalkit.sdk.binding import describe_exception, in_daemon_thread

EVALUATOR_PARAMETERS = ("input", "answer", "output", "expected", "rubric", "trajectory", "metadata", "run")


class Evaluation(BaseModel):
    """One verdict on one run (the fields of docs/evaluators.md)."""

    model_config = ConfigDict(extra="forbid")

    score: float | None = None
    passed: bool | None = None
    label: str | None = None
    explanation: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


class PythonEvaluator:
    """A function that judges a run. Its parameters bind by name: input, answer, output, expected,
    rubric, trajectory (ATIF dict or None), metadata (case_id, repetition, experiment_id, session_id,
    tags), run (everything the service sent)."""

    def __init__(self, fn: Callable[..., Any], name: str | None = None, version: str = "1") -> None:
        self.fn = fn
        self.name = name or fn.__name__
        self.version = version
        self.is_async = inspect.iscoroutinefunction(fn)
        signature = inspect.signature(fn)
        self.takes_all = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
        self.parameters = [p.name for p in signature.parameters.values()
                           if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
        unknown = [p.name for p in signature.parameters.values()
                   if p.name not in EVALUATOR_PARAMETERS and p.default is inspect.Parameter.empty
                   and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
        if unknown:
            raise TypeError(f"evaluator {self.name} has parameters evalkit cannot fill: {', '.join(unknown)}; "
                            f"use any of {', '.join(EVALUATOR_PARAMETERS)}")
        self.__name__ = self.name
        self.__doc__ = fn.__doc__
        # Where `evalkit evaluate --evaluator` loads it from: the CLI sets the spec it loaded (see `ref`).
        self.source: str | None = None

    @property
    def ref(self) -> str | None:
        """`module:attribute` that loads this evaluator again, recorded on the experiment so that every "finish
        scoring with …" names it; None when not known: a function of a script run as `__main__` (loading that
        file would run the script again) or one that is no module's attribute (defined inside a function)."""
        if self.source:
            return self.source
        module_name = getattr(self.fn, "__module__", None)
        module = sys.modules.get(module_name) if module_name and module_name != "__main__" else None
        for attribute in dict.fromkeys((self.fn.__name__, self.name)):
            if module is not None and getattr(module, attribute, None) is self:
                return f"{module_name}:{attribute}"
        return None

    def __repr__(self) -> str:
        return f"<evaluator {self.name}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        # Still callable as the plain function, e.g. in the user's own unit tests.
        return self.fn(*args, **kwargs)

    async def judge(self, values: dict[str, Any]) -> Evaluation:
        names = EVALUATOR_PARAMETERS if self.takes_all else self.parameters
        kwargs = {name: values.get(name) for name in names if name in EVALUATOR_PARAMETERS}
        try:
            if self.is_async:
                result = await self.fn(**kwargs)
            else:
                # A daemon thread, as for tasks: after Ctrl-C a slow evaluator (a model call, a sleep) does not
                # keep the process alive until it returns, as asyncio.to_thread's joined pool did.
                result = await in_daemon_thread(self.fn, kwargs)
        except Exception as exc:
            return Evaluation(error=describe_exception(exc))
        return as_evaluation(result, self.name)


def as_evaluation(result: Any, name: str) -> Evaluation:
    """bool → pass/fail; a number → a score; a dict or an Evaluation → as given."""
    if isinstance(result, Evaluation):
        return result
    if isinstance(result, bool):
        return Evaluation(score=1.0 if result else 0.0, passed=result)
    if isinstance(result, int | float):
        if not math.isfinite(result):
            return Evaluation(error=f"evaluator {name} returned {result}, not a finite number")
        return Evaluation(score=float(result))
    if isinstance(result, dict):
        try:
            evaluation = Evaluation.model_validate(result)
        except ValueError as exc:
            return Evaluation(error=f"evaluator {name} returned a dict outside the contract: {exc}")
        if evaluation.passed is not None and evaluation.score is None:
            evaluation.score = 1.0 if evaluation.passed else 0.0
        if evaluation.score is None and evaluation.passed is None and evaluation.error is None:
            return Evaluation(error=f"evaluator {name} returned a dict with neither score nor passed")
        return evaluation
    return Evaluation(error=f"evaluator {name} returned {type(result).__name__}; return a bool, a number, "
                            "a dict (score, passed, label, explanation, metadata) or an evalkit Evaluation")


@overload
def evaluator(fn: Callable[..., Any], /) -> PythonEvaluator: ...


@overload
def evaluator(*, name: str | None = None, version: str = "1") -> Callable[[Callable[..., Any]], PythonEvaluator]: ...


def evaluator(fn: Callable[..., Any] | None = None, /, *, name: str | None = None, version: str = "1") -> Any:
    """Make a function a Python evaluator: `@evaluator` or `@evaluator(name="...", version="2")`."""
    if fn is not None:
        return PythonEvaluator(fn)

    def wrap(f: Callable[..., Any]) -> PythonEvaluator:
        return PythonEvaluator(f, name=name, version=version)

    return wrap
