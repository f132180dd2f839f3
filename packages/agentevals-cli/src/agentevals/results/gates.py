"""What decides the exit code: the documented rule, in one place.

    STATUS decides, never VERDICT. VERDICT is AgentV's grade of the score (pass ≥ 0.8, borderline ≥ 0.6);
    STATUS is the score against the evaluator's threshold, and only it counts.

    Without a gate     exit 1 when any row is FAILED or ERROR (NOT_EVALUATED too with --strict), an
                       input cannot be read, the run stopped early, or nothing at all was evaluated.
    --min-pass-rate R  the run passes when its pass rate (cases that passed / cases evaluated) is at
                       least R; ``METRIC=R`` sets the bar for one metric's rows. Failing rows within the
                       bar no longer fail the run.
    --baseline REF     the run fails only on regressions against REF (a row that passed, or was not
                       there, and now fails or errors); failures that were already there do not count.
    --gate-on lower-bound
                       --min-pass-rate compares the Wilson 95% lower bound of the pass rate with R instead
                       of the rate itself: the run passes only when the rate is above R beyond noise
                       (default ``point``: the rate itself, as before).
    --fail-on regression
                       with --baseline: fail only on a metric (or the case verdict) whose change is a
                       significant regression (McNemar's exact test at --alpha, ``results.paired``),
                       not on every row that flipped (default ``any``: every regressed row, as before).
    Both               every gate must pass.
    Always             an unreadable input, a run that stopped early, or nothing evaluated exits 1.

Pass rates count PASSED, FAILED and ERROR rows (and NOT_EVALUATED with --strict); a case passes when
none of its rows failed or errored and one passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from ..errors import ConfigError
from . import RunResult, evaluated_cases
from .intervals import format_interval, rate_interval

if TYPE_CHECKING:  # the comparison module (and its paired tests) loads only for a run with a baseline
    from .compare import Comparison

__all__ = ["GateOutcome", "Gates", "check_gates", "format_rate", "parse_min_pass_rates"]


@dataclass
class Gates:
    """The gates asked for on the command line."""

    min_pass_rate: Optional[float] = None
    metric_min_pass_rates: dict[str, float] = field(default_factory=dict)
    comparison: Optional[Comparison] = None
    gate_on: str = "point"
    """What ``--min-pass-rate`` compares: ``point`` (the pass rate itself) or ``lower-bound`` (its Wilson 95%
    lower bound)."""
    fail_on: str = "any"
    """What fails a ``--baseline`` run: ``any`` regressed row, or only a significant ``regression``."""

    @property
    def any(self) -> bool:
        return self.min_pass_rate is not None or bool(self.metric_min_pass_rates) or self.comparison is not None


@dataclass
class GateOutcome:
    """The exit code and, for each gate that failed, one line saying why."""

    exit_code: int
    failures: list[str] = field(default_factory=list)
    passed: list[str] = field(default_factory=list)


def parse_min_pass_rates(values: tuple[str, ...] | list[str]) -> tuple[Optional[float], dict[str, float]]:
    """``("0.9", "trajectory=0.95")`` → ``(0.9, {"trajectory": 0.95})``; ``ConfigError`` on a bad value."""
    overall: Optional[float] = None
    per_metric: dict[str, float] = {}
    for value in values:
        name, _, rate_text = value.rpartition("=")
        try:
            rate = float(rate_text)
        except ValueError:
            rate = math.nan
        if not 0.0 <= rate <= 1.0:
            raise ConfigError(f"--min-pass-rate {value}: expected a rate between 0 and 1 (e.g. 0.9 or METRIC=0.9)")
        if name:
            per_metric[name] = rate
        else:
            overall = rate
    return overall, per_metric


def format_rate(rate: Optional[float], passed: Optional[int] = None, total: Optional[int] = None) -> str:
    """``95.00% (19/20)``. Rounded down, so a run with one failure never reads 100%."""
    if rate is None:
        return "n/a"
    percent = math.floor(rate * 10000) / 100
    text = f"{percent:.2f}%"
    return f"{text} ({passed}/{total})" if passed is not None and total is not None else text


def check_gates(run: RunResult, gates: Gates, *, strict: bool = False) -> GateOutcome:
    """Apply the rule of the module docstring."""
    if not gates.any:
        return GateOutcome(run.exit_code(strict=strict))
    out = GateOutcome(0)
    counts = run.counts()
    if run.aborted:
        out.failures.append(f"the run stopped early: {run.aborted}")
    if run.input_errors:
        out.failures.append(f"{len(run.input_errors)} input(s) could not be read")
    if run.cases and counts["PASSED"] == 0 and counts["INFORMATIONAL"] == 0 and counts["FAILED"] == 0 \
            and counts["ERROR"] == 0:
        out.failures.append("nothing was evaluated")
    totals = run.totals(strict=strict)
    if gates.min_pass_rate is not None:
        cases = totals["cases"]
        evaluated = evaluated_cases(cases, strict=strict)
        _rate_gate(out, "pass rate", cases["PASSED"], evaluated, gates.min_pass_rate, "--min-pass-rate ",
                   gates.gate_on)
    for name, minimum in gates.metric_min_pass_rates.items():
        entry = totals["metrics"].get(name)
        if entry is None:
            out.failures.append(f"--min-pass-rate {name}={minimum:g}: no metric named '{name}' in this run "
                                f"(metrics: {', '.join(totals['metrics']) or 'none'})")
            continue
        _rate_gate(out, f"{name} pass rate", entry["passed"], entry["evaluated"], minimum, "", gates.gate_on)
    if gates.comparison is not None and gates.fail_on == "regression":
        comp = gates.comparison
        significant = comp.significant_regressions
        if significant:
            out.failures.extend(f"significant regression against baseline {comp.baseline} (α {comp.alpha:g}): "
                                f"{p.describe()}" for p in significant)
        else:
            noise = len(comp.regressions)
            out.passed.append(f"no significant regression against baseline {comp.baseline} (α {comp.alpha:g})"
                              + (f"; {noise} regressed row{'s' if noise != 1 else ''} within noise" if noise else ""))
    elif gates.comparison is not None:
        regressions = gates.comparison.regressions
        if regressions:
            out.failures.append(f"{len(regressions)} regression{'s' if len(regressions) != 1 else ''} against "
                                f"baseline {gates.comparison.baseline}")
        else:
            out.passed.append(f"no regression against baseline {gates.comparison.baseline}")
    out.exit_code = 1 if out.failures else 0
    return out


def _rate_gate(out: GateOutcome, what: str, passed: int, evaluated: int, minimum: float, flag: str,
               gate_on: str) -> None:
    """One pass-rate gate: ``pass rate 95.00% (19/20) meets --min-pass-rate 90.00% · 95% CI 75.13–99.12%``;
    with ``lower-bound`` the Wilson lower bound is what must reach ``minimum``."""
    interval = rate_interval(passed, evaluated)
    rate = interval["rate"]
    text = f"{what} {format_rate(rate, passed, evaluated)}"
    if gate_on == "lower-bound":
        lower = interval["lower"]
        ok = lower is not None and lower >= minimum
        line = (f"{text}, 95% lower bound {format_rate(lower)} {'meets' if ok else 'is below'} {flag}"
                f"{format_rate(minimum)} (--gate-on lower-bound)")
    else:
        ok = rate is not None and rate >= minimum
        ci = format_interval(interval)
        line = f"{text} {'meets' if ok else 'is below'} {flag}{format_rate(minimum)}" + (f" · {ci}" if ci else "")
    (out.passed if ok else out.failures).append(line)
