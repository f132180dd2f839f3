"""tools/rewrite_moved_imports.py: imports of a moved module's old path are rewritten to the new one."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MOVED = {"agentevals._registry": "agentevals.core._registry", "agentevals.python_evaluators": "agentevals.evaluators.python",
         "agentevals.redact": "agentevals.core.redact"}


def load_tool():
    spec = importlib.util.spec_from_file_location("rewrite_moved_imports", ROOT / "tools" / "rewrite_moved_imports.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_relative_imports_are_rewritten_from_where_the_module_is():
    tool = load_tool()
    text = ("from .._registry import Registry\n"
            "from .. import redact\n"
            "from .. import python_evaluators as pe\n"
            "    from ..python_evaluators import PythonEvaluator  # in a function\n"
            "from ..errors import ConfigError\n"
            "from . import operations\n")
    assert tool.rewrite_python(text, "agentevals.serve.web_ui", False, MOVED) == (
        "from ..core._registry import Registry\n"
        "from ..core import redact\n"
        "from ..evaluators import python as pe\n"
        "    from ..evaluators.python import PythonEvaluator  # in a function\n"
        "from ..errors import ConfigError\n"
        "from . import operations\n")
    assert tool.rewrite_python("from ._registry import Registry\n", "agentevals", True, MOVED) == (
        "from .core._registry import Registry\n")


def test_absolute_paths_and_registry_strings_are_rewritten():
    tool = load_tool()
    text = ('"python": "agentevals.python_evaluators:PythonEvaluator",\n'
            "from agentevals.redact import redact  # agentevals.redaction and agentevals.redact-x stay\n")
    assert tool.rewrite_absolute(text, MOVED) == (
        '"python": "agentevals.evaluators.python:PythonEvaluator",\n'
        "from agentevals.core.redact import redact  # agentevals.redaction and agentevals.redact-x stay\n")
