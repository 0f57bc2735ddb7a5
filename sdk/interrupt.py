"""Ctrl-C in the SDK's blocking calls (`run_experiment`, `evaluate_experiment`): the call has said how to go on,
then the script ends with status 130 and no KeyboardInterrupt traceback."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

# What a process stopped by SIGINT conventionally exits with (128 + 2): shells and CI read it as "interrupted".
INTERRUPTED_STATUS = 130


class ExperimentInterrupted(SystemExit, KeyboardInterrupt):
    """Ctrl-C stopped `run_experiment` or `evaluate_experiment`. Uncaught, it ends the script with status 130 and
    no traceback (a SystemExit); `except KeyboardInterrupt` still catches it, as it caught the plain interrupt."""


def run_blocking(name: str, main: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine `main()` of the async twin `a<name>` to its end, for a script without an event loop.

    Refused inside a running loop (Jupyter, an async app), naming the twin. On Ctrl-C, asyncio.run cancels the
    coroutine, which says how to go on (resume, or finish scoring) as it unwinds; the KeyboardInterrupt that
    asyncio.run raises after that would print its traceback under that line, so it becomes ExperimentInterrupted.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise RuntimeError(f"{name} was called inside a running event loop (Jupyter, an async app); use "
                           f"`await evalkit.a{name}(...)` there: same arguments, async")
    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        raise ExperimentInterrupted(INTERRUPTED_STATUS) from None
