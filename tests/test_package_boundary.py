"""Neither package imports the other: they share only the wire schema."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES = [
    ("packages/agentevals-evaluator-sdk/src", "agentevals"),
    ("packages/agentevals-cli/src", "agentevals_evaluator_sdk"),
]


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in (
            "import_module", "__import__"):
            for arg in node.args[:1]:
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    roots.add(arg.value.split(".")[0])
    return roots


@pytest.mark.parametrize(("src", "forbidden"), CASES)
def test_package_does_not_import_the_other(src, forbidden):
    files = list((ROOT / src).rglob("*.py"))
    assert files
    offenders = [str(f.relative_to(ROOT)) for f in files if forbidden in imported_roots(f)]
    assert offenders == []


def test_the_check_itself_catches_an_import(tmp_path):
    bad = tmp_path / "m.py"
    bad.write_text("from agentevals_evaluator_sdk import evaluator\n")
    assert "agentevals_evaluator_sdk" in imported_roots(bad)
