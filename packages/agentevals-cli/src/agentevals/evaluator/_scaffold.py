"""``agentevals evaluator init``: write a runnable evaluator skeleton and its ``evaluator.yaml``."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from string import Template

from ..errors import ConfigError

__all__ = ["LANGUAGES", "Language", "scaffold_evaluator"]


@dataclass(frozen=True)
class Language:
    """A language ``init`` can write a skeleton for."""

    name: str
    extension: str
    template: str
    aliases: tuple[str, ...]


LANGUAGES: tuple[Language, ...] = (
    Language("python", ".py", "python.py.tmpl", ("py", "python")),
    Language("javascript", ".js", "javascript.js.tmpl", ("js", "javascript", "node")),
    Language("typescript", ".ts", "typescript.ts.tmpl", ("ts", "typescript")),
)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def _language(runtime: str | None, suffix: str) -> Language:
    by_alias = {alias: lang for lang in LANGUAGES for alias in lang.aliases}
    by_ext = {lang.extension: lang for lang in LANGUAGES}
    from_name = by_ext.get(suffix)
    if runtime is None:
        return from_name or by_ext[".py"]
    chosen = by_alias.get(runtime.lower())
    if chosen is None:
        raise ConfigError(f"unknown runtime {runtime!r} for init; choose one of: py, js, ts")
    if from_name is not None and from_name is not chosen:
        raise ConfigError(f"the name says {suffix} but --runtime says {runtime!r}; give only one of them")
    return chosen


def _check_name(name: str, raw: str) -> None:
    if _NAME.fullmatch(name) and not keyword.iskeyword(name):
        return
    suggestion = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "my_evaluator"
    if suggestion[0].isdigit():
        suggestion = f"evaluator_{suggestion}"
    if keyword.iskeyword(suggestion):
        suggestion += "_evaluator"
    suggestion = suggestion[:64]
    raise ConfigError(
        f"invalid evaluator name {raw!r}: use letters, digits and '_', starting with a letter or '_' "
        f"(at most 64 characters, not a Python keyword), e.g. {suggestion!r}"
    )


def scaffold_evaluator(name: str, output_dir: Path | None = None, runtime: str | None = None) -> list[Path]:
    """Create ``<output_dir>/<name>/<name>.<ext>`` and ``evaluator.yaml``; return the files written.

    ``name`` may end in ``.py``/``.js``/``.ts`` to pick the language; otherwise ``runtime`` does
    (default Python). Never overwrites: raises ``ConfigError`` when a file exists or the name is invalid.
    """
    raw = name
    suffix = Path(name).suffix.lower()
    known = {lang.extension for lang in LANGUAGES}
    stem = name[: -len(suffix)] if suffix in known else name
    language = _language(runtime, suffix if suffix in known else "")
    _check_name(stem, raw)

    directory = (output_dir or Path.cwd()) / stem
    code = directory / f"{stem}{language.extension}"
    manifest = directory / "evaluator.yaml"
    for path in (code, manifest):
        if path.exists():
            raise ConfigError(f"refusing to overwrite {path}; choose another name or remove it first")

    import yaml

    text = resources.files(__package__).joinpath("templates", language.template).read_text("utf-8")
    meta = {
        "name": stem,
        "description": f"TODO: describe what {stem} evaluates",
        "language": language.name,
        "entrypoint": code.name,
        "tags": [],
        "author": "",
    }
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for path, content in ((code, Template(text).substitute(name=stem)),
                          (manifest, yaml.safe_dump(meta, sort_keys=False))):
        with path.open("x", encoding="utf-8") as handle:  # "x": fail rather than overwrite (races too)
            handle.write(content)
        written.append(path)
    return written
