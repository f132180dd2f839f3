"""Find code judges: ``.agentevals/judges/<name>.<ext>`` and ``.agentv/judges/<name>.<ext>``, walking up.

The walk starts at a directory (the current one for ``agentevals eval assert``) and stops at the
repository root — the nearest ancestor holding ``.git`` — or at the filesystem root when there is no
repository. The nearest directory wins; within one directory ``.agentevals`` beats ``.agentv`` and
extensions are tried in ``JUDGE_EXTENSIONS`` order. The file stem is the judge's name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

__all__ = [
    "JUDGE_DIRS",
    "JUDGE_EXTENSIONS",
    "JUDGE_NAME",
    "discover_judges",
    "find_judge",
    "judge_dirs",
    "repo_root",
]

JUDGE_DIRS: Final = (".agentevals/judges", ".agentv/judges")
JUDGE_EXTENSIONS: Final = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".sh")
JUDGE_NAME: Final = re.compile(r"^[A-Za-z0-9_-]+$")
"""Judge names are plain file stems: this also keeps a name from walking out of the judges directory."""


def repo_root(start: Path) -> Path:
    """The nearest directory from ``start`` upwards that contains ``.git``, else the filesystem root."""
    start = start.resolve()
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return Path(start.anchor)


def judge_dirs(start: Path) -> list[Path]:
    """Every judges directory that exists between ``start`` and the repository root, nearest first."""
    start = start.resolve()
    root = repo_root(start)
    found: list[Path] = []
    for directory in (start, *start.parents):
        found.extend(directory / sub for sub in JUDGE_DIRS if (directory / sub).is_dir())
        if directory == root:
            break
    return found


def discover_judges(start: Path) -> dict[str, Path]:
    """Judge name → script, for every judge visible from ``start`` (nearest definition wins)."""
    judges: dict[str, Path] = {}
    for directory in judge_dirs(start):
        for ext in JUDGE_EXTENSIONS:
            for script in sorted(directory.glob(f"*{ext}")):
                if script.is_file() and JUDGE_NAME.match(script.stem):
                    judges.setdefault(script.stem, script)
    return judges


def find_judge(name: str, start: Path) -> Path | None:
    """The script for judge ``name`` visible from ``start``, or None."""
    if not JUDGE_NAME.match(name):
        return None
    for directory in judge_dirs(start):
        for ext in JUDGE_EXTENSIONS:
            script = directory / f"{name}{ext}"
            if script.is_file():
                return script
    return None
