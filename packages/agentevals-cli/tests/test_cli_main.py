"""The root command: version, help, verbosity, fast start-up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from agentevals import __version__
from agentevals.cli import cli
from click.testing import CliRunner


def test_version_names_package_and_protocol():
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"agentevals {__version__} (protocol 1.2)\n"


def test_help_lists_usage():
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    assert "Score AI-agent runs" in result.output
    assert "-v, --verbose" in result.output


def test_unknown_command_is_usage_error_exit_2():
    proc = subprocess.run([sys.executable, "-m", "agentevals", "nope"], capture_output=True, text=True)
    assert proc.returncode == 2
    assert "No such command 'nope'" in proc.stderr


HEAVY = ('google.adk', 'openai', 'rouge_score', 'nltk', 'numpy', 'jinja2', 'requests', 'yaml', 'pydantic',
         'fastapi', 'uvicorn', 'grpc', 'opentelemetry', 'google.protobuf', 'mcp', 'ray', 'rich', 'psycopg', 'sqlite3')


@pytest.mark.parametrize("argv", [["--help"], ["serve", "--help"], ["mcp", "--help"], ["run", "--help"],
                                  ["runs", "--help"]])
def test_help_does_not_import_heavy_modules(argv):
    code = (
        "import sys\nfrom agentevals.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\nprint('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out


def test_a_plain_run_without_a_config_does_not_import_yaml_or_the_store():
    # The one-trace latency is mostly imports: a run with builtin metrics, no config and --no-store needs
    # neither the YAML loader nor the store, the live server or the report templates.
    examples = Path(__file__).resolve().parents[3] / "examples"
    argv = ["run", str(examples / "traces" / "helm.json"), "-e", str(examples / "evalsets" / "eval_set_helm.json"),
            "-o", "summary", "--no-store"]
    code = (
        "import sys\nfrom agentevals.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print('LOADED', [m for m in ('yaml', 'sqlite3', 'jinja2', 'fastapi', 'rich') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "tool_trajectory_avg_score" in out
    assert "LOADED []" in out


def test_import_agentevals_does_not_import_opentelemetry():
    code = "import sys, agentevals\nagentevals.AgentEvals\nprint([m for m in sys.modules if m.startswith('opentelemetry')])"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_import_agentevals_and_run_help_do_not_import_ray():
    code = (
        "import sys\nimport agentevals\nfrom agentevals.cli import main\n"
        "try:\n    main(['run', '--help'])\nexcept SystemExit:\n    pass\n"
        "print('RAY', 'ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "--executor" in out and "--ray-address" in out
    assert "RAY False" in out
