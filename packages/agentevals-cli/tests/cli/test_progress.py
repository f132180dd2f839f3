"""Progress on stderr: the rich bar on a terminal, plain lines with -v; an estimated total shows as ``~N``."""

from __future__ import annotations

import asyncio
import io
import re
import sys
import time
from pathlib import Path

from agentevals.api import prepare_run
from agentevals.cli._progress import PlainProgress, RichProgress
from agentevals.engine import run_evaluation
from agentevals.results import CaseResult, MetricResult, RunResult, Status

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.generate import replicate


def case(status: Status) -> CaseResult:
    metric = (MetricResult.errored("m", "boom") if status == Status.ERROR
              else MetricResult(name="m", status=status, score=1.0 if status == Status.PASSED else 0.0))
    return CaseResult(case_id="c", trace_ids=["t"], sources=["f.json"], metrics=[metric])


def test_plain_progress_shows_the_estimate_and_time_left_while_the_input_is_read(tmp_path, capsys):
    """A real run over 100 traces in 100 files: the lines printed while the input is read carry the
    estimated total (``/~100``) and a time left from it; at the end the total is exact."""
    inputs = [replicate(tmp_path / f"{k:03d}.json", 1, session_of=lambda i: None) for k in range(100)]
    evaluators, options, _ = prepare_run(metrics=["tool_trajectory_avg_score"], concurrency=1)
    progress = PlainProgress(every=0)
    run = asyncio.run(run_evaluation(inputs, evaluators, options=options, consumers=[progress]))
    lines = capsys.readouterr().err.splitlines()
    estimated = [line for line in lines if "/~" in line]
    assert estimated, lines[:5]
    assert all(re.fullmatch(r"progress: \d+/~\d+ cases \(\d+%\), \d+ failed, \d+s elapsed, ~\d+s left", line)
               for line in estimated), estimated[:3]
    assert len(run.cases) == 100 and (progress.total, progress.estimated) == (100, False)
    assert re.fullmatch(r"progress: 100/100 cases \(100%\), 0 failed, \d+s elapsed, ~0s left",
                        progress.line(time.monotonic()))


def test_plain_progress_without_a_total_says_so():
    progress = PlainProgress(every=3600)
    progress.run_started(RunResult())
    progress.case_finished(0, case(Status.FAILED))
    assert re.fullmatch(r"progress: 1/\? cases, 1 failed, \d+s elapsed", progress.line(time.monotonic()))


def rendered(console_file: io.StringIO) -> str:
    """What the terminal shows, control sequences dropped."""
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", console_file.getvalue())


def test_rich_progress_renders_unknown_estimated_then_exact_totals():
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=150, color_system=None)
    bar = RichProgress(color=False, console=console)
    bar.run_started(RunResult())
    bar.case_finished(0, case(Status.PASSED))
    bar.progress.refresh()
    assert "1/? " in rendered(out)

    bar.cases_planned(2000, True)
    for i in range(1, 1043):
        bar.case_finished(i, case(Status.ERROR if i % 400 == 0 else Status.PASSED))
    bar.progress.refresh()
    screen = rendered(out)
    assert re.search(r"cases .*1043/~2000 +52% · 2 failed · elapsed \d:\d\d:\d\d · ETA \d:\d\d:\d\d", screen), screen[-400:]

    bar.cases_planned(1100, False)
    bar.progress.refresh()
    assert re.search(r"1043/1100 +95% · 2 failed", rendered(out))
    bar.run_finished(RunResult())
    assert bar.progress is None
