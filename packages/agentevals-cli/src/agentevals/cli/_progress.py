"""Progress while a run goes: a rich bar with counts and ETA on a terminal, plain lines with -v elsewhere."""

from __future__ import annotations

import sys
import time
from typing import Any, Optional

import click

from ..consumers import RunConsumer
from ..results import CaseResult, RunResult, Status, case_status

__all__ = ["PlainProgress", "RichProgress", "progress_consumer"]


class RichProgress(RunConsumer):
    """``⠼ cases ━━━━━━╸━━━━ 1043/2000 52% · 3 failed · elapsed 0:01:22 · ETA 0:01:15`` on stderr."""

    def __init__(self, *, color: bool) -> None:
        from rich.console import Console

        self.console = Console(stderr=True, no_color=not color)
        self.failed = 0
        self.progress: Any = None
        self.task: Any = None

    def run_started(self, run: RunResult) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            SpinnerColumn,
            TaskProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.progress = Progress(
            SpinnerColumn(), TextColumn("cases"), BarColumn(), MofNCompleteColumn(), TaskProgressColumn(),
            TextColumn("· {task.fields[failed]} failed · elapsed"), TimeElapsedColumn(), TextColumn("· ETA"),
            TimeRemainingColumn(), console=self.console, transient=True)
        self.progress.start()
        self.run = run
        self.task = self.progress.add_task("run", total=run._planned, failed=0)

    def case_finished(self, index: int, case: CaseResult) -> None:
        if case_status(case) in (Status.FAILED, Status.ERROR):
            self.failed += 1
        if self.progress is not None:
            # The streaming engine knows the number of cases once the input is read.
            self.progress.update(self.task, advance=1, failed=self.failed, total=self.run._planned)

    def run_finished(self, run: RunResult) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


class PlainProgress(RunConsumer):
    """``progress: 400/2000 cases (20%), 3 failed, 41s elapsed, ~2m44s left`` at most every 10 s (CI logs)."""

    def __init__(self, *, every: float = 10.0) -> None:
        self.every = every
        self.start = self.last = 0.0
        self.total: Optional[int] = None
        self.done = self.failed = 0

    def run_started(self, run: RunResult) -> None:
        self.start = self.last = time.monotonic()
        self.run = run

    def case_finished(self, index: int, case: CaseResult) -> None:
        self.total = self.run._planned
        self.done += 1
        self.failed += case_status(case) in (Status.FAILED, Status.ERROR)
        now = time.monotonic()
        if now - self.last >= self.every:
            self.last = now
            click.echo(self.line(now), err=True)

    def line(self, now: float) -> str:
        elapsed = now - self.start
        text = f"progress: {self.done}"
        if self.total:
            left = elapsed / self.done * (self.total - self.done) if self.done else 0
            text += f"/{self.total} cases ({100 * self.done // self.total}%)"
            text += f", {self.failed} failed, {_dur(elapsed)} elapsed, ~{_dur(left)} left"
        else:
            text += f" cases, {self.failed} failed, {_dur(elapsed)} elapsed"
        return text


def _dur(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


def progress_consumer(*, quiet: bool, verbose: int, color: bool) -> Optional[RunConsumer]:
    """A bar when stderr is a terminal (not with -q), plain lines with -v otherwise, else nothing."""
    if quiet:
        return None
    if sys.stderr.isatty():
        return RichProgress(color=color)
    if verbose >= 1:
        return PlainProgress()
    return None
