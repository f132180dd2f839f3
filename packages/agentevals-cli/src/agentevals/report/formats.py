"""Report formats (``-o FORMAT``), registered by name: ``table``, ``summary``, ``json``, ``junit``,
``markdown``, ``html``, and third-party ones from the ``agentevals.report_formats`` entry-point group.

Example:
    ```python
    class AcmeReport(ReportFormat):
        name = "acme"

        def render(self, run: RunResult, *, color: bool = False, context: ReportContext | None = None) -> str:
            return f"{run.passed}/{run.total} passed\\n"
    ```

    ``[project.entry-points."agentevals.report_formats"] acme = "acme_reports:AcmeReport"``; then
    ``agentevals run … -o acme`` (or ``-o acme=out.txt``).
"""

from __future__ import annotations

import abc
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar, Optional

from ..core._registry import Registry

if TYPE_CHECKING:
    from ..results import RunResult
    from ._context import ReportContext

__all__ = ["REPORT_FORMATS", "ReportFormat"]


class ReportFormat(abc.ABC):
    """Renders a whole run as text (redaction and workflow-command defusing are applied after)."""

    name: ClassVar[str]
    """Registry key, entry-point name and ``-o`` value."""
    aliases: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        """The report of ``run``; ``color`` only for terminals; ``context`` says what is missing from the run."""

    def chunks(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None
               ) -> Iterator[str]:
        """The report in pieces whose concatenation is ``render``'s text, each starting a line or with a
        character that cannot start a workflow command (redaction and defusing apply piece by piece): a
        format that can write a big run without holding its whole text overrides it (``json`` does)."""
        yield self.render(run, color=color, context=context)


REPORT_FORMATS: Registry[ReportFormat] = Registry(
    "report format",
    "agentevals.report_formats",
    {
        "table": "agentevals.report.table:TableReport",
        "summary": "agentevals.report.summary:SummaryReport",
        "json": "agentevals.report.json:JsonReport",
        "junit": "agentevals.report.junit:JunitReport",
        "markdown": "agentevals.report.markdown:MarkdownReport",
        "html": "agentevals.report.html:HtmlReport",  # imports jinja2 only when rendered
    },
    base=ReportFormat,
    instantiate=True,
)
"""Format name → ``ReportFormat`` instance."""
