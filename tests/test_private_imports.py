"""No module of agentevals imports another module's private name (``from .x import _name``).

A name that another module needs is public in its module (listed in ``__all__``), or lives where both can
import it. Importing a private *module* (``from . import _checks``) is fine: the package is its owner.
"""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parent.parent / "packages/agentevals-cli/src"

PENDING: set[tuple[str, str, str]] = set()
"""Private imports still to be removed (none: the engine's went with its declared RunPool, issue 23)."""


def _module_name(path: Path, root: Path) -> tuple[str, str]:
    parts = path.relative_to(root).with_suffix("").parts
    if parts[-1] == "__init__":
        name = ".".join(parts[:-1])
        return name, name
    name = ".".join(parts)
    return name, name.rsplit(".", 1)[0]


def private_imports(path: Path, root: Path = SRC) -> list[tuple[str, str, str]]:
    """``(file, module, name)`` for each ``from module import _name`` of another agentevals module."""
    module, package = _module_name(path, root)
    found = []
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join(base + ([node.module] if node.module else []))
        else:
            target = node.module or ""
        if not target.startswith("agentevals") or target == module:
            continue
        for alias in node.names:
            private = alias.name.startswith("_") and not alias.name.startswith("__")
            if private and not _is_module(f"{target}.{alias.name}", root):
                found.append((path.relative_to(root).as_posix(), target, alias.name))
    return found


def _is_module(dotted: str, root: Path) -> bool:
    relative = Path(*dotted.split("."))
    return (root / relative).with_suffix(".py").is_file() or (root / relative / "__init__.py").is_file()


def test_no_module_imports_another_modules_private_name():
    found = {hit for path in sorted(SRC.rglob("*.py")) for hit in private_imports(path)}
    assert sorted(found - PENDING) == []


def test_the_check_sees_a_private_import_and_not_a_private_module(tmp_path):
    package = tmp_path / "agentevals" / "pkg"
    package.mkdir(parents=True)
    (package / "_checks.py").write_text("x = 1\n")
    module = package / "m.py"
    module.write_text("from . import _checks\nfrom ._checks import _x\nfrom agentevals.other import _hidden, shown\n")
    assert private_imports(module, tmp_path) == [("agentevals/pkg/m.py", "agentevals.pkg._checks", "_x"),
                                                 ("agentevals/pkg/m.py", "agentevals.other", "_hidden")]
