"""Reference figures for the interval tests, computed here from the textbook formula and independent of
``agentevals.results`` (the code under test)::

    lower, upper = wilson(45, 50)
    assert f"90.00% (45/50, {ci_text(45, 50)})" in report
"""

from __future__ import annotations

import math

__all__ = ["Z_95", "ci_text", "wilson"]

Z_95 = 1.959963984540054
"""The 0.975 quantile of the standard normal (``scipy.stats.norm.ppf(0.975)``): a two-sided 95% interval."""


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson score interval of ``k`` passes in ``n``, closed form:
    (p + z²/2n ∓ z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    z, p = Z_95, k / n
    centre, half = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - half) / (1 + z * z / n), (centre + half) / (1 + z * z / n)


def ci_text(k: int, n: int) -> str:
    """``95% CI a–b%`` as the reports write it: percentages to two decimals, rounded outwards."""
    lower, upper = wilson(k, n)
    return f"95% CI {math.floor(lower * 10000) / 100:.2f}–{math.ceil(upper * 10000) / 100:.2f}%"
