"""Calling the user's task: which arguments it gets (by parameter name) and what its return value means."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evalkit.sdk.models import Fixture, RunResult

KNOWN_PARAMETERS = ("input", "files", "model", "metadata")
PROTOCOL = "task protocol violation"


class BindingError(TypeError):
    """The task's signature cannot be served; raised before anything runs."""


@dataclass(frozen=True)
class TaskCall:
    """What one call hands the task."""

    input: Any
    files: list[Fixture]
    model: str | None
    metadata: dict[str, Any]


@dataclass
class Outcome:
    """What one call of the task came to, before the service sees it."""

    status: str  # completed, failed, timeout
    answer: str | None = None
    output: Any = None
    model: str | None = None
    error: str | None = None
    session_id: str | None = None
    trajectory: dict[str, Any] | None = None


class BoundTask:
    """A task function with its parameters resolved once, called many times."""

    def __init__(self, task: Callable[..., Any]) -> None:
        if not callable(task):
            raise BindingError(f"task must be a function, got {type(task).__name__}")
        self.task = task
        self.name = getattr(task, "__qualname__", getattr(task, "__name__", repr(task)))
        self.is_async = inspect.iscoroutinefunction(task) or inspect.iscoroutinefunction(
            getattr(task, "__call__", None))  # noqa: B004 - a callable object with an async __call__
        self.parameters = self._resolve(task)

    def _resolve(self, task: Callable[..., Any]) -> dict[str, str]:
        """Map each parameter of the task to the value it receives."""
        try:
            signature = inspect.signature(task)
        except (TypeError, ValueError) as exc:
            raise BindingError(f"cannot read the signature of task {self.name}: {exc}") from exc
        params = [p for p in signature.parameters.values()
                  if p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
        takes_kwargs = any(p.kind == inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
        if len(params) == 1 and params[0].name not in KNOWN_PARAMETERS:
            return {params[0].name: "input"}
        binding: dict[str, str] = {}
        unknown: list[str] = []
        for p in params:
            if p.name in KNOWN_PARAMETERS:
                binding[p.name] = p.name
            elif p.default is inspect.Parameter.empty:
                unknown.append(p.name)
        if unknown:
            raise BindingError(
                f"task {self.name} has parameters evalkit cannot fill: {', '.join(unknown)}. "
                f"Name them {', '.join(KNOWN_PARAMETERS)} (or give them defaults); a task with a single "
                "parameter of another name receives the case input")
        if takes_kwargs:
            for name in KNOWN_PARAMETERS:
                binding.setdefault(name, name)
        return binding

    @property
    def takes_model(self) -> bool:
        return "model" in self.parameters.values()

    def arguments(self, call: TaskCall) -> dict[str, Any]:
        values = {"input": call.input, "files": list(call.files), "model": call.model,
                  "metadata": dict(call.metadata)}
        return {param: values[source] for param, source in self.parameters.items()}

    async def invoke(self, call: TaskCall, timeout: float | None) -> Outcome:
        """Call the task once; never raises for the task's own failures (they become the outcome)."""
        kwargs = self.arguments(call)

        async def attempt() -> Outcome:
            # The task's own exceptions (a TimeoutError of its HTTP client included) are caught in here,
            # so that only our deadline below counts as a `timeout` run.
            try:
                if self.is_async:
                    value = await self.task(**kwargs)
                else:
                    # A sync task runs in a thread so that tasks overlap and a timeout can be noticed.
                    value = await in_daemon_thread(self.task, kwargs)
                if inspect.isawaitable(value):
                    # A sync function that returned a coroutine (e.g. a lambda around an async call).
                    value = await value
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                return Outcome("failed", error=describe_exception(exc))
            return interpret(value, call.model)

        if timeout is None:
            return await attempt()
        try:
            return await asyncio.wait_for(attempt(), timeout)
        except TimeoutError:
            return Outcome("timeout", error=f"timeout: the task did not return within {timeout:g}s")


async def in_daemon_thread(fn: Callable[..., Any], kwargs: dict[str, Any]) -> Any:
    """`fn(**kwargs)` in a daemon thread of its own, with the caller's context (so the task's spans nest
    under the root span), awaited.

    Not `asyncio.to_thread`: its pool's threads are joined when the event loop and the interpreter end, so
    after Ctrl-C (or a timeout) a task stuck in a call Python cannot interrupt kept the process alive until it
    returned. A daemon thread ends with the process; the runs already recorded are on the service."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[Any] = loop.create_future()
    context = contextvars.copy_context()

    def settle(outcome: Callable[[], None]) -> None:
        if not done.done():  # cancelled meanwhile (Ctrl-C, a timeout): nobody waits for it any more
            outcome()

    def work() -> None:
        try:
            value = context.run(fn, **kwargs)
        except BaseException as exc:  # handed to the awaiting coroutine, which decides
            error = exc
            try:
                loop.call_soon_threadsafe(settle, lambda: done.set_exception(error))
            except RuntimeError:
                pass  # the loop is closed: the process is ending
        else:
            try:
                loop.call_soon_threadsafe(settle, lambda: done.set_result(value))
            except RuntimeError:
                pass

    threading.Thread(target=work, name="evalkit-task", daemon=True).start()
    return await done


def describe_exception(exc: BaseException) -> str:
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def interpret(value: Any, model: str | None = None) -> Outcome:
    """What a task's return value means: a str answer, a dict output, or a RunResult."""
    if isinstance(value, RunResult):
        result = value
    elif isinstance(value, str):
        return Outcome("completed", answer=value, model=model)
    elif isinstance(value, dict):
        try:
            json.dumps(value)
        except (TypeError, ValueError) as exc:
            return Outcome("failed", error=f"{PROTOCOL}: the returned dict is not JSON-serialisable ({exc})")
        return Outcome("completed", output=value, model=model)
    else:
        return Outcome("failed", error=f"{PROTOCOL}: the task returned {type(value).__name__}; return a str "
                                       "(the answer), a dict (structured output) or an evalkit.RunResult")
    if result.answer is None and result.output is None and result.error is None:
        return Outcome("failed", error=f"{PROTOCOL}: the RunResult has none of answer, output or error",
                       session_id=result.session_id)
    return Outcome("failed" if result.error is not None else "completed", answer=result.answer,
                   output=result.output, model=result.model or model, error=result.error,
                   session_id=result.session_id, trajectory=result.trajectory)
