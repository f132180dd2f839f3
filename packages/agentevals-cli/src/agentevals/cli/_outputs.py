"""``-o FORMAT[=PATH]`` (repeatable): parsing, and writing every report of one run."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import click

from ..core._atomic import replaced
from ..errors import ConfigError
from ..report import FILE_EXTENSIONS, REPORT_FORMATS, ReportContext, render, render_chunks
from ..results import RunResult

__all__ = ["Output", "parse_outputs", "write_outputs"]


@dataclass
class Output:
    fmt: str
    path: Optional[Path] = None
    """None: stdout (markdown: ``$GITHUB_STEP_SUMMARY`` when that is set)."""
    flag: str = ""
    """How it was asked for, for messages."""


def parse_outputs(values: tuple[str, ...], output_file: Optional[str]) -> list[Output]:
    """``("table", "junit=out/junit.xml")`` → outputs; ``--output-file`` writes the stdout format (or, with
    no ``-o``, the format its extension names). At most one report goes to stdout."""
    outputs = []
    for value in values or ("table",):
        fmt, sep, path = value.partition("=")
        fmt = fmt.strip().lower()
        try:
            fmt = REPORT_FORMATS.key(fmt)  # a plugin's alias: its name
        except ConfigError as exc:  # unknown (with the known ones), or a plugin that cannot be loaded
            raise ConfigError(f"-o {value}: {exc} (FORMAT or FORMAT=PATH)") from None
        if sep and not path:
            raise ConfigError(f"-o {value}: empty path after '=' (FORMAT=PATH)")
        outputs.append(Output(fmt, Path(path) if sep else None, f"-o {value}"))
    to_stdout = [o for o in outputs if o.path is None and not (o.fmt == "markdown" and _step_summary())]
    if len(to_stdout) > 1:
        raise ConfigError(f"-o: {len(to_stdout)} reports would go to stdout ({', '.join(o.fmt for o in to_stdout)}); "
                          "give the others a file: -o FORMAT=PATH")
    if output_file:
        fmt = to_stdout[0].fmt if to_stdout else outputs[0].fmt
        if not values:
            fmt = FILE_EXTENSIONS.get(Path(output_file).suffix.lower(), fmt)
        outputs.append(Output(fmt, Path(output_file), f"--output-file {output_file}"))
    for out in outputs:
        if out.path is not None:
            try:
                out.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise ConfigError(f"{out.flag}: cannot create its directory: {exc.strerror or exc}") from None
    return outputs


def _step_summary() -> Optional[str]:
    return os.environ.get("GITHUB_STEP_SUMMARY") or None


def stdout_format(outputs: list[Output]) -> Optional[str]:
    return next((o.fmt for o in outputs if o.path is None and not (o.fmt == "markdown" and _step_summary())), None)


def write_outputs(run: RunResult, outputs: list[Output], context: ReportContext, *, color: bool) -> list[str]:
    """Write each report; returns one line for each report that could not be written (the others are).

    A file is replaced whole (written beside, then renamed), so a failed or interrupted write never
    leaves half a report, nor its temporary file; a path that is not a regular file (``/dev/stdout``, a
    FIFO, a device) is written in place, never replaced.
    """
    failures = []
    for out in outputs:
        try:
            _write_one(run, out, context, color=color)
        except OSError as exc:
            where = out.path if out.path is not None else "stdout"
            failures.append(f"{out.flag or '-o ' + out.fmt}: cannot write {where}: {exc.strerror or exc}")
    if os.environ.get("GITHUB_ACTIONS") == "true":
        from ..report.github import github_annotations

        for line in github_annotations(run):
            click.echo(line, err=True)
    return failures


def _write_one(run: RunResult, out: Output, context: ReportContext, *, color: bool) -> None:
    summary = _step_summary() if out.path is None and out.fmt == "markdown" else None
    if summary:
        with open(summary, "a", encoding="utf-8") as fh:
            fh.write(render(run, "markdown", context=context))
        return
    if out.path is None:
        painted = color and out.fmt in ("table", "summary")
        for text in render_chunks(run, out.fmt, color=painted, context=context):  # a big JSON report: in pieces
            click.echo(text, nl=False, color=painted or None)  # --color: keep the colours on a pipe too
        sys.stdout.flush()
        return
    with replaced(out.path) as fh:  # a failed write leaves no half report (a device is written in place)
        fh.writelines(render_chunks(run, out.fmt, context=context))
