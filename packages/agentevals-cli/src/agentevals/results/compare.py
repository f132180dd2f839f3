"""Two runs side by side: regressions, fixes and score deltas per case and metric.

``agentevals runs compare A B`` prints it and ``run --baseline`` gates on it. Rows are matched by
(case id, metric name); a case id seen several times (repetitions) is matched by occurrence.

    regression   PASSED (or not there) before, FAILED or ERROR now
    fix          FAILED or ERROR before, PASSED now
    delta        both scored, the score moved

Beside these row changes, ``paired`` says per metric whether the change is a significant ``regression``,
an ``improvement`` or ``within noise`` (McNemar's exact test, paired bootstrap: ``results.paired``), and
``stability`` sorts repeated eval cases into stable pass, flaky and stable fail.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from ..errors import ConfigError
from . import MetricResult, RunResult, Status
from .paired import ALPHA, PairedMetric, format_p, paired_changes, stability

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["Comparison", "RowChange", "compare_runs", "compare_stored", "load_baseline"]

_FAILING = (Status.FAILED, Status.ERROR)


@dataclass
class RowChange:
    """One (case, metric) row in both runs."""

    case_id: str
    metric: str
    before: Optional[Status]
    after: Optional[Status]
    score_before: Optional[float] = None
    score_after: Optional[float] = None
    reason: Optional[str] = None
    """Why the row fails now (for regressions)."""

    @property
    def delta(self) -> Optional[float]:
        if self.score_before is None or self.score_after is None:
            return None
        return self.score_after - self.score_before

    def describe(self) -> str:
        before = self.before.value if self.before else "absent"
        after = self.after.value if self.after else "absent"
        scores = ""
        if self.score_before is not None or self.score_after is not None:
            scores = f" (score {_num(self.score_before)} → {_num(self.score_after)})"
        why = f": {self.reason}" if self.reason else ""
        return f"{self.case_id} {self.metric}: {before} → {after}{scores}{why}"


@dataclass
class Comparison:
    """What changed from ``baseline`` to ``current``."""

    baseline: str
    """Label of the baseline: a run id or a file name."""
    current: str
    regressions: list[RowChange] = field(default_factory=list)
    fixes: list[RowChange] = field(default_factory=list)
    deltas: list[RowChange] = field(default_factory=list)
    """Rows scored in both runs whose score changed, largest drop first."""
    only_before: int = 0
    """Rows of the baseline that the current run does not have."""
    alpha: float = ALPHA
    """The significance level of the paired tests (``--alpha``)."""
    paired: list[PairedMetric] = field(default_factory=list)
    """``case`` and each metric: regression, improvement or within noise (``results.paired``)."""
    stability: dict[str, Optional[dict[str, list[str]]]] = field(default_factory=dict)
    """``{"baseline": ..., "current": ...}``: each run's repeated eval cases as stable pass, flaky, stable fail
    (None for a run without repetitions)."""

    @property
    def significant_regressions(self) -> list[PairedMetric]:
        """The paired rows classified ``regression``: what ``--fail-on regression`` fails on."""
        return [p for p in self.paired if p.verdict == "regression"]

    def paired_line(self) -> str:
        """``paired (α 0.05): 1 significant regression (tool_trajectory_avg_score p=1.8e-12), 2 within noise``."""
        if not self.paired:
            return ""
        parts = []
        for verdict in ("regression", "improvement"):
            rows = [p for p in self.paired if p.verdict == verdict]
            if rows:
                named = ", ".join(f"{p.metric} p={format_p(p.p_value) if p.p_value is not None else 'n/a'}"
                                  for p in rows)
                parts.append(f"{len(rows)} significant {verdict}{'s' if len(rows) != 1 else ''} ({named})")
        noise = sum(1 for p in self.paired if p.verdict == "within noise")
        if noise:
            parts.append(f"{noise} within noise")
        flaky = (self.stability.get("current") or {}).get("flaky") or []
        if flaky:
            parts.append(f"{len(flaky)} flaky eval case{'s' if len(flaky) != 1 else ''} ({', '.join(flaky[:5])}"
                         f"{', …' if len(flaky) > 5 else ''})")
        return f"paired (α {self.alpha:g}): " + ", ".join(parts)

    @property
    def moved(self) -> list[RowChange]:
        """The score changes that are neither a regression nor a fix."""
        flagged = {id(r) for r in (*self.regressions, *self.fixes)}
        return [r for r in self.deltas if id(r) not in flagged]

    def as_dict(self) -> dict:
        def rows(items: list[RowChange]) -> list[dict]:
            return [{"case_id": r.case_id, "metric": r.metric, "before": r.before.value if r.before else None,
                     "after": r.after.value if r.after else None, "score_before": r.score_before,
                     "score_after": r.score_after, "delta": r.delta, "reason": r.reason} for r in items]

        return {"baseline": self.baseline, "current": self.current, "regressions": rows(self.regressions),
                "fixes": rows(self.fixes), "deltas": rows(self.deltas), "only_in_baseline": self.only_before,
                "alpha": self.alpha, "paired": [p.as_dict() for p in self.paired], "stability": self.stability}

    def headline(self) -> str:
        """``baseline RUN: 1 regression, 2 fixes, 3 score changes``."""
        n = len(self.regressions)
        return (f"baseline {self.baseline}: {n} regression{'s' if n != 1 else ''}, {len(self.fixes)} "
                f"fix{'es' if len(self.fixes) != 1 else ''}, {len(self.deltas)} score change"
                f"{'s' if len(self.deltas) != 1 else ''}")


def _rows(run: RunResult) -> dict[tuple[str, str, int], MetricResult]:
    out: dict[tuple[str, str, int], MetricResult] = {}
    for case in run.cases:
        for m in case.metrics:
            n = 0
            while (case.case_id, m.name, n) in out:
                n += 1
            out[(case.case_id, m.name, n)] = m
    return out


def compare_runs(baseline: RunResult, current: RunResult, *, baseline_label: str = "baseline",
                 current_label: str = "current", alpha: float = ALPHA) -> Comparison:
    """Regressions, fixes and score deltas from ``baseline`` to ``current``, and the paired tests at ``alpha``
    (see the module docstring)."""
    before, after = _rows(baseline), _rows(current)
    result = Comparison(baseline=baseline_label, current=current_label, alpha=alpha,
                        paired=paired_changes(baseline, current, alpha=alpha),
                        stability={"baseline": stability(baseline), "current": stability(current)})
    for key, now in after.items():
        was = before.get(key)
        change = RowChange(key[0], key[1], was.status if was else None, now.status,
                           was.score if was else None, now.score, reason=now.error or now.reason)
        if now.status in _FAILING and (was is None or was.status not in _FAILING):
            result.regressions.append(change)
        elif was is not None and was.status in _FAILING and now.status == Status.PASSED:
            change.reason = None
            result.fixes.append(change)
        if change.delta:
            result.deltas.append(change)
    result.only_before = len(before.keys() - after.keys())
    result.deltas.sort(key=lambda c: c.delta or 0.0)
    return result


def compare_stored(store: RunStore, a: str, b: str = "latest", *,
                   alpha: float = ALPHA) -> tuple[Comparison, RunResult, RunResult]:
    """Stored run ``a`` (the baseline; id, unique prefix or ``latest``) against ``b``, labelled by their run
    ids, with the two runs. ``runs compare``, the API, MCP and the UI's compare page all show this."""
    id_a, id_b = store.resolve(a), store.resolve(b)
    run_a, run_b = store.load_run(id_a), store.load_run(id_b)
    return compare_runs(run_a, run_b, baseline_label=id_a, current_label=id_b, alpha=alpha), run_a, run_b


def load_baseline(ref: str, store: Optional[RunStore]) -> tuple[RunResult, str]:
    """The baseline named by ``ref``: an earlier ``-o json`` report (a file) or a stored run (id, prefix,
    ``latest``). Raises ``ConfigError`` naming what was tried."""
    path = Path(ref)
    if path.is_file():
        try:
            return RunResult.model_validate(json.loads(path.read_text("utf-8"))), path.name
        except (OSError, ValueError) as exc:
            raise ConfigError(f"--baseline {ref}: not a JSON report of agentevals run -o json: "
                              f"{str(exc).strip().splitlines()[0]}") from None
    if store is None:
        raise ConfigError(f"--baseline {ref}: no such file, and there is no run store to look it up (--no-store)")
    run_id = store.resolve(ref, batch=True)
    return store.load_run(run_id), run_id


def _num(value: Optional[float]) -> str:
    if value is None:
        return "-"
    text = f"{value:.3f}".rstrip("0").rstrip(".")
    return text or "0"
