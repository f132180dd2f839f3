"""Progress on stderr: the rich bar on a terminal, plain lines with -v; an estimated total shows as ``~N``; while
no case has finished, what the run waits for (the input being read) and an ETA from the bytes read."""

from __future__ import annotations

import asyncio
import io
import re
import sys
import time
from pathlib import Path

import pytest
from agentevals.api import prepare_run
from agentevals.cli import _progress
from agentevals.cli._main import cli
from agentevals.cli._progress import PlainProgress, RichProgress
from agentevals.engine import _Planner, run_evaluation
from agentevals.results import CaseResult, MetricResult, RunResult, Status
from agentevals.trace_sources import ReadContext
from agentevals.traces.readers import _stream
from click.testing import CliRunner

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
    estimated = [line for line in lines if "/~" in line and "reading traces" not in line]
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


READING = (r"progress: 0/(\?|~\d+) cases, 0 failed, \d+s elapsed(, ~\d+s left to read)?; reading traces: (\d+) read, "
           r"([\d.]+) of {mb} MB; (\d+) conversations? (are|is) scored when the input ends")


def conversations(tmp_path: Path) -> Path:
    """100 helm traces (14 MB), four to a conversation (``gen_ai.conversation.id``): no case can finish before
    the input ends, since a later trace may join a conversation."""
    return replicate(tmp_path / "conversations.json", 100, session_of=lambda i: f"conv-{i // 4}")


@pytest.fixture
def streamed(monkeypatch):
    """The file is streamed (its position moves as it is read) and every move reaches the consumers."""
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)
    monkeypatch.setattr(_Planner, "EVERY", 0.0)


def test_plain_progress_says_what_a_run_of_conversations_waits_for(tmp_path, capsys, streamed):
    """A real run: until the input ends no case finishes, and the lines say how much has been read (of the
    file's size in MB), how many conversations wait, and the time left to read."""
    path = conversations(tmp_path)
    evaluators, options, _ = prepare_run(metrics=["tool_trajectory_avg_score"], concurrency=1)
    options.read_context = context = ReadContext()
    progress = PlainProgress(every=0, size=lambda: context.total_weight)
    run = asyncio.run(run_evaluation([path], evaluators, options=options, consumers=[progress]))
    assert len(run.cases) == 25
    mb = f"{path.stat().st_size / 1e6:.0f}"
    lines = [line for line in capsys.readouterr().err.splitlines() if "reading traces" in line]
    assert len(lines) >= 3, lines
    found = [re.fullmatch(READING.format(mb=mb), line) for line in lines]
    assert all(found), [line for line, match in zip(lines, found, strict=True) if not match][:3]
    read = [(int(m.group(3)), float(m.group(4)), int(m.group(5))) for m in found]
    assert read == sorted(read) and read[-1][2] <= 25, read  # it moves on; 25 conversations at most wait
    assert any(m.group(2) for m in found)  # a time left to read, once something is read


def test_the_cli_tells_the_progress_the_size_of_its_input_files(tmp_path, monkeypatch, streamed):
    """``agentevals run -v`` (stderr not a terminal: plain lines) over a file of conversations: the size
    comes from the files the run reads."""
    path = conversations(tmp_path)

    def every_line(**kwargs):
        consumer = progress_consumer(**kwargs)
        consumer.every = 0
        return consumer

    progress_consumer = _progress.progress_consumer
    monkeypatch.setattr(_progress, "progress_consumer", every_line)
    result = CliRunner().invoke(cli, ["-v", "run", str(path), "-m", "tool_call_count_v1", "--no-store",
                                       "-o", "summary"])
    assert result.exit_code == 0, result.output
    mb = f"{path.stat().st_size / 1e6:.0f}"
    lines = [line for line in result.stderr.splitlines() if "reading traces" in line]
    assert lines and all(re.fullmatch(READING.format(mb=mb), line) for line in lines), lines[:3]


def last_frame(console_file: io.StringIO) -> str:
    """The bar's latest line on the terminal."""
    return [line for line in re.split(r"[\r\n]", rendered(console_file)) if "cases" in line][-1]


def test_rich_progress_while_no_case_has_finished_shows_the_reading_and_its_eta():
    from rich.console import Console

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=220, color_system=None)
    bar = RichProgress(color=False, console=console, size=lambda: 4_000_000)
    bar.run_started(RunResult())
    bar.input.start -= 30  # 30 s ago, 40 % read: 45 s left to read
    bar.cases_planned(25, True)
    bar.input_read(40, 0.4, 10)
    bar.progress.refresh()
    screen = last_frame(out)
    assert re.search(r"0/~25 +0% · 0 failed · elapsed \d:\d\d:\d\d · ETA 0:00:4\d · reading traces: 40 read, "
                     r"1\.6 of 4\.0 MB; 10 conversations are scored when the input ends", screen), screen
    bar.cases_planned(25, False)  # the input has been read: scoring, the ETA from the cases done
    bar.progress.refresh()
    screen = last_frame(out)
    assert "reading traces" not in screen and "ETA -:--:--" in screen, screen
    bar.run_finished(RunResult())


def test_plain_progress_without_file_sizes_gives_the_fraction_read():
    progress = PlainProgress(every=3600)
    progress.run_started(RunResult())
    progress.input_read(7, 0.25, 1)
    assert re.fullmatch(r"progress: 0/\? cases, 0 failed, \d+s elapsed, ~\d+s left to read; reading traces: 7 read, "
                        r"25% of the input; 1 conversation is scored when the input ends", progress.line(time.monotonic()))
    progress.case_finished(0, case(Status.PASSED))
    assert "reading" not in progress.line(time.monotonic())
