"""Human labels in the run store (schema version 5): a verdict and/or a score, a note and who gave it, per stored
case or per metric of one; one label per (case, metric, labeler), labelling again replaces it."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, Union

from ..core._registry import did_you_mean
from ..core.redact import redact
from ..errors import ConfigError
from ..results import HumanLabel, utc_now

if TYPE_CHECKING:
    from ._db import Database

__all__ = ["LABEL_COLUMNS", "LabelRecord", "make_label"]

LABEL_COLUMNS = ("run", "case", "metric", "verdict", "score", "note", "labeler", "created_at")
"""The columns of a labels file (``agentevals labels import/export``), in order; ``created_at`` is optional on
import (now, when absent)."""

_VERDICTS = {"pass": "pass", "passed": "pass", "fail": "fail", "failed": "fail"}


@dataclass(frozen=True)
class LabelRecord:
    """One stored label and the case it belongs to."""

    run_id: str
    index: int
    """The case's position in the run (``runs show`` order)."""
    case_id: str
    label: HumanLabel

    def as_row(self) -> dict[str, Any]:
        """The label as a labels-file row (``LABEL_COLUMNS``; None where empty)."""
        label = self.label
        return {"run": self.run_id, "case": self.case_id, "metric": label.metric, "verdict": label.verdict,
                "score": label.score, "note": label.note, "labeler": label.labeler, "created_at": label.created_at}


def make_label(*, verdict: Optional[str] = None, score: Union[float, str, None] = None, metric: Optional[str] = None,
               note: Optional[str] = None, labeler: Optional[str] = None,
               created_at: Optional[str] = None) -> HumanLabel:
    """A checked ``HumanLabel`` (empty strings count as absent; secrets in the note redacted).

    Raises ``ConfigError`` (one line, no location: callers add the file and line) when the verdict is not
    pass/fail, the score is not a number in [0, 1], or neither is given.
    """
    verdict = (verdict or "").strip()
    normal = _VERDICTS.get(verdict.lower()) if verdict else None
    if verdict and normal is None:
        raise ConfigError(f"verdict {verdict!r} is not pass or fail")
    value: Optional[float] = None
    if isinstance(score, str):
        score = score.strip() or None
    if score is not None:
        if isinstance(score, bool):
            raise ConfigError(f"score {score!r} is not a number in [0, 1]")
        try:
            value = float(score)
        except (TypeError, ValueError):
            raise ConfigError(f"score {score!r} is not a number in [0, 1]") from None
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise ConfigError(f"score {score!r} is not a number in [0, 1]")
    if normal is None and value is None:
        raise ConfigError("a label needs a verdict (pass or fail) or a score")
    return HumanLabel(metric=(metric or "").strip() or None, verdict=normal, score=value,
                      note=redact(note) if note else None, labeler=redact(labeler.strip()) if labeler and labeler.strip()
                      else None, created_at=(created_at or "").strip() or utc_now())


def resolve_case(db: Database, run_id: str, case: Union[str, int]) -> tuple[int, str]:
    """(index, case id) of ``case`` (its case id, or its index as an int) in the run; ``ConfigError`` when the run
    has no such case."""
    if isinstance(case, int):
        rows = db.execute("SELECT idx, case_id FROM cases WHERE run_id = ? AND idx = ?", (run_id, case))
    else:
        rows = db.execute("SELECT idx, case_id FROM cases WHERE run_id = ? AND case_id = ?", (run_id, case))
    if not rows:
        what = f"case #{case}" if isinstance(case, int) else f"case {case!r}"
        raise ConfigError(f"no {what} in run {run_id} (see 'agentevals runs show {run_id}' for its case ids)")
    index, case_id = min(rows)
    return int(index), str(case_id)


def check_metric(db: Database, run_id: str, index: int, case_id: str, metric: str) -> None:
    """``ConfigError`` unless the stored case has a result row named ``metric``."""
    names = [row[0] for row in db.execute("SELECT metric FROM metric_results WHERE run_id = ? AND idx = ? "
                                          "ORDER BY pos", (run_id, index))]
    if metric not in names:
        known = ", ".join(dict.fromkeys(names)) or "none"
        raise ConfigError(f"case {case_id!r} of run {run_id} has no metric {metric!r}{did_you_mean(metric, names)} "
                          f"(its metrics: {known})")


def write_labels(db: Database, records: Sequence[LabelRecord]) -> None:
    """Store ``records`` (each replacing the label of the same case, metric and labeler), in the caller's
    transaction."""
    for r in records:
        label = r.label
        db.execute("DELETE FROM labels WHERE run_id = ? AND idx = ? AND COALESCE(metric, '') = ? "
                   "AND COALESCE(labeler, '') = ?", (r.run_id, r.index, label.metric or "", label.labeler or ""))
        db.execute("INSERT INTO labels (run_id, idx, case_id, metric, verdict, score, note, labeler, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (r.run_id, r.index, r.case_id, label.metric, label.verdict, label.score, label.note, label.labeler,
                    label.created_at))


def read_labels(db: Database, run_id: Optional[str] = None, *, index: Optional[int] = None,
                indexes: Optional[Sequence[int]] = None) -> list[LabelRecord]:
    """Labels of one run (of its case at ``index``, or its cases at ``indexes``, when given), or of every run
    (oldest run first), each run's in case order, the whole case's label before its metrics' ones."""
    where = ""
    params: list[Any] = []
    if run_id is not None:
        where, params = " WHERE l.run_id = ?", [run_id]
        if index is not None:
            where, params = where + " AND l.idx = ?", [run_id, index]
        elif indexes is not None:
            where, params = where + f" AND l.idx IN ({', '.join('?' * len(indexes))})", [run_id, *indexes]
    rows = db.execute(
        "SELECT l.run_id, l.idx, l.case_id, l.metric, l.verdict, l.score, l.note, l.labeler, l.created_at "
        f"FROM labels l JOIN runs r ON r.run_id = l.run_id{where} "
        "ORDER BY r.started_at, l.run_id, l.idx, COALESCE(l.metric, ''), COALESCE(l.labeler, ''), l.created_at", params)
    return [LabelRecord(run, int(idx), case_id, HumanLabel(metric=metric, verdict=verdict, score=score, note=note,
                                                           labeler=labeler, created_at=created_at))
            for run, idx, case_id, metric, verdict, score, note, labeler, created_at in rows]


def delete_label(db: Database, run_id: str, index: int, *, metric: Optional[str] = None,
                 labeler: Optional[str] = None) -> bool:
    """Remove one label; whether there was one."""
    key = (run_id, index, metric or "", labeler or "")
    found = db.execute("SELECT COUNT(*) FROM labels WHERE run_id = ? AND idx = ? AND COALESCE(metric, '') = ? "
                       "AND COALESCE(labeler, '') = ?", key)
    db.execute("DELETE FROM labels WHERE run_id = ? AND idx = ? AND COALESCE(metric, '') = ? "
               "AND COALESCE(labeler, '') = ?", key)
    return bool(found and found[0][0])
