"""The documented extension modules export exactly their public names, and stay cheap to import."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

FACES = {
    "agentevals.custom_evaluators": {
        "EvalInput", "EvalResult", "EvaluatorBackend", "NodeRuntime", "PythonRuntime", "Runtime",
        "SubprocessBackend", "SubprocessExecutor", "create_backend", "get_runtimes", "register_executor", "register_runtime",
        "supported_extensions",
    },
    "agentevals.evaluator.sources": {
        "BuiltinEvaluatorSource", "EvaluatorInfo", "EvaluatorSource", "GitHubEvaluatorSource",
        "LocalEvaluatorSource", "SourceError", "get_source", "get_sources", "register_source",
    },
    "agentevals.evaluator": {"EvaluatorResolver", "scaffold_evaluator"},
}


@pytest.mark.parametrize("module_name", sorted(FACES))
def test_public_names_are_exported(module_name):
    module = importlib.import_module(module_name)
    public = {name for name, value in vars(module).items()
              if not name.startswith("_") and not isinstance(value, types.ModuleType) and name != "annotations"}
    assert set(module.__all__) == public == FACES[module_name]


def test_evaluator_help_imports_nothing_heavy():
    code = (
        "import sys\nfrom agentevals.cli import main\n"
        "try:\n    main(['evaluator', '--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('yaml', 'filelock', 'urllib.request', 'agentevals.execution.runtimes', 'requests')"
        " if m in sys.modules]\nprint('HEAVY', heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "HEAVY []" in out
    assert "init" in out and "list" in out and "runtimes" in out and "run" in out
