"""An evaluator against human labels (``agentevals calibrate``): agreement, κ, confusion, self-consistency, probes.

Inputs are per-case verdicts, ``{case id: Call(verdict, score)}``: the human labels, and the evaluator's verdicts
in each of its repeated runs (the first run is the one compared with the labels); a probe compares the first run
with a run under that probe. Outputs are plain dicts (the ``-o json`` document; docs/trust.md explains each).

Example:
    ```python
    human = {"c1": Call("pass", 1.0), "c2": Call("fail", 0.0)}
    runs = [{"c1": Call("pass", 0.9), "c2": Call("pass", 0.8)}, {"c1": Call("pass", 0.9), "c2": Call("fail", 0.2)}]
    figures = agreement_figures(human, runs)        # {"n": 2, "agreement": {"value": 0.5, …}, "kappa": …}
    probe = probe_figures("verbosity", runs[0], {"c1": Call("pass", 1.0), "c2": Call("pass", 0.9)})
    ```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from . import stats
from .intervals import rate_interval

__all__ = [
    "CALIBRATION_SCHEMA_VERSION",
    "PROBE_TOLERANCE",
    "Call",
    "agreement_figures",
    "probe_figures",
]

CALIBRATION_SCHEMA_VERSION = 1
"""Version of the ``agentevals calibrate -o json`` document (a new key is a minor change: readers ignore it)."""

PROBE_TOLERANCE = {"verdict_change_rate": 0.10, "mean_score_shift": 0.05}
"""A probe fails when the lower bound of its verdict change rate's 95% interval is above 0.10, or when the whole
95% interval of its mean score shift lies beyond ±0.05: a bias larger than the tolerance that noise does not
explain (docs/trust.md)."""

PASS, FAIL = "pass", "fail"


@dataclass(frozen=True)
class Call:
    """One verdict on one case: ``pass``/``fail`` (None: no verdict, e.g. an ERROR row) and a score if any."""

    verdict: Optional[str]
    score: Optional[float] = None


def _figure(value: Optional[float], interval: Optional[tuple[float, float]]) -> dict[str, Any]:
    return {"value": value, "interval": list(interval) if interval is not None else None}


def _kappa_of(rows: Sequence[tuple[str, str]]) -> Optional[float]:
    return stats.cohen_kappa([h for h, _ in rows], [j for _, j in rows])


def _agreement_of(rows: Sequence[tuple[str, str]]) -> Optional[float]:
    return stats.percent_agreement([h for h, _ in rows], [j for _, j in rows])


def agreement_figures(human: Mapping[str, Call], runs: Sequence[Mapping[str, Call]], *,
                      seed: int = 0) -> dict[str, Any]:
    """Agreement of ``runs[0]`` with ``human`` over the cases both gave a verdict, and the self-consistency of
    ``runs`` (the same cases asked again).

    Keys: ``n`` (cases compared), ``agreement`` and ``kappa`` (``{value, interval}``: bootstrap 95% over
    cases), ``confusion`` (``{human verdict: {evaluator verdict: count}}``), ``per_class`` (precision, recall
    and support of each verdict, the human as the truth), ``base_rate`` (human pass rate) and
    ``evaluator_pass_rate`` (with ``base_rate_interval`` and ``evaluator_pass_rate_interval``: ``rate_interval``
    dicts), ``scores`` (cases with both scores: ``n``, ``pearson``, ``spearman``, ``mae`` with
    its interval), ``self_consistency`` (``repeats``, ``flip_rate`` with its interval, ``cases_flipped``), and
    ``unmatched`` (labelled cases the evaluator gave no verdict, verdicts with no label).
    """
    first = runs[0] if runs else {}
    cases = [c for c in human if human[c].verdict is not None and c in first and first[c].verdict is not None]
    rows = [(str(human[c].verdict), str(first[c].verdict)) for c in cases]
    truth, judged = [h for h, _ in rows], [j for _, j in rows]
    scored = [(human[c].score, first[c].score) for c in human
              if c in first and human[c].score is not None and first[c].score is not None]
    xs = [float(h) for h, _ in scored if h is not None]
    ys = [float(j) for _, j in scored if j is not None]
    out: dict[str, Any] = {
        "n": len(rows),
        "agreement": _figure(_agreement_of(rows), stats.bootstrap_interval(rows, _agreement_of, seed=seed)),
        "kappa": _figure(_kappa_of(rows), stats.bootstrap_interval(rows, _kappa_of, seed=seed)),
        "confusion": stats.confusion(truth, judged, [PASS, FAIL]),
        "per_class": stats.precision_recall(truth, judged, [PASS, FAIL]),
        "base_rate": stats.base_rate(truth, PASS),
        "evaluator_pass_rate": stats.base_rate(judged, PASS),
        # the same two rates with their Wilson 95% intervals (``results.intervals.rate_interval``)
        "base_rate_interval": rate_interval(truth.count(PASS), len(truth)),
        "evaluator_pass_rate_interval": rate_interval(judged.count(PASS), len(judged)),
        "scores": {
            "n": len(scored),
            "pearson": stats.pearson(xs, ys),
            "spearman": stats.spearman(xs, ys),
            "mae": _figure(stats.mean_absolute_error(xs, ys),
                           stats.bootstrap_interval(list(zip(xs, ys, strict=True)), lambda r: stats.mean_absolute_error(
                               [a for a, _ in r], [b for _, b in r]), seed=seed)),
        },
        "self_consistency": _self_consistency(runs, seed=seed),
        "unmatched": {
            "labelled_without_verdict": sorted(c for c in human if human[c].verdict is not None and c not in cases),
            "verdicts_without_label": sorted(c for c in first if c not in human or human[c].verdict is None),
        },
    }
    return out


def _self_consistency(runs: Sequence[Mapping[str, Call]], *, seed: int) -> dict[str, Any]:
    repeats: list[list[str]] = []
    if runs:
        for case, call in runs[0].items():
            verdicts = [r[case].verdict for r in runs if case in r]
            asked = [str(v) for v in verdicts if v is not None]
            if call.verdict is not None and len(asked) > 1:
                repeats.append(asked)
    return {"repeats": len(runs),
            "flip_rate": _figure(stats.flip_rate(repeats), stats.bootstrap_interval(repeats, stats.flip_rate, seed=seed)
                                 if repeats else None),
            "cases_flipped": sum(len(set(r)) > 1 for r in repeats), "cases_repeated": len(repeats)}


def probe_figures(probe: str, base: Mapping[str, Call], probed: Mapping[str, Call], *, seed: int = 0,
                  tolerance: Mapping[str, float] = PROBE_TOLERANCE) -> dict[str, Any]:
    """How ``probed`` (the evaluator under ``probe``) differs from ``base`` on the cases both gave a verdict:
    ``verdict_change_rate`` and ``mean_score_shift`` (probed − base), each with a bootstrap 95% interval over
    cases, ``fails`` (beyond ``tolerance``, see ``PROBE_TOLERANCE``) and ``why``."""
    cases = [c for c in base if c in probed and base[c].verdict is not None and probed[c].verdict is not None]
    changed = [float(base[c].verdict != probed[c].verdict) for c in cases]
    shifts = [float(probed[c].score) - float(base[c].score) for c in cases  # type: ignore[arg-type]
              if base[c].score is not None and probed[c].score is not None]
    change = _figure(stats.mean(changed), stats.bootstrap_interval(changed, stats.mean, seed=seed))
    shift = _figure(stats.mean(shifts), stats.bootstrap_interval(shifts, stats.mean, seed=seed))
    why = []
    limit_change, limit_shift = tolerance["verdict_change_rate"], tolerance["mean_score_shift"]
    if change["interval"] is not None and change["interval"][0] > limit_change:
        why.append(f"verdicts change in {change['value']:.0%} of cases (95% interval from "
                   f"{change['interval'][0]:.0%}, tolerance {limit_change:.0%})")
    if shift["interval"] is not None and (shift["interval"][0] > limit_shift or shift["interval"][1] < -limit_shift):
        why.append(f"scores shift by {shift['value']:+.3f} on average (95% interval {shift['interval'][0]:+.3f} to "
                   f"{shift['interval'][1]:+.3f}, tolerance ±{limit_shift:g})")
    return {"probe": probe, "n": len(cases), "verdict_change_rate": change, "mean_score_shift": shift,
            "tolerance": dict(tolerance), "fails": bool(why), "why": "; ".join(why) or None}
