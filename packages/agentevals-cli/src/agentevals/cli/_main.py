"""Root command group: lazy subcommands, verbosity, and turning errors into exit codes."""

from __future__ import annotations

import atexit
import importlib
import os
import sys
from typing import Any, NoReturn

import click

from ..__about__ import __version__
from ..errors import AgentevalsError
from ..protocol import PROTOCOL_VERSION

# name → "module:attribute"; imported only when the command runs so that --help stays fast.
COMMANDS: dict[str, str] = {
    "eval": "agentevals.cli.eval_cmd:eval_command",
    "transpile": "agentevals.cli.transpile:transpile_command",
    "run": "agentevals.cli.run:run_command",
    "config": "agentevals.cli.config_cmd:config_command",
    "evaluator": "agentevals.cli.evaluator_cmd:evaluator_command",
    "serve": "agentevals.cli.serve_cmd:serve_command",
    "mcp": "agentevals.cli.mcp_cmd:mcp_command",
    "runs": "agentevals.cli.runs_cmd:runs_command",
    "evalset": "agentevals.cli.evalset_cmd:evalset_command",
    "labels": "agentevals.cli.labels_cmd:labels_command",
    "calibrate": "agentevals.cli.calibrate_cmd:calibrate_command",
    "store": "agentevals.cli.runs_cmd:store_command",
    "sources": "agentevals.cli.sources_cmd:sources_command",
}

# name → the first paragraph of the command's help, for the list in ``agentevals --help`` without importing
# every command (tests/cli/test_startup.py checks that each still matches its command).
SUMMARIES: dict[str, str] = {
    "calibrate": "Score TRACES with one evaluator of the config and compare its verdicts with human labels: agreement, "
                 "Cohen's κ with a bootstrap 95% interval, confusion, precision/recall per verdict, the base rate, "
                 "score correlation and MAE; --repeat gives the flip rate, --probes the judge's biases.",
    "config": "Work with eval_config.yaml files.",
    "eval": "Run a single judge or assertion; show what a grading agent needs for one test.",
    "evalset": "ADK eval sets from stored runs: build one, add cases, merge, diff and validate.",
    "evaluator": "Custom evaluators: scaffold one, try it, list registries, show runtimes.",
    "labels": "Human labels (pass/fail, a score, a note, who) of stored cases and metrics: import, export, add.",
    "mcp": "Serve the tools list_metrics, evaluate_traces, list_sessions, summarize_session, evaluate_sessions, "
           "list_runs, show_run, compare_runs on stdio.",
    "run": "Score TRACE_FILES (Jaeger JSON, OTLP JSON or Tempo exports; globs allowed) or backend query URIs "
           "(jaeger+http://HOST:PORT?service=NAME&since=2h, …: see 'agentevals sources list') against an eval set.",
    "runs": "Runs recorded in the run store: list them, show one, compare two, follow a metric over them.",
    "serve": "Receive agent traces over OTLP, evaluate each session as it completes, and serve the results.",
    "sources": "Where traces come from: files, URLs and trace backends (Jaeger, Tempo, Phoenix, MLflow, Langfuse, "
               "plugins).",
    "store": "The run store itself: where it is, its schema.",
    "transpile": "Transpile EVAL.yaml (or .jsonl) suites into evals.json.",
}


def redact(text: str) -> str:
    """``core.redact.redact``, imported when an error is shown (not for ``--help``)."""
    from ..core.redact import redact as redact_text

    return redact_text(text)


def print_traceback() -> None:
    """The traceback of the exception being handled, on stderr (-vv or AGENTEVALS_DEBUG)."""
    import traceback

    traceback.print_exc()


class AgentevalsClickError(click.ClickException):
    """An ``AgentevalsError`` on its way out: ``Error: <one line>`` on stderr and its exit code."""

    def __init__(self, error: AgentevalsError) -> None:
        super().__init__(redact(str(error)))
        # click declares exit_code a class attribute; each error here carries its own (1 or 2)
        self.exit_code = error.exit_code  # type: ignore[misc]


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AgentevalsError as exc:
            if debug_enabled():
                print_traceback()
            raise AgentevalsClickError(exc) from exc

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *COMMANDS})

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, with each lazy command's summary from ``SUMMARIES`` instead of its module."""
        commands: list[tuple[str, click.Command]] = []
        for name in self.list_commands(ctx):
            command = (click.Command(name, help=SUMMARIES[name]) if name in SUMMARIES and name in COMMANDS
                       else self.get_command(ctx, name))
            if command is not None and not command.hidden:
                commands.append((name, command))
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)  # click's own layout
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in commands])

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name in COMMANDS:
            module, _, attr = COMMANDS[name].partition(":")
            return getattr(importlib.import_module(module), attr)
        return super().get_command(ctx, name)


_state = {"verbose": 0, "quiet": 0}


def verbosity() -> int:
    """How many -v the user gave (0 when none)."""
    return _state["verbose"]


def quiet_enabled() -> bool:
    """-q was given before the command (``agentevals -q run …``)."""
    return bool(_state["quiet"])


def debug_enabled() -> bool:
    """Tracebacks are shown with -vv or AGENTEVALS_DEBUG=1."""
    return _state["verbose"] >= 2 or os.environ.get("AGENTEVALS_DEBUG", "").lower() in ("1", "true", "yes")


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(
    __version__, "--version", prog_name="agentevals", message=f"%(prog)s %(version)s (protocol {PROTOCOL_VERSION})"
)
@click.option("-v", "--verbose", count=True, help="More output: -v progress and warnings, -vv debug and tracebacks.")
@click.option("-q", "--quiet", is_flag=True, help="Less output: no progress; run reports only failures, gate "
              "results and the totals line.")
@click.pass_context
def cli(ctx: click.Context, verbose: int, quiet: bool) -> None:
    """Score AI-agent runs recorded as OpenTelemetry traces against eval sets and evaluators."""
    _state["verbose"] = verbose
    _state["quiet"] = int(quiet)
    from ._logging import install_logging

    install_logging(verbose=verbose, quiet=quiet)


def _exit_interrupted(program: bool) -> NoReturn:
    """Exit 130 after a Ctrl-C. As the program, by ``os._exit`` once the exit handlers have run: CPython marks a
    KeyboardInterrupt that passes through code run from a string (``exec``/``eval``, as ``dataclasses`` and
    ``namedtuple`` build their methods while a module imports) as unhandled even when caught later, and then ends
    the process by SIGINT instead of with its exit code (``_Py_UnhandledKeyboardInterrupt``)."""
    if not program:
        sys.exit(130)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more to say
            pass
    os._exit(130)


def main(argv: list[str] | None = None, *, program: bool = False) -> Any:
    """The command line behind ``agentevals.cli.main``.

    As the program (``program``), the process owns its process tree: it becomes the subreaper of evaluator
    descendants and sweeps their orphans (``execution.containment``). Called by a host, it does not: the host's own
    daemons are not agentevals' to reap or kill."""
    from ..core._startup import (
        collect_again,
        loud_interrupts,
        skip_collection_at_exit,
        startup_without_collection,
    )

    if program:
        from ..execution.containment import own_process_tree

        own_process_tree()
    skip_collection_at_exit()
    args = sys.argv[1:] if argv is None else argv
    if next((arg for arg in args if not arg.startswith("-")), None) == "run":
        startup_without_collection()  # until the run's work starts (cli/_pipeline.py), else until it fails
    try:
        loud_interrupts()  # inside: a Ctrl-C landing as Python's handler comes back is a KeyboardInterrupt here
        return cli.main(args=argv, prog_name="agentevals", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        _exit_interrupted(program)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except AgentevalsError as exc:  # raised outside a command (e.g. while parsing)
        if debug_enabled():
            print_traceback()
        click.echo(redact(f"Error: {exc}"), err=True)
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        click.echo("Interrupted.", err=True)
        _exit_interrupted(program)
    except Exception as exc:  # a bug: still one line, the traceback on request
        if debug_enabled():
            print_traceback()
        click.echo(redact(f"Error: internal error: {type(exc).__name__}: {exc} (run with -vv for the traceback; "
                          "please report it)"), err=True)
        sys.exit(1)
    finally:
        collect_again()
