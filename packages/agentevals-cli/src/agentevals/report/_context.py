"""What a report shows besides the run itself: baseline comparison, gate results, incompleteness."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from ..results import CaseResult, MetricResult, RunResult, Status
from ..results.intervals import run_intervals

if TYPE_CHECKING:
    from ..results.compare import Comparison
    from ..results.gates import GateOutcome
    from ..results.labels import Disagreement

__all__ = ["ReportContext", "failing_rows", "headline_lines", "intervals_of"]


@dataclass
class ReportContext:
    """Passed to every renderer; all optional."""

    comparison: Optional[Comparison] = None
    """The ``--baseline`` comparison: shown first in every format."""
    gates: Optional[GateOutcome] = None
    incomplete: Optional[str] = None
    """Why the report holds only part of the run (e.g. interrupted by SIGINT)."""
    strict: bool = False
    quiet: bool = False
    """Failures and totals only (``-q``)."""
    disagreements: Optional[list[Disagreement]] = None
    """Human labels that disagree with the evaluators (``runs show`` of a labelled run): the JSON report lists
    them; None when the run has no labels."""
    sources: Optional[list[dict[str, Any]]] = None
    """What a stored run read (``runs show``): each pull source with its window and trace count, then each file
    with its case count (``uri``, ``kind``: pull or file); None outside ``runs show``."""
    _intervals: Optional[tuple[RunResult, bool, dict[str, Any]]] = field(default=None, init=False, repr=False,
                                                                          compare=False)
    """``run_intervals`` of the run reported, its strictness and the figures: kept by ``intervals_of``."""


def intervals_of(run: RunResult, context: Optional[ReportContext]) -> dict[str, Any]:
    """``run_intervals(run, strict=context.strict)``, computed on first use and kept on ``context``: every format
    written from one context (``-o json -o html …``) shares one 2000-resample bootstrap per metric::

        figures = intervals_of(run, context)  # the same dict for the next format of this run
    """
    if context is None:
        return run_intervals(run)
    held = context._intervals
    if held is None or held[0] is not run or held[1] != context.strict:  # a context reused for another run
        held = context._intervals = (run, context.strict, run_intervals(run, strict=context.strict))
    return held[2]


def failing_rows(run: RunResult) -> list[tuple[CaseResult, MetricResult]]:
    """Every FAILED or ERROR row, in run order."""
    return [(c, m) for c in run.cases for m in c.metrics if m.status in (Status.FAILED, Status.ERROR)]


def headline_lines(run: RunResult, context: Optional[ReportContext]) -> list[str]:
    """Lines every report puts first: incompleteness, the baseline's regressions, failed gates."""
    if context is None:
        return []
    lines = []
    if context.incomplete:
        lines.append(f"INCOMPLETE: {context.incomplete}")
    if context.comparison is not None:
        lines.append(context.comparison.headline())
        lines.extend(f"  regression: {r.describe()}" for r in context.comparison.regressions[:50])
        extra = len(context.comparison.regressions) - 50
        if extra > 0:
            lines.append(f"  … {extra} more regressions")
        if context.comparison.paired:  # after the rows: is what moved more than noise?
            lines.append(context.comparison.paired_line())
    return lines
