"""Reports of a ``RunResult``: ``table`` (people), ``json`` (machines, versioned schema), ``summary`` (CI
logs), ``junit`` (CI test tabs), ``markdown`` (PR comments, ``$GITHUB_STEP_SUMMARY``), ``html`` (one
self-contained file), and third-party formats: each is a ``ReportFormat`` in the ``REPORT_FORMATS`` registry
(``report.formats``; entry-point group ``agentevals.report_formats``) whose ``render(run, *, color, context)``
returns the text.

Example:
    ```python
    from agentevals.report import ReportContext, render

    html = render(run, "html", context=ReportContext(incomplete=None))
    ```
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Optional

from .formats import REPORT_FORMATS, ReportFormat

if TYPE_CHECKING:
    from ..results import RunResult
    from ._context import ReportContext

__all__ = ["FILE_EXTENSIONS", "RENDERERS", "REPORT_FORMATS", "ReportContext", "ReportFormat", "render", "render_chunks"]

RENDERERS = REPORT_FORMATS
"""Deprecated alias of ``REPORT_FORMATS`` (a dict of ``module:function`` strings before 0.12)."""

FILE_EXTENSIONS = {".json": "json", ".xml": "junit", ".md": "markdown", ".html": "html", ".htm": "html",
                   ".txt": "table"}
"""What ``--output-file NAME`` writes when no ``-o`` is given."""


def __getattr__(name: str) -> Any:
    # ``ReportContext`` needs the result model (pydantic): imported when first asked for, so that reading
    # the format names (``--help``) stays light.
    if name == "ReportContext":
        from ._context import ReportContext

        return ReportContext
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def render(run: RunResult, fmt: str = "table", *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    """Render a run in one of ``REPORT_FORMATS``, with secrets redacted (``agentevals.core.redact``) and no line able to
    run a CI workflow command (``report._workflow``). ``ConfigError`` for an unknown or broken format."""
    from ..core.redact import redact
    from ._workflow import defuse

    return defuse(redact(REPORT_FORMATS.get(fmt).render(run, color=color, context=context)), fmt)


def render_chunks(run: RunResult, fmt: str = "table", *, color: bool = False,
                  context: Optional[ReportContext] = None) -> Iterator[str]:
    """``render``'s text in pieces (see ``ReportFormat.chunks``): how a report file of a 100,000-case run
    is written without holding its whole text."""
    from ..core.redact import redact
    from ._workflow import defuse

    for chunk in REPORT_FORMATS.get(fmt).chunks(run, color=color, context=context):
        yield defuse(redact(chunk), fmt)
