"""Modules moved by the 0.12 layout: every old path still imports (same module object), none is used in-repo."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from agentevals.core._aliases import MOVED

REPO = Path(__file__).resolve().parents[3]
SCANNED = [REPO / "packages", REPO / "tests", REPO / "tools", REPO / "conftest.py"]
ALLOWED = {Path(importlib.import_module("agentevals.core._aliases").__file__ or ""), Path(__file__).resolve(),
           # they import old paths on purpose: the aliases' own test and the rewriting tool's test
           REPO / "packages/agentevals-cli/tests/engine/test_engine_exports.py",
           REPO / "tests/test_rewrite_moved_imports.py"}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_is_the_new_module(old):
    assert importlib.import_module(old) is importlib.import_module(MOVED[old])


def test_old_paths_import_in_a_fresh_interpreter():
    # Nothing of agentevals loaded yet: importing an old path first imports the package, which installs
    # the finder, which then answers for the old name. Private names come along (monkeypatch by path).
    code = ("import agentevals._registry as r, agentevals.gates as g, agentevals.live_session as s\n"
            "from agentevals.redact import _redact\n"
            "from agentevals import llm\n"
            "print(r.__name__, g.__name__, s.__name__, _redact.__module__, llm.__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["agentevals.core._registry", "agentevals.results.gates", "agentevals.live.session",
                   "agentevals.core.redact", "agentevals.evaluators.llm"]


def test_monkeypatch_by_old_path_patches_the_new_module(monkeypatch):
    from agentevals.core import redact

    monkeypatch.setattr("agentevals.redact.MASK", "###")
    assert redact.MASK == "###"


def test_an_unknown_module_is_still_unknown():
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("agentevals.no_such_module")


def _module_of(path: Path) -> tuple[str, bool] | None:
    parts = path.with_suffix("").parts
    if "src" not in parts:
        return None
    names = list(parts[len(parts) - parts[::-1].index("src"):])
    is_package = names[-1] == "__init__"
    return ".".join(names[:-1] if is_package else names), is_package


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module or module.name) of every import and every ``"module:attr"`` string."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    here = _module_of(path)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                if here is None:
                    continue
                package = here[0].split(".") if here[1] else here[0].split(".")[:-1]
                base = ".".join(package[: len(package) - node.level + 1] + ([base] if base else []))
            found.append((node.lineno, base))
            found += [(node.lineno, f"{base}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.startswith("agentevals."):
            found.append((node.lineno, node.value.split(":", 1)[0]))
    return found


def test_nothing_in_the_repository_imports_an_old_path():
    stale = []
    for root in SCANNED:
        for path in sorted(root.rglob("*.py")) if root.is_dir() else [root]:
            if path.resolve() in ALLOWED or "node_modules" in path.parts:
                continue
            stale += [f"{path.relative_to(REPO)}:{line}: {name} (now {MOVED[name]})"
                      for line, name in _imports(path) if name in MOVED]
    assert not stale, "imports of deprecated module paths:\n" + "\n".join(stale)
