"""Evaluator sources: where ``type: remote`` evaluators and ``agentevals evaluator list`` entries come from.

Built in: ``builtin`` (agentevals' own metrics; listed only), ``github`` (the community repository)
and ``local`` (a directory or git repository on disk). More come from ``register_source()`` or the
``agentevals.sources`` entry-point group.

Lists are cached (``collect_evaluators``): a source's list younger than ``LIST_MAX_AGE`` is served
from the cache without asking it, and an unreachable source falls back to its cached list.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

from ..core._registry import Registry
from .base import EvaluatorInfo as EvaluatorInfo
from .base import EvaluatorSource as EvaluatorSource
from .base import SourceError as SourceError
from .base import SourceNotConfigured as SourceNotConfigured

__all__ = [
    "LIST_MAX_AGE",
    "SOURCES",
    "EvaluatorInfo",
    "EvaluatorSource",
    "SourceError",
    "SourceListing",
    "SourceNotConfigured",
    "collect_evaluators",
    "get_source",
    "get_sources",
    "register_source",
]

SOURCES: Registry[EvaluatorSource] = Registry(
    "evaluator source",
    "agentevals.sources",
    {
        "builtin": "agentevals.sources.builtin:BuiltinEvaluatorSource",
        "github": "agentevals.sources.github:GitHubEvaluatorSource",
        "local": "agentevals.sources.local:LocalEvaluatorSource",
    },
    base=EvaluatorSource,
    instantiate=True,
)
"""Source name (the ``source:`` of remote entries) → source (classes are instantiated on first use)."""


def register_source(source: EvaluatorSource) -> None:
    """Add (or replace) a source under its ``name``."""
    if not isinstance(source, EvaluatorSource):
        raise TypeError(f"register_source() needs an EvaluatorSource instance, got {type(source).__name__}")
    name = getattr(source, "name", None)
    if not isinstance(name, str) or not name:
        raise ValueError(f"{type(source).__name__}.name must be a non-empty string, got {name!r}")
    SOURCES.register(name, source)


def get_source(name: str) -> EvaluatorSource:
    """The source registered as ``name`` (``ConfigError`` naming the known ones otherwise)."""
    return SOURCES.get(name)


def get_sources() -> list[EvaluatorSource]:
    """Every registered source, by name."""
    return [get_source(name) for name in SOURCES.names()]


LIST_MAX_AGE = 3600.0
"""Seconds a source's cached list is used without asking the source (``--refresh`` asks anyway)."""


@dataclass
class SourceListing:
    """What one source gave ``collect_evaluators``."""

    source: str
    evaluators: list[EvaluatorInfo] | None = None
    """The evaluators (fresh or cached); None when the source failed and nothing was cached."""
    error: Exception | None = None
    """Why the source could not be asked (its ``str()`` is one line); with ``evaluators``, they are cached."""
    cached_at: float | None = None
    """When the cached list was fetched (``time.time()``); None for a list fetched now."""


async def collect_evaluators(
    names: list[str] | None = None, *, timeout: float = 20.0, refresh: bool = False,
    max_age: float = LIST_MAX_AGE,
) -> list[SourceListing]:
    """List each source concurrently, from the cache when it is younger than ``max_age``.

    Never raises for a source: an unreachable one gives its exception (its cached list, if any,
    with it), a source that ran out of ``timeout`` an ``EvaluatorFailure``.

    Args:
        names: Sources to list (default: every registered one).
        timeout: Seconds each source may take.
        refresh: Ask every source even when its cached list is recent.
        max_age: Seconds a cached list is used without asking the source.
    """
    from ..execution.deadline import Deadline, deadline_scope
    from ._index_cache import read_cached_list, write_cached_list

    sources = [get_source(n) for n in names] if names else get_sources()

    async def ask(source: EvaluatorSource) -> list[EvaluatorInfo]:
        deadline = Deadline(timeout)
        deadline.phase = f"listing source '{source.source_name}'"
        with deadline_scope(deadline):
            infos = await deadline.wait(source.list_evaluators())
        if not isinstance(infos, list) or not all(isinstance(i, EvaluatorInfo) for i in infos):
            raise SourceError(f"list_evaluators() returned {type(infos).__name__}, expected a list of EvaluatorInfo")
        return infos

    async def one(source: EvaluatorSource) -> SourceListing:
        name = source.source_name
        cached = read_cached_list(source)
        if cached is not None and not refresh and time.time() - cached[0] <= max_age:
            return SourceListing(name, cached[1], cached_at=cached[0])
        try:
            infos = await ask(source)
        except Exception as exc:  # a third-party source may raise anything: the caller reports one line
            return SourceListing(name, cached[1] if cached else None, exc, cached[0] if cached else None)
        write_cached_list(source, infos)
        return SourceListing(name, infos)

    return list(await asyncio.gather(*(one(s) for s in sources)))
