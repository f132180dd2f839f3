"""The evaluator source contract, the shared ``index.yaml`` format and ref validation.

A source lists evaluators (``agentevals evaluator list``) and fetches one by ``ref`` for
``type: remote`` entries. Index format (GitHub and local registries alike)::

    evaluators:
      - name: response_quality
        description: Scores each answer by length
        language: python
        path: evaluators/response_quality/response_quality.py   # the ref
        tags: [quality]
        author: someone
        lastUpdated: "2025-01-31"
        sha256: 3f5a…          # optional: digest of the file, shown by `list`
"""

from __future__ import annotations

import abc
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar

from ..errors import EvaluatorFailure

__all__ = [
    "SIBLING_FILES",
    "EvaluatorInfo",
    "EvaluatorSource",
    "SourceError",
    "SourceNotConfigured",
    "check_ref",
    "parse_index",
]

SIBLING_FILES = ("evaluator.yaml", "requirements.txt", "package.json", "package-lock.json")
"""Files fetched with an evaluator when they sit next to it in the source."""

_REF_MAX_LENGTH = 512
_REF_MAX_SEGMENTS = 16
_REF_SEGMENT = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*(\.[A-Za-z0-9_-]+)*$")


class SourceError(EvaluatorFailure):
    """A source could not list or fetch (unreachable, not found, bad index); one line."""


class SourceNotConfigured(SourceError):
    """The source needs a setting it does not have (e.g. where the local registry is)."""


@dataclass
class EvaluatorInfo:
    """Metadata of one evaluator, whatever source it comes from."""

    name: str
    description: str
    source: str
    language: str | None = None
    ref: str | None = None
    """What to put in ``ref:`` of a ``type: remote`` entry (None for built-in metrics)."""
    tags: list[str] = field(default_factory=list)
    author: str | None = None
    last_updated: str | None = None
    sha256: str | None = None


class EvaluatorSource(abc.ABC):
    """A registry of evaluators that can be listed and fetched."""

    name: ClassVar[str]
    """Registry key, entry-point name and the ``source:`` of ``type: remote`` entries."""
    aliases: ClassVar[tuple[str, ...]] = ()
    refresh: bool = False
    """True when fetched copies must not be reused (the source is a live directory on disk)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # A source written for agentevals-cli 0.11 declares a ``source_name`` property instead of ``name``.
        if "source_name" in vars(cls) and not any("name" in vars(c) for c in cls.__mro__):
            setattr(cls, "name", property(lambda self: self.source_name))  # noqa: B010 (not a ClassVar here)

    @property
    def source_name(self) -> str:
        """Deprecated alias of ``name`` (agentevals-cli 0.11's name)."""
        return self.name

    @abc.abstractmethod
    async def list_evaluators(self) -> list[EvaluatorInfo]:
        """Every evaluator the source offers; raise (one line) when it cannot be reached."""

    @abc.abstractmethod
    async def fetch_evaluator(self, ref: str, dest: Path) -> Path:
        """Write the evaluator ``ref`` to ``dest`` (and its sibling files next to it); return its path."""

    def check(self) -> None:
        """Load-time check of the source's own settings; raise ``SourceError`` (becomes a config error)."""

    def cache_key(self) -> str:
        """Directory under the evaluator cache that holds this source's downloads (relative, POSIX)."""
        return self.source_name

    def configured(self, *, revision: str | None = None, path: str | None = None) -> EvaluatorSource:
        """A copy of this source for one config entry's ``revision:`` / ``path:``."""
        given = [name for name, value in (("revision", revision), ("path", path)) if value is not None]
        if given:
            raise ValueError(f"source '{self.source_name}' does not take {' or '.join(repr(g) for g in given)}")
        return self


def check_ref(ref: str, extensions: list[str] | None = None) -> str:
    """Accept only a plain relative POSIX path (it becomes part of a URL and of a cache path).

    Raises ``ValueError`` for absolute paths, ``..``, backslashes, percent escapes, odd characters,
    and (when ``extensions`` is given) an extension no runtime runs.
    """
    if not ref or len(ref) > _REF_MAX_LENGTH:
        raise ValueError(f"ref must be 1 to {_REF_MAX_LENGTH} characters")
    if "\\" in ref or "%" in ref:
        raise ValueError(f"ref must not contain backslashes or percent escapes (got {ref!r})")
    segments = ref.split("/")
    if len(segments) > _REF_MAX_SEGMENTS:
        raise ValueError(f"ref must have at most {_REF_MAX_SEGMENTS} path segments (got {ref!r})")
    if not all(_REF_SEGMENT.fullmatch(segment) for segment in segments):
        raise ValueError(
            f"ref must be a relative path of letters, digits, '_', '-' and single dots (got {ref!r})"
        )
    suffix = PurePosixPath(ref).suffix.lower()
    if extensions is not None and suffix not in extensions:
        raise ValueError(f"ref {ref!r} has extension '{suffix}'; supported: {', '.join(extensions)}")
    return ref


def sibling_refs(ref: str) -> list[tuple[str, str]]:
    """(ref of each sibling file, its file name) for the evaluator ``ref``."""
    parent = PurePosixPath(ref).parent
    return [(name if str(parent) == "." else f"{parent}/{name}", name) for name in SIBLING_FILES]


def parse_index(text: str, *, source: str, where: str) -> list[EvaluatorInfo]:
    """Parse an ``index.yaml`` document; ``SourceError`` naming ``where`` when it is not one."""
    import yaml

    from ..core._yaml import safe_load

    try:
        data: Any = safe_load(text)
    except yaml.YAMLError as exc:
        raise SourceError(f"{where}: not valid YAML: {str(exc).splitlines()[0]}") from None
    entries = data.get("evaluators") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise SourceError(f"{where}: expected a mapping with an 'evaluators' list")
    infos = []
    for entry in entries:
        if not isinstance(entry, dict) or not entry.get("name"):
            continue
        tags = entry.get("tags") or []
        infos.append(
            EvaluatorInfo(
                name=str(entry["name"]),
                description=str(entry.get("description") or ""),
                source=source,
                language=entry.get("language"),
                ref=entry.get("path"),
                tags=[str(t) for t in tags] if isinstance(tags, list) else [],
                author=entry.get("author"),
                last_updated=str(entry["lastUpdated"]) if entry.get("lastUpdated") else None,
                sha256=entry.get("sha256"),
            )
        )
    return infos
