"""Human labels beside machine verdicts: where a person and an evaluator disagree (``runs show --disagreements``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Optional

from . import CaseResult, HumanLabel, MetricResult, Status, case_status

__all__ = ["Disagreement", "disagreements", "human_cell", "human_text", "label_disagrees"]


@dataclass(frozen=True)
class Disagreement:
    """A human label whose pass/fail differs from the evaluator's PASSED/FAILED (of the metric it labels, or of
    the whole case)."""

    case_id: str
    metric: Optional[str]
    """None: the label is of the whole case (compared with the case's status)."""
    machine: Status
    machine_score: Optional[float]
    label: HumanLabel

    def describe(self) -> str:
        """``CASE · METRIC: evaluator FAILED (0.143) · human pass (ana): note``."""
        what = f"{self.case_id} · {self.metric}" if self.metric else f"{self.case_id} · whole case"
        score = f" ({self.machine_score:.3g})" if self.machine_score is not None else ""
        return f"{what}: evaluator {self.machine.value}{score} · human {human_text(self.label)}"

    def as_dict(self) -> dict[str, Any]:
        return {"case": self.case_id, "metric": self.metric, "evaluator": self.machine.value,
                "evaluator_score": self.machine_score, "label": self.label.model_dump(mode="json")}


def human_text(label: HumanLabel) -> str:
    """``fail 0.2 (ana): the note`` (what the person said, on one line: the note's line breaks become spaces)."""
    given = " ".join(x for x in (label.verdict, f"{label.score:.3g}" if label.score is not None else None) if x)
    who = f" ({label.labeler})" if label.labeler else ""
    note = f": {' '.join(label.note.split())}" if label.note else ""
    return f"{given}{who}{note}"


def label_disagrees(label: HumanLabel, case: CaseResult) -> Optional[tuple[Status, Optional[float]]]:
    """The machine's (status, score) when ``label`` disagrees with it, else None. A metric label is compared with
    that metric's rows (a label with only a score: against the row's threshold); a whole-case label with the
    case's status. Only PASSED and FAILED count: an ERROR or NOT_EVALUATED row has no verdict to disagree with."""
    if label.metric is None:
        status = case_status(case)
        rows: list[tuple[Status, Optional[float], Optional[float]]] = [(status, case.score, None)]
    else:
        rows = [(m.status, m.score, m.threshold) for m in case.metrics if m.name == label.metric]
    for status, score, threshold in rows:
        if status not in (Status.PASSED, Status.FAILED):
            continue
        human = label.passes(threshold)
        if human is not None and human != (status == Status.PASSED):
            return status, score
    return None


def disagreements(cases: Iterable[CaseResult]) -> list[Disagreement]:
    """Every label of ``cases`` that disagrees with its evaluator, in case order."""
    out = []
    for case in cases:
        for label in case.labels:
            found = label_disagrees(label, case)
            if found is not None:
                out.append(Disagreement(case.case_id, label.metric, found[0], found[1], label))
    return out


def human_cell(metric: Optional[MetricResult], case: CaseResult, *, most: int = 3) -> str:
    """The HUMAN cell of a metric row (``metric`` None: of the whole case): its labels (the first ``most``, then
    how many more), ``≠`` before one that disagrees with the evaluator (empty when none).

    Example: ``≠ fail (ana), 0.7, +2 more``."""
    if not case.labels:  # most cases: no copy of the case for nothing
        return ""
    cells = []
    name = metric.name if metric is not None else None
    against = _only(case, metric) if metric is not None else case
    for label in case.labels:
        if label.metric == name:
            given = " ".join(x for x in (label.verdict, f"{label.score:.3g}" if label.score is not None else None)
                             if x)
            mark = "≠ " if label_disagrees(label, against) else ""
            cells.append(f"{mark}{given}" + (f" ({label.labeler})" if label.labeler else ""))
    more = f", +{len(cells) - most} more" if len(cells) > most else ""
    return ", ".join(cells[:most]) + more


def _only(case: CaseResult, metric: MetricResult) -> CaseResult:
    """``case`` with ``metric`` as its only row (a label compared with that row, not with a namesake)."""
    return case.model_copy(update={"metrics": [metric]})
