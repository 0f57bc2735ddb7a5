"""Progress of an experiment: a live bar on a terminal, one plain line per finished run elsewhere."""

from __future__ import annotations

import sys
import time
from typing import IO, Any

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TaskID, TextColumn, TimeRemainingColumn
from rich.text import Text


def run_line(case_id: str, repetition: int, status: str, trajectory_status: str | None,
             note: str | None = None) -> str:
    line = f"{case_id} #{repetition} {status} ({trajectory_status or 'no trajectory'})"
    return f"{line} {note}" if note else line


class _Counts(ProgressColumn):
    def render(self, task: Task) -> Text:
        f = task.fields
        cost = f.get("cost_text", "")
        return Text(f"done {f['done']}  failed {f['failed']}  running {f['running']}  {cost}")


class ProgressReport:
    """What the runner tells the user while it runs. `live` is a rich bar; otherwise plain lines."""

    def __init__(self, stream: IO[str] | None = None, live: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.live = self.stream.isatty() if live is None else live
        self.console = Console(file=self.stream, force_terminal=self.live or None, soft_wrap=True,
                               highlight=False)
        self.done = self.failed = self.running = 0
        self.cost_usd = 0.0
        self.cost_unknown = False
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self.started = time.monotonic()

    def say(self, text: str) -> None:
        """A line of its own, above the bar when there is one."""
        if self._progress is not None:
            self._progress.console.print(text, markup=False, highlight=False)
        else:
            print(text, file=self.stream, flush=True)

    def start(self, total: int, title: str) -> None:
        self.say(title)
        if self.live:
            self._progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(), _Counts(),
                                      TextColumn("ETA"), TimeRemainingColumn(), console=self.console,
                                      transient=False)
            self._task = self._progress.add_task("runs", total=total, **self._fields())
            self._progress.start()

    def _fields(self) -> dict[str, Any]:
        if self.cost_unknown:
            cost = f"cost ≥ ${self.cost_usd:.4f} (some unpriced)"
        else:
            cost = f"cost ${self.cost_usd:.4f}"
        return {"done": self.done, "failed": self.failed, "running": self.running, "cost_text": cost}

    def _refresh(self, advance: int = 0) -> None:
        if self._progress is not None and self._task is not None:
            self._progress.update(self._task, advance=advance, **self._fields())

    def run_started(self) -> None:
        self.running += 1
        self._refresh()

    def run_finished(self, case_id: str, repetition: int, status: str, trajectory_status: str | None,
                     cost_usd: float | None, priced: bool = True, note: str | None = None) -> None:
        self.running = max(0, self.running - 1)
        self.done += 1
        if status != "completed":
            self.failed += 1
        if cost_usd is not None:
            self.cost_usd += cost_usd
        if not priced:
            self.cost_unknown = True
        line = run_line(case_id, repetition, status, trajectory_status, note)
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False)
            self._refresh(advance=1)
        else:
            print(line, file=self.stream, flush=True)

    def run_retrying(self, case_id: str, repetition: int, attempt: int, error: str | None, delay: float) -> None:
        self.say(f"{case_id} #{repetition} attempt {attempt} failed ({error}); retrying in {delay:.1f}s")

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
