"""Reports of a ``RunResult``: ``table`` (people), ``json`` (machines, versioned schema), ``summary`` (CI
logs), ``junit`` (CI test tabs), ``markdown`` (PR comments, ``$GITHUB_STEP_SUMMARY``), ``html`` (one
self-contained file). Each renderer is ``(run, *, color, context) -> str``.

Example:
    ```python
    from agentevals.report import ReportContext, render

    html = render(run, "html", context=ReportContext(incomplete=None))
    ```
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Optional

from ..redact import redact
from ..results import RunResult
from ._context import ReportContext

__all__ = ["FILE_EXTENSIONS", "RENDERERS", "ReportContext", "render"]

RENDERERS: dict[str, str] = {
    "table": "agentevals.report.table:render_table",
    "json": "agentevals.report.json:render_json",
    "summary": "agentevals.report.summary:render_summary",
    "junit": "agentevals.report.junit:render_junit",
    "markdown": "agentevals.report.markdown:render_markdown",
    "html": "agentevals.report.html:render_html",
}
"""Format name → ``module:function`` (imported on first use: jinja2 only when HTML is asked for)."""

FILE_EXTENSIONS = {".json": "json", ".xml": "junit", ".md": "markdown", ".html": "html", ".htm": "html",
                   ".txt": "table"}
"""What ``--output-file NAME`` writes when no ``-o`` is given."""


def renderer(fmt: str) -> Callable[..., str]:
    module, _, attr = RENDERERS[fmt].partition(":")
    return getattr(importlib.import_module(module), attr)


def render(run: RunResult, fmt: str = "table", *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    """Render a run in one of ``RENDERERS``, with secrets redacted (``agentevals.redact``) and no line able to
    run a CI workflow command (``report._workflow``)."""
    from ._workflow import defuse

    return defuse(redact(renderer(fmt)(run, color=color, context=context)), fmt)
