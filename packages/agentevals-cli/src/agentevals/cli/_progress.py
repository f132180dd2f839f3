"""Progress while a run goes: a rich bar with counts and ETA on a terminal, plain lines with -v elsewhere.

While the input is still being read, the total is the engine's estimate and shows as ``~2000`` (the ETA
follows it); once the input has been read it is exact. With no estimate yet it shows as ``?``. Until a first
case has finished (conversations wait for the end of the input: a later trace may join them), the display
says what it waits for, ``reading traces: 812 read, 41 of 98 MB; 203 conversations are scored when the input
ends``, and its ETA is the time left to read the input at the rate read so far.
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


def _mb(done: int, total: int) -> str:
    """``41 of 98 MB``; tenths under 10 MB."""
    digits = 1 if total < 10_000_000 else 0
    return f"{done / 1e6:.{digits}f} of {total / 1e6:.{digits}f} MB"


def _clock(seconds: float) -> str:
    """``0:01:15``, as rich's time columns."""
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}"


class _Reading:
    """How far the input has been read (``RunConsumer.input_read``), for the time before a first case finishes."""

    def __init__(self, size: Optional[Callable[[], int]]) -> None:
        self.size = size
        """What the inputs weigh in bytes (0: not known yet); None when they are not all files."""
        self.traces = self.waiting = 0
        self.fraction: Optional[float] = None
        self.start = time.monotonic()

    def read(self, traces: int, fraction: float, waiting: int) -> None:
        self.traces, self.fraction, self.waiting = traces, fraction, waiting

    def text(self) -> str:
        """``reading traces: 812 read, 41 of 98 MB; 203 conversations are scored when the input ends``."""
        if self.fraction is None:
            return ""
        total = self.size() if self.size is not None else 0
        where = _mb(round(self.fraction * total), total) if total > 1 else f"{100 * self.fraction:.0f}% of the input"
        text = f"reading traces: {self.traces} read, {where}"
        if self.waiting:
            text += (f"; {self.waiting} conversation{'s are' if self.waiting != 1 else ' is'} scored when the "
                     "input ends")
        return text

    def left(self, now: float) -> Optional[float]:
        """Seconds until the input is read, at the rate it has been read so far (None: nothing read yet)."""
        if not self.fraction:
            return None
        return (now - self.start) * max(0.0, 1.0 - self.fraction) / self.fraction


class RichProgress(RunConsumer):
    """``⠼ cases ━━━━━━╸━━━━ 1043/~2000 52% · 3 failed · elapsed 0:01:22 · ETA 0:01:15`` on stderr."""

    def __init__(self, *, color: bool, console: Any = None, reading: Optional[Callable[[], str]] = None,
                 size: Optional[Callable[[], int]] = None) -> None:
        from rich.console import Console

        self.reading = reading
        """What the run is reading now (a backend source and its traces so far), "" when nothing to say."""
        self.input = _Reading(size)
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
            TextColumn("· ETA"), _eta_column(TimeRemainingColumn(), self._left), _reading_column(self._reading),
            console=self.console, transient=True)
        self.input.start = time.monotonic()
        self.progress.start()
        self.task = self.progress.add_task("run", total=None, failed=0, count=_of(0, None, False))

    def cases_planned(self, total: int, estimated: bool) -> None:
        self.total, self.estimated = total, estimated
        self._update()

    def input_read(self, traces: int, fraction: float, waiting: int) -> None:
        self.input.read(traces, fraction, waiting)

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

    def _waiting(self) -> bool:
        """No case has finished and the input is still being read."""
        return self.done == 0 and (self.total is None or self.estimated)

    def _reading(self) -> str:
        if not (self.total is None or self.estimated):
            return ""
        said = self.reading() if self.reading is not None else ""
        return said or (self.input.text() if self.done == 0 else "")

    def _left(self) -> Optional[float]:
        """The ETA while no case has finished: the time left to read the input (None: rich's own)."""
        return self.input.left(time.monotonic()) if self._waiting() else None


def _eta_column(cases: Any, reading: Callable[[], Optional[float]]) -> Any:
    """The ETA: ``reading()`` seconds while it has one (the input being read, no case finished yet), else
    rich's estimate from the cases done (``cases``, a ``TimeRemainingColumn``)."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class Eta(ProgressColumn):
        def render(self, task: Any) -> Text:
            left = reading()
            return cases.render(task) if left is None else Text(_clock(left), style="progress.remaining")

    return Eta()


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

    def __init__(self, *, every: float = 10.0, reading: Optional[Callable[[], str]] = None,
                 size: Optional[Callable[[], int]] = None) -> None:
        self.every = every
        self.reading = reading
        self.input = _Reading(size)
        self.start = self.last = 0.0
        self.total: Optional[int] = None
        self.estimated = False
        self.done = self.failed = 0

    def run_started(self, run: RunResult) -> None:
        self.start = self.last = self.input.start = time.monotonic()

    def cases_planned(self, total: int, estimated: bool) -> None:
        self.total, self.estimated = total, estimated

    def input_read(self, traces: int, fraction: float, waiting: int) -> None:
        """Before the first case finishes, a line at most every ``every`` seconds says how far the reading is."""
        self.input.read(traces, fraction, waiting)
        now = time.monotonic()
        if self.done == 0 and now - self.last >= self.every:
            self.last = now
            click.echo(self.line(now), err=True)

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
        reading = self.total is None or self.estimated
        if reading and self.done == 0 and self.input.fraction is not None:  # waiting for the input to be read
            said = (self.reading() if self.reading is not None else "") or self.input.text()
            left = self.input.left(now)
            text += f", 0 failed, {_dur(elapsed)} elapsed" + (f", ~{_dur(left)} left to read" if left is not None else "")
            return f"{text}; {said}"
        if self.total:
            left = elapsed / self.done * max(0, self.total - self.done) if self.done else 0
            text += f" ({100 * min(self.done, self.total) // self.total}%)"
            text += f", {self.failed} failed, {_dur(elapsed)} elapsed, ~{_dur(left)} left"
        else:
            text += f", {self.failed} failed, {_dur(elapsed)} elapsed"
        said = self.reading() if self.reading is not None and reading else ""
        return text + (f"; {said}" if said else "")


def _dur(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def progress_consumer(*, quiet: bool, verbose: int, color: bool, reading: Optional[Callable[[], str]] = None,
                      size: Optional[Callable[[], int]] = None) -> Optional[RunConsumer]:
    """A bar when stderr is a terminal (not with -q), plain lines with -v otherwise, else nothing.
    ``reading``: what the run is reading while the input is read (``reading jaeger+http://…: 40 traces``);
    ``size``: what the input files weigh in bytes (0 until known), for ``X of Y MB`` before a first case."""
    if quiet:
        return None
    if sys.stderr.isatty():
        return RichProgress(color=color, reading=reading, size=size)
    if verbose >= 1:
        return PlainProgress(reading=reading, size=size)
    return None
