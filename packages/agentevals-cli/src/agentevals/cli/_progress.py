"""Progress while a run goes: a rich bar with counts and ETA on a terminal, plain lines with -v elsewhere.

While the input is still being read, the total is the engine's estimate and shows as ``~2000`` (the ETA
follows it); once the input has been read it is exact. With no estimate yet it shows as ``?``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any, Optional

import click

from ..engine.consumers import RunConsumer
from ..results import CaseResult, RunResult, Status, case_status

__all__ = ["PlainProgress", "RichProgress", "progress_consumer"]


def _of(done: int, total: Optional[int], estimated: bool) -> str:
    """``1043/~2000`` (an estimate), ``1043/2000`` (exact) or ``1043/?`` (unknown yet)."""
    return f"{done}/{'?' if total is None else ('~' if estimated else '') + str(total)}"


class RichProgress(RunConsumer):
    """``⠼ cases ━━━━━━╸━━━━ 1043/~2000 52% · 3 failed · elapsed 0:01:22 · ETA 0:01:15`` on stderr."""

    def __init__(self, *, color: bool, console: Any = None, reading: Optional[Callable[[], str]] = None) -> None:
        from rich.console import Console

        self.reading = reading
        """What the run is reading now (a backend source and its traces so far), "" when nothing to say."""
        self.console = console if console is not None else Console(stderr=True, no_color=not color)
        self.failed = self.done = 0
        self.total: Optional[int] = None
        self.estimated = False
        self.progress: Any = None
        self.task: Any = None

    def run_started(self, run: RunResult) -> None:
        from rich.progress import (
            BarColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            SpinnerColumn(), TextColumn("cases"), BarColumn(), TextColumn("{task.fields[count]}"),
            TaskProgressColumn(), TextColumn("· {task.fields[failed]} failed · elapsed"), TimeElapsedColumn(),
            TextColumn("· ETA"), TimeRemainingColumn(), *([_reading_column(self._reading)] if self.reading else []),
            console=self.console, transient=True)
        self.progress.start()
        self.task = self.progress.add_task("run", total=None, failed=0, count=_of(0, None, False))

    def cases_planned(self, total: int, estimated: bool) -> None:
        self.total, self.estimated = total, estimated
        self._update()

    def case_finished(self, index: int, case: CaseResult) -> None:
        self.done += 1
        if case_status(case) in (Status.FAILED, Status.ERROR):
            self.failed += 1
        self._update()

    def _update(self) -> None:
        if self.progress is not None:
            self.progress.update(self.task, completed=self.done, total=self.total, failed=self.failed,
                                 count=_of(self.done, self.total, self.estimated))

    def run_finished(self, run: RunResult) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None

    def _reading(self) -> str:
        return self.reading() if self.reading is not None and (self.total is None or self.estimated) else ""


def _reading_column(text: Callable[[], str]) -> Any:
    """A column of the bar that shows ``text()`` at each refresh (a backend source's reads come in without
    a known size: the bar says what is being read rather than stand still)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Reading(ProgressColumn):
        def render(self, task: Any) -> Text:
            said = text()
            return Text(f"· {said}" if said else "")

    return Reading()


class PlainProgress(RunConsumer):
    """``progress: 400/~2000 cases (20%), 3 failed, 41s elapsed, ~2m44s left`` at most every 10 s (CI logs).

    ``~`` before the total marks the engine's estimate (the input is still being read)."""

    def __init__(self, *, every: float = 10.0, reading: Optional[Callable[[], str]] = None) -> None:
        self.every = every
        self.reading = reading
        self.start = self.last = 0.0
        self.total: Optional[int] = None
        self.estimated = False
        self.done = self.failed = 0

    def run_started(self, run: RunResult) -> None:
        self.start = self.last = time.monotonic()

    def cases_planned(self, total: int, estimated: bool) -> None:
        self.total, self.estimated = total, estimated

    def case_finished(self, index: int, case: CaseResult) -> None:
        self.done += 1
        self.failed += case_status(case) in (Status.FAILED, Status.ERROR)
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            click.echo(self.line(now), err=True)

    def line(self, now: float) -> str:
        elapsed = now - self.start
        text = f"progress: {_of(self.done, self.total, self.estimated)} cases"
        if self.total:
            left = elapsed / self.done * max(0, self.total - self.done) if self.done else 0
            text += f" ({100 * min(self.done, self.total) // self.total}%)"
            text += f", {self.failed} failed, {_dur(elapsed)} elapsed, ~{_dur(left)} left"
        else:
            text += f", {self.failed} failed, {_dur(elapsed)} elapsed"
        said = self.reading() if self.reading is not None and (self.total is None or self.estimated) else ""
        return text + (f"; {said}" if said else "")


def _dur(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def progress_consumer(*, quiet: bool, verbose: int, color: bool,
                      reading: Optional[Callable[[], str]] = None) -> Optional[RunConsumer]:
    """A bar when stderr is a terminal (not with -q), plain lines with -v otherwise, else nothing.
    ``reading``: what the run is reading while the input is read (``reading jaeger+http://…: 40 traces``)."""
    if quiet:
        return None
    if sys.stderr.isatty():
        return RichProgress(color=color, reading=reading)
    if verbose >= 1:
        return PlainProgress(reading=reading)
    return None
