"""The engine's and the trace sources' public surfaces: every name in ``__all__`` resolves; the deprecated
paths (``agentevals.runner``, ``.options``, ``.consumers``, the Ray pool's old home) are the same objects;
the Ray pool and ``execution`` import no private name of the engine."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import agentevals.engine
import agentevals.trace_sources

SRC = Path(agentevals.engine.__file__).resolve().parents[1]


def test_all_names_resolve():
    for module in (agentevals.engine, agentevals.trace_sources):
        assert len(set(module.__all__)) == len(module.__all__)
        for name in module.__all__:
            assert getattr(module, name) is not None, (module.__name__, name)


def test_deprecated_paths_alias_the_engine():
    import agentevals.consumers
    import agentevals.options
    import agentevals.runner
    from agentevals.engine import consumers, options

    assert agentevals.runner is agentevals.engine
    assert agentevals.options is options and agentevals.consumers is consumers
    assert agentevals.runner.run_evaluation is agentevals.engine.run_evaluation
    assert agentevals.runner._Pool is agentevals.engine.LocalPool  # old private names keep resolving


def test_no_private_engine_name_is_imported_outside_the_engine():
    offenders = []
    for path in SRC.rglob("*.py"):
        if "engine" in path.relative_to(SRC).parts[:1]:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and (
                    node.module.split(".")[0] in ("engine", "runner")
                    or ".engine" in f".{node.module}" or node.module.endswith("runner")):
                offenders += [f"{path.relative_to(SRC)}: {a.name}" for a in node.names if a.name.startswith("_")]
    assert offenders == []


def test_execution_imports_nothing_from_the_engine():
    for path in (SRC / "execution").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith(("engine", "runner")), path
                assert node.module not in (None,) or node.level == 0 or all(
                    a.name not in ("engine", "runner") for a in node.names), path


def test_importing_the_ray_pools_old_home_loads_no_engine():
    code = ("import sys, agentevals.execution.ray_executor\n"
            "print(sorted(m for m in sys.modules if m.startswith(('agentevals.engine', 'agentevals.runner'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
