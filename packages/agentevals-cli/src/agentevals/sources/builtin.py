"""agentevals' builtin metrics (``type: builtin``) as a source: listed, never fetched."""

from __future__ import annotations

import importlib
from pathlib import Path

from .base import EvaluatorInfo, EvaluatorSource, SourceError

__all__ = ["BuiltinEvaluatorSource"]


class BuiltinEvaluatorSource(EvaluatorSource):
    """Metrics that ship with agentevals-cli (``agentevals.evaluators.builtin.METRICS``)."""

    refresh = True  # listed from this installation: never cached

    name = "builtin"

    async def list_evaluators(self) -> list[EvaluatorInfo]:
        try:
            metrics = importlib.import_module("agentevals.evaluators.builtin").METRICS
        except (ImportError, AttributeError):
            return []  # a build without builtin metrics
        infos = []
        for name in metrics.names():
            description = str(getattr(metrics.get(name), "description", "") or "")
            infos.append(EvaluatorInfo(name=name, description=description, source=self.source_name))
        return infos

    async def fetch_evaluator(self, ref: str, dest: Path) -> Path:
        raise SourceError("builtin metrics are part of agentevals; use 'type: builtin' instead of 'type: remote'")
