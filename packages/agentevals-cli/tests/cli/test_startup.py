"""Start-up imports only what the command uses: the modules ``agentevals --help`` and a one-metric ``run`` load,
read from a real ``python`` subprocess (a fresh interpreter: in-process, earlier tests would have imported
everything). No time is asserted; a module list is what start-up time is made of."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest
from agentevals.cli._main import COMMANDS, SUMMARIES, cli

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"

# Runs the CLI in this interpreter, then writes the names in sys.modules to the file named by argv[1]; with
# ``--groups`` first, the entry-point groups read instead (which imports importlib.metadata up front).
PROBE = """
import json, sys
out, args = sys.argv[1], sys.argv[2:]
groups = []
if args[0] == "--groups":
    import importlib.metadata as metadata
    real = metadata.entry_points
    def entry_points(**params):
        groups.append(params.get("group"))
        return real(**params)
    metadata.entry_points = entry_points
    args = args[1:]
from agentevals.cli import main
try:
    main(args)
except SystemExit:
    pass
with open(out, "w") as f:
    json.dump(groups if groups or "--groups" in sys.argv else sorted(sys.modules), f)
"""

# Heavy or unrelated to the command: none may be imported by --help, nor by one builtin metric with --no-store.
NEVER = ["jinja2", "requests", "httpx", "urllib3", "rich", "sqlite3", "psycopg", "psycopg2", "yaml", "google.adk",
         "openai", "ray", "mcp", "starlette", "uvicorn", "agentevals.serve", "agentevals.store", "agentevals.live",
         "agentevals.transpile", "agentevals.judges", "agentevals.sources", "agentevals.config.schema",
         "agentevals.report.html", "agentevals.report.junit", "agentevals.report.markdown", "agentevals.report.json",
         "agentevals.evaluators.openai_eval", "agentevals.evaluators.llm", "agentevals.trace_sources.pull",
         "agentevals.trace_sources.http", "agentevals.engine.filters", "agentevals.results.compare",
         "agentevals.results.paired", "statistics", "ctypes"]


def probe(tmp_path: Path, *args: str) -> list[str]:
    out = tmp_path / "probe.json"
    out.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", PROBE, str(out), *args], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert out.exists(), proc.stderr
    names: list[str] = json.loads(out.read_text())
    return names


def modules_after(tmp_path: Path, *args: str) -> set[str]:
    return set(probe(tmp_path, *args))


def imported(modules: set[str], names: list[str]) -> list[str]:
    return sorted(m for m in modules for name in names if m == name or m.startswith(name + "."))


def test_help_imports_no_command_and_no_pydantic(tmp_path):
    modules = modules_after(tmp_path, "--help")
    assert "agentevals.cli._main" in modules  # the probe did run the CLI
    commands = [path.partition(":")[0] for path in COMMANDS.values()]
    assert imported(modules, [*NEVER, *commands, "pydantic", "asyncio", "importlib.resources", "importlib.metadata",
                              "logging", "agentevals.core.redact", "agentevals.api", "agentevals.engine",
                              "agentevals.results"]) == []


RUN = ["run", str(EXAMPLES / "traces" / "helm.json"), "-e", str(EXAMPLES / "evalsets" / "eval_set_helm.json"),
       "-m", "tool_trajectory_avg_score", "-o", "summary", "--no-store"]


def test_run_with_one_builtin_metric_imports_only_what_it_uses(tmp_path):
    modules = modules_after(tmp_path, *RUN)
    assert "agentevals.evaluators.builtin.trajectory" in modules  # the metric did run
    other_commands = [path.partition(":")[0] for name, path in COMMANDS.items() if name != "run"]
    assert imported(modules, [*NEVER, *other_commands]) == []


def test_run_with_builtin_names_reads_no_plugin_entry_points(tmp_path):
    """agentevals' registries read entry points only for a name they do not know; pydantic still reads its own
    group (its plugin discovery, on the first model built)."""
    groups = probe(tmp_path, "--groups", *RUN)
    assert [group for group in groups if group != "pydantic"] == []
    unknown = probe(tmp_path, "--groups", "run", *RUN[1:4], "-m", "no_such_metric", "--no-store")
    assert [group for group in unknown if group != "pydantic"] != []  # an unknown name does read them


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_lists_each_command_as_its_own_help_says(name):
    """``--help`` lists commands from ``SUMMARIES``, not from their modules: each summary must stay what the
    command's own help would show, at any terminal width."""
    assert name in SUMMARIES, f"add the first paragraph of '{name}''s help to SUMMARIES in cli/_main.py"
    command = cli.get_command(click.Context(cli), name)
    assert command is not None and not command.hidden
    listed = click.Command(name, help=SUMMARIES[name])
    for width in (20, 45, 80, 1000):
        assert listed.get_short_help_str(width) == command.get_short_help_str(width)


# Runs the CLI in this interpreter and writes whether the cyclic collector was on as the run command set up
# (parse_outputs, execute's first step), as the engine started (its first event) and after main() returned.
GC_PROBE = """
import gc, json, sys
import agentevals.cli._pipeline as pipeline
from agentevals.cli import main

setup, seen = [], []
parse = pipeline.parse_outputs
def parse_outputs(*args):
    setup.append(gc.isenabled())
    return parse(*args)
pipeline.parse_outputs = parse_outputs
real = pipeline._Finisher.run_started
def run_started(self, run):
    seen.append(gc.isenabled())
    return real(self, run)
pipeline._Finisher.run_started = run_started
try:
    main(sys.argv[2:])
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    json.dump({"at_setup": setup, "at_engine_start": seen, "after": gc.isenabled()}, f)
"""


def gc_probe(tmp_path: Path, *args: str) -> dict:
    out = tmp_path / "gc.json"
    out.unlink(missing_ok=True)
    proc = subprocess.run([sys.executable, "-c", GC_PROBE, str(out), *args], capture_output=True, text=True,
                          timeout=120, cwd=tmp_path)
    assert out.exists(), proc.stderr
    result: dict = json.loads(out.read_text())
    return result


def test_run_pauses_the_garbage_collector_only_while_it_starts(tmp_path):
    probe = gc_probe(tmp_path, *RUN)
    assert probe == {"at_setup": [False], "at_engine_start": [True], "after": True}
    failed = gc_probe(tmp_path, "run", *RUN[1:4], "-m", "no_such_metric", "--no-store")  # fails before its work
    assert failed == {"at_setup": [], "at_engine_start": [], "after": True}
    assert gc_probe(tmp_path, "--version")["after"] is True


def test_collection_pause_keeps_a_collector_the_caller_disabled():
    from agentevals.core._startup import collect_again, startup_without_collection

    was = gc.isenabled()
    try:
        gc.disable()
        startup_without_collection()
        collect_again()
        assert not gc.isenabled()
        gc.enable()
        startup_without_collection()
        assert not gc.isenabled()
        collect_again()
        assert gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_exit_leaves_the_heap_to_the_system(tmp_path):
    """``main`` registers an exit handler that freezes the heap: Python's finalization then collects nothing. A
    handler registered before it runs after it (last in, first out) and sees the heap frozen."""
    script = ("import atexit, gc, os\n"
              "from agentevals.cli import main\n"
              "atexit.register(lambda: os.write(1, b'%d' % gc.get_freeze_count()))\n"
              "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip().splitlines()[-1]) > 0


def program(*args: str, columns: int, importtime: bool = False) -> subprocess.CompletedProcess:
    """``python -m agentevals ARGS`` as the program, on a terminal ``columns`` wide (click reads COLUMNS)."""
    flags = ["-X", "importtime"] if importtime else []
    return subprocess.run([sys.executable, *flags, "-m", "agentevals", *args], capture_output=True, text=True,
                          timeout=120, env={**os.environ, "COLUMNS": str(columns)})


def through_click(*args: str, columns: int) -> str:
    """What click itself prints for ``agentevals ARGS`` (``main`` called by a host never takes the fast path)."""
    code = f"from agentevals.cli import main\nmain({list(args)!r})"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "COLUMNS": str(columns)})
    assert done.returncode == 0, done.stderr
    return done.stdout


def imports(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}


@pytest.mark.parametrize("columns", [80, 132])
def test_root_help_and_version_are_printed_without_click_as_click_prints_them(columns):
    """``agentevals --help`` and ``--version`` come from ``cli/_fast.py``: the same text, without importing click."""
    for args in (["--help"], ["-h"], ["--version"]):
        done = program(*args, columns=columns, importtime=True)
        assert done.returncode == 0, done.stderr
        assert "click" not in imports(done.stderr)
        expected = through_click(*args, columns=columns)
        assert done.stdout == expected, (f"ROOT_HELP in cli/_fast.py is out of date; set it to:\n{expected}"
                                         if args != ["--version"] else done.stdout)


def test_root_help_on_a_narrow_terminal_is_left_to_click():
    done = program("--help", columns=60, importtime=True)
    assert done.returncode == 0, done.stderr
    assert "click" in imports(done.stderr)
    assert done.stdout == through_click("--help", columns=60)
    assert max(map(len, done.stdout.splitlines())) <= 58  # click wrapped it to the terminal


def test_root_help_into_a_closed_pipe_says_nothing(tmp_path):
    """``agentevals --help | head -0``: the reader is gone before the text is written."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "agentevals", "--help"], stdout=write, stderr=subprocess.PIPE,
                              text=True, timeout=120, env={**os.environ, "COLUMNS": "100"})
    finally:
        os.close(write)
    assert done.returncode == 0
    assert done.stderr == ""
