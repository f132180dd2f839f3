"""The root command's ``--help`` and ``--version``, answered without importing click (half the program's start-up).

``ROOT_HELP`` is click's rendering of ``agentevals --help`` on a terminal at least 80 columns wide (click caps its
width there); ``tests/cli/test_startup.py`` checks that it still is, and prints the new text when a command, a
summary or a root option changes. On a narrower terminal click renders the help itself.
"""

from __future__ import annotations

import os
import sys

__all__ = ["ROOT_HELP", "answered"]

ROOT_HELP = """\
Usage: agentevals [OPTIONS] COMMAND [ARGS]...

  Score AI-agent runs recorded as OpenTelemetry traces against eval sets and
  evaluators.

Options:
  --version      Show the version and exit.
  -v, --verbose  More output: -v progress and warnings, -vv debug and
                 tracebacks.
  -q, --quiet    Less output: no progress; run reports only failures, gate
                 results and the totals line.
  -h, --help     Show this message and exit.

Commands:
  calibrate  Score TRACES with one evaluator of the config and compare...
  config     Work with eval_config.yaml files.
  eval       Run a single judge or assertion; show what a grading agent...
  evalset    ADK eval sets from stored runs: build one, add cases, merge,...
  evaluator  Custom evaluators: scaffold one, try it, list registries,...
  labels     Human labels (pass/fail, a score, a note, who) of stored...
  mcp        Serve the tools list_metrics, evaluate_traces,...
  run        Score TRACE_FILES (Jaeger JSON, OTLP JSON or Tempo exports;...
  runs       Runs recorded in the run store: list them, show one, compare...
  serve      Receive agent traces over OTLP, evaluate each session as it...
  sources    Where traces come from: files, URLs and trace backends...
  store      The run store itself: where it is, its schema.
  transpile  Transpile EVAL.yaml (or .jsonl) suites into evals.json.
"""


def _columns() -> int:
    """The terminal's width as ``shutil.get_terminal_size`` (which click uses) finds it, without importing shutil."""
    try:
        columns = int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns  # type: ignore[union-attr]
        except (AttributeError, ValueError, OSError):  # stdout is None, closed, or not a terminal
            columns = 0
    return columns or 80


def answered(args: list[str]) -> bool:
    """Print the answer to ``agentevals --version`` or ``agentevals --help`` and return True; False for any other
    command line (or a terminal narrower than the help), which click then handles::

        if not answered(sys.argv[1:]):
            ...  # import click and run the command
    """
    if args == ["--version"]:
        from ..__about__ import __version__
        from ..protocol import PROTOCOL_VERSION

        text = f"agentevals {__version__} (protocol {PROTOCOL_VERSION})\n"
    elif args in (["--help"], ["-h"]) and _columns() >= 80:
        text = ROOT_HELP
    else:
        return False
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `agentevals --help | head -0`: the reader left; stdout to devnull, as Python's docs
        # advise, so that the flush at exit has nothing to complain about either
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return True
