"""Reports of a ``RunResult``: ``table`` (people), ``json`` (machines, versioned schema), ``summary`` (CI logs)."""

from __future__ import annotations

from collections.abc import Callable

from ..redact import redact
from ..results import RunResult
from .json import render_json
from .summary import render_summary
from .table import render_table

__all__ = ["RENDERERS", "render"]

RENDERERS: dict[str, Callable[..., str]] = {
    "table": render_table,
    "json": render_json,
    "summary": render_summary,
}


def render(run: RunResult, fmt: str = "table", *, color: bool = False) -> str:
    """Render a run in one of ``RENDERERS``, with secrets redacted (``agentevals.redact``)."""
    return redact(RENDERERS[fmt](run, color=color))
