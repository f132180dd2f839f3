"""Rewrite imports of moved modules to their new paths, from the alias table ``agentevals.core._aliases.MOVED``.

    python tools/rewrite_moved_imports.py          # rewrite in place, print each file changed
    ruff check --fix packages tools tests          # then re-sort the import blocks

Moving a module is ``git mv`` (so history and other branches' edits follow it), one ``MOVED`` line (the old
path keeps importing) and this tool, which rewrites relative imports (``from .._registry import X``),
absolute ones (``agentevals._registry``), ``"module:attr"`` registry strings and docs in every tracked file.
``packages/agentevals-cli/tests/test_module_aliases.py`` fails while any old path is still imported.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".toml", ".yaml", ".yml", ".json", ".html", ".txt", ".cfg", ".ini"}
SKIP = {"CHANGELOG.md", "ARCHITECTURE.md", "_aliases.py", "test_module_aliases.py", "rewrite_moved_imports.py",
        "test_rewrite_moved_imports.py", "test_engine_exports.py"}  # they name old paths on purpose
RELATIVE = re.compile(r"^(?P<indent>[ \t]*)from (?P<dots>\.+)(?P<module>[\w.]*) import (?P<names>[^\n]*)", re.M)


def _new(module: str, moved: dict[str, str]) -> str | None:
    for old in sorted(moved, key=len, reverse=True):
        if module == old or module.startswith(old + "."):
            return moved[old] + module[len(old):]
    return None


def _relative(target: str, package: list[str]) -> str:
    parts = target.split(".")
    common = 0
    while common < min(len(parts), len(package)) and parts[common] == package[common]:
        common += 1
    return "." * (len(package) - common + 1) + ".".join(parts[common:])


def rewrite_python(text: str, module: str, is_package: bool, moved: dict[str, str]) -> str:
    """``text`` of module ``module`` with its relative imports of moved modules pointing at the new paths."""
    package = module.split(".") if is_package else module.split(".")[:-1]

    def sub(match: re.Match[str]) -> str:
        level = len(match["dots"])
        base = package[: len(package) - level + 1]
        absolute = ".".join(base + ([match["module"]] if match["module"] else []))
        target = _new(absolute, moved)
        if target is not None:
            return f"{match['indent']}from {_relative(target, package)} import {match['names']}"
        names = match["names"].strip()
        if re.fullmatch(r"\w+( as \w+)?", names):  # from .. import redact [as r]: the name is a module
            name, _, alias = names.partition(" as ")
            target = _new(f"{absolute}.{name}" if absolute else name, moved)
            if target is not None:
                parent, _, new_name = target.rpartition(".")
                alias = alias or name
                tail = new_name if alias == new_name else f"{new_name} as {alias}"
                return f"{match['indent']}from {_relative(parent, package)} import {tail}"
        return match.group(0)

    return RELATIVE.sub(sub, text)


def rewrite_absolute(text: str, moved: dict[str, str]) -> str:
    """``agentevals.old.path`` → the new path wherever it is written (imports, strings, prose)."""
    pattern = re.compile(r"\b(" + "|".join(re.escape(old) for old in sorted(moved, key=len, reverse=True))
                         + r")\b(?![-\w])")
    return pattern.sub(lambda match: moved[match.group(1)], text)


def main() -> int:
    sys.path.insert(0, str(ROOT / "packages" / "agentevals-cli" / "src"))
    from agentevals.core._aliases import MOVED

    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        path = ROOT / name
        if path.suffix not in SUFFIXES or path.name in SKIP or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8")
        new = text
        if path.suffix == ".py" and "/src/" in name:
            parts = name.split("/src/", 1)[1].removesuffix(".py").split("/")
            is_package = parts[-1] == "__init__"
            new = rewrite_python(new, ".".join(parts[:-1] if is_package else parts), is_package, MOVED)
        new = rewrite_absolute(new, MOVED)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"rewrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
