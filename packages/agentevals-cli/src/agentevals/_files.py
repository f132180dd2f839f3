"""Reading input files (traces, eval sets, EVAL.yaml suites) with one-line errors that name the file, and
the one rule for relative paths written in a config file."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

from .errors import InputFileError

__all__ = ["read_input", "resolve_config_path"]


def read_input(path: Path, source: Optional[str] = None, *, expected: str = "a file") -> bytes:
    """The bytes of ``path``; ``InputFileError`` (``<source>: no such file`` …) when it cannot be read."""
    where = source if source is not None else str(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{where}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{where}: is a directory, expected {expected}") from None
    except OSError as exc:
        raise InputFileError(f"{where}: cannot read: {exc.strerror or exc}") from None


def resolve_config_path(path: str, base_dir: Path) -> tuple[Path, Optional[str]]:
    """Resolve a relative path written in a config file: the config's folder first, then the working
    directory (agentevals-cli 0.11 resolved against the working directory, so its example configs kept in
    a subfolder name files relative to the repo root).

    Returns the path and, when the working directory was used, a note saying so. When neither exists the
    config-relative path is returned (the caller's "not found" message names it).
    """
    candidate = Path(path).expanduser()
    if candidate.is_absolute():
        return candidate, None
    beside = (base_dir / candidate).resolve()
    if beside.exists():
        return beside, None
    cwd = Path.cwd()
    here = (cwd / candidate).resolve()
    if here.exists() and base_dir.resolve() != cwd.resolve():
        return here, f"'{path}' is not in the config's folder; using it relative to the working directory ({here})"
    return beside, None
