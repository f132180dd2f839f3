"""Cached evaluator lists, so that ``agentevals evaluator list`` is fast and still answers offline.

One JSON file per source under ``<cache>/indexes/<source cache key>.json``: when the list was fetched
and the evaluators. Sources that read the disk (``refresh = True``: builtin, local) are never cached.
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from pathlib import Path, PurePosixPath

from ..execution.cache import cache_root
from .base import EvaluatorInfo, EvaluatorSource

__all__ = ["read_cached_list", "write_cached_list"]

_FIELDS = {f.name for f in dataclasses.fields(EvaluatorInfo)}


def _path(source: EvaluatorSource) -> Path | None:
    if source.refresh:
        return None
    try:
        key = PurePosixPath(source.cache_key())
    except Exception:  # a source that cannot name its cache is simply not cached
        return None
    if not key.parts or key.is_absolute() or ".." in key.parts:
        return None
    return cache_root() / "indexes" / f"{key}.json"


def read_cached_list(source: EvaluatorSource) -> tuple[float, list[EvaluatorInfo]] | None:
    """(when it was fetched, the evaluators) of the source's cached list, or None."""
    path = _path(source)
    if path is None or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text("utf-8"))
        infos = [EvaluatorInfo(**{k: v for k, v in item.items() if k in _FIELDS}) for item in data["evaluators"]]
        return float(data["fetched_at"]), infos
    except (OSError, ValueError, TypeError, KeyError):  # unreadable: as if there were none
        return None


def write_cached_list(source: EvaluatorSource, infos: list[EvaluatorInfo]) -> None:
    """Remember the source's list (best effort: a cache that cannot be written is skipped)."""
    path = _path(source)
    if path is None:
        return
    document = {"fetched_at": time.time(), "evaluators": [dataclasses.asdict(info) for info in infos]}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_suffix(f".{os.getpid()}.tmp")
        staged.write_text(json.dumps(document), "utf-8")
        os.replace(staged, path)
    except OSError:
        pass
