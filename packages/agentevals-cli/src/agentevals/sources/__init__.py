"""Evaluator sources: where ``type: remote`` evaluators and ``agentevals evaluator list`` entries come from.

Built in: ``builtin`` (agentevals' own metrics; listed only), ``github`` (the community repository)
and ``local`` (a directory or git repository on disk). More come from ``register_source()`` or the
``agentevals.sources`` entry-point group.
"""

from __future__ import annotations

import asyncio

from .._registry import Registry
from .base import EvaluatorInfo as EvaluatorInfo
from .base import EvaluatorSource as EvaluatorSource
from .base import SourceError as SourceError
from .base import SourceNotConfigured as SourceNotConfigured

__all__ = [
    "SOURCES",
    "EvaluatorInfo",
    "EvaluatorSource",
    "SourceError",
    "SourceNotConfigured",
    "collect_evaluators",
    "get_source",
    "get_sources",
    "register_source",
]

SOURCES: Registry[EvaluatorSource | type[EvaluatorSource]] = Registry(
    "evaluator source",
    "agentevals.sources",
    {
        "builtin": "agentevals.sources.builtin:BuiltinEvaluatorSource",
        "github": "agentevals.sources.github:GitHubEvaluatorSource",
        "local": "agentevals.sources.local:LocalEvaluatorSource",
    },
)
"""Source name (the ``source:`` of remote entries) → source (classes are instantiated on first use)."""


def register_source(source: EvaluatorSource) -> None:
    """Add (or replace) a source under its ``source_name``."""
    if not isinstance(source, EvaluatorSource):
        raise TypeError(f"register_source() needs an EvaluatorSource instance, got {type(source).__name__}")
    name = source.source_name
    if not isinstance(name, str) or not name:
        raise ValueError(f"{type(source).__name__}.source_name must be a non-empty string, got {name!r}")
    SOURCES.register(name, source)


def get_source(name: str) -> EvaluatorSource:
    """The source registered as ``name`` (``ConfigError`` naming the known ones otherwise)."""
    plugin = SOURCES.get(name)
    if isinstance(plugin, type):
        plugin = plugin()
        SOURCES.register(name, plugin)
    return plugin


def get_sources() -> list[EvaluatorSource]:
    """Every registered source, by name."""
    return [get_source(name) for name in SOURCES.names()]


async def collect_evaluators(
    names: list[str] | None = None, *, timeout: float = 20.0
) -> list[tuple[str, list[EvaluatorInfo] | Exception]]:
    """List each source concurrently: (name, its evaluators) or (name, the exception it raised).

    Never raises for a source: an unreachable one gives its exception (``str()`` is one line), a
    source that ran out of ``timeout`` an ``EvaluatorFailure``.
    """
    from ..execution.deadline import Deadline, deadline_scope

    sources = [get_source(n) for n in names] if names else get_sources()

    async def one(source: EvaluatorSource) -> list[EvaluatorInfo] | Exception:
        deadline = Deadline(timeout)
        deadline.phase = f"listing source '{source.source_name}'"
        try:
            with deadline_scope(deadline):
                infos = await deadline.wait(source.list_evaluators())
        except Exception as exc:  # a third-party source may raise anything: the caller reports one line
            return exc
        if not isinstance(infos, list) or not all(isinstance(i, EvaluatorInfo) for i in infos):
            return SourceError(f"list_evaluators() returned {type(infos).__name__}, expected a list of EvaluatorInfo")
        return infos

    results = await asyncio.gather(*(one(s) for s in sources))
    return [(s.source_name, r) for s, r in zip(sources, results, strict=True)]
