"""Agreement and noise statistics, standard library only: Cohen's κ, a seeded percentile bootstrap, confusion,
precision/recall, correlation, MAE, flip rate, McNemar's exact test.

Every function takes plain sequences and returns plain numbers, so reports and tests read the same figures.
``None`` stands for "undefined" (κ when chance agreement is 1, a correlation of a constant series, an empty
input) rather than NaN, so JSON output stays valid.

Example:
    ```python
    human = ["pass", "fail", "pass", "pass"]
    judge = ["pass", "fail", "fail", "pass"]
    cohen_kappa(human, judge)                                   # 0.5
    bootstrap_interval(list(zip(human, judge)), lambda rows: cohen_kappa(*zip(*rows)), seed=0)
    confusion(human, judge)                                     # {"pass": {"pass": 2, "fail": 1}, "fail": {...}}
    mcnemar_exact(3, 11)                                        # two-sided p of 3 vs 11 discordant pairs
    ```
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Hashable, Sequence
from typing import Optional, TypeVar

__all__ = [
    "base_rate",
    "bootstrap_interval",
    "classes_of",
    "cohen_kappa",
    "confusion",
    "flip_rate",
    "mcnemar_exact",
    "mean",
    "mean_absolute_error",
    "paired_bootstrap",
    "pearson",
    "percent_agreement",
    "precision_recall",
    "quantile",
    "spearman",
    "wilson_interval",
]

T = TypeVar("T")
Interval = tuple[float, float]

BOOTSTRAP_RESAMPLES = 2000
"""Resamples of ``bootstrap_interval`` by default: the percentile bounds move by well under 0.01 past this."""


def mean(values: Sequence[float]) -> Optional[float]:
    """The arithmetic mean, None when empty."""
    return sum(values) / len(values) if values else None


def classes_of(*series: Sequence[Hashable]) -> list[Hashable]:
    """The classes seen in any of ``series``, sorted by their text (a stable order for tables)."""
    return sorted({v for s in series for v in s}, key=str)


def _pairs(a: Sequence[T], b: Sequence[T]) -> None:
    if len(a) != len(b):
        raise ValueError(f"paired series differ in length: {len(a)} and {len(b)}")


def percent_agreement(a: Sequence[Hashable], b: Sequence[Hashable]) -> Optional[float]:
    """Share of positions where ``a`` and ``b`` agree (None when empty)."""
    _pairs(a, b)
    return sum(x == y for x, y in zip(a, b, strict=True)) / len(a) if a else None


def cohen_kappa(a: Sequence[Hashable], b: Sequence[Hashable]) -> Optional[float]:
    """Cohen's κ of two raters over the same items: (observed − chance agreement) / (1 − chance agreement).

    1 is perfect agreement, 0 what chance gives with the raters' own class rates, below 0 worse than chance.
    None when undefined: no items, or chance agreement 1 (both raters gave one and the same class throughout).
    """
    _pairs(a, b)
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    counts_a: dict[Hashable, int] = {}
    counts_b: dict[Hashable, int] = {}
    for x, y in zip(a, b, strict=True):
        counts_a[x] = counts_a.get(x, 0) + 1
        counts_b[y] = counts_b.get(y, 0) + 1
    chance = sum(counts_a[c] * counts_b.get(c, 0) for c in counts_a) / (n * n)
    if chance >= 1.0:
        return None
    return (observed - chance) / (1.0 - chance)


def confusion(truth: Sequence[Hashable], predicted: Sequence[Hashable],
              classes: Optional[Sequence[Hashable]] = None) -> dict[Hashable, dict[Hashable, int]]:
    """``{true class: {predicted class: count}}`` over ``classes`` (default: every class seen), zeros included."""
    _pairs(truth, predicted)
    names = list(classes) if classes is not None else classes_of(truth, predicted)
    table = {t: {p: 0 for p in names} for t in names}
    for t, p in zip(truth, predicted, strict=True):
        table.setdefault(t, {q: 0 for q in names})
        table[t][p] = table[t].get(p, 0) + 1
    return table


def precision_recall(truth: Sequence[Hashable], predicted: Sequence[Hashable],
                     classes: Optional[Sequence[Hashable]] = None) -> dict[Hashable, dict[str, Optional[float]]]:
    """Per class: ``precision`` (of the items predicted in it, the share truly in it), ``recall`` (of the items
    truly in it, the share predicted in it), ``support`` (items truly in it). None where the denominator is 0."""
    table = confusion(truth, predicted, classes)
    out: dict[Hashable, dict[str, Optional[float]]] = {}
    for c in table:
        hit = table[c].get(c, 0)
        predicted_c = sum(row.get(c, 0) for row in table.values())
        support = sum(table[c].values())
        out[c] = {"precision": hit / predicted_c if predicted_c else None,
                  "recall": hit / support if support else None, "support": float(support)}
    return out


def base_rate(values: Sequence[Hashable], positive: Hashable) -> Optional[float]:
    """Share of ``values`` equal to ``positive`` (the human pass rate: what a judge's agreement is measured
    against; a judge that always says the majority class agrees ``max(rate, 1 − rate)`` of the time)."""
    return sum(v == positive for v in values) / len(values) if values else None


def pearson(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Pearson's correlation coefficient; None with fewer than 2 pairs or a constant series."""
    _pairs(x, y)
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx <= 0 or syy <= 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def _ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their average rank (as ``scipy.stats.rankdata``)."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def spearman(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Spearman's rank correlation (Pearson's of the tie-averaged ranks); None as ``pearson``."""
    _pairs(x, y)
    return pearson(_ranks(x), _ranks(y))


def mean_absolute_error(x: Sequence[float], y: Sequence[float]) -> Optional[float]:
    """Mean of ``|x − y|``; None when empty."""
    _pairs(x, y)
    return sum(abs(a - b) for a, b in zip(x, y, strict=True)) / len(x) if x else None


def flip_rate(repeats: Sequence[Sequence[Hashable]]) -> Optional[float]:
    """Share of re-asks whose verdict differs from the first ask of the same item.

    ``repeats`` holds, per item, its verdicts in the order asked (items asked once count nothing). A judge that
    returns its verdict with probability ``1 − p`` and the other with ``p``, independently, has an expected
    flip rate of ``2p(1 − p)``. None when no item was asked twice.
    """
    asked = flips = 0
    for verdicts in repeats:
        for v in verdicts[1:]:
            asked += 1
            flips += v != verdicts[0]
    return flips / asked if asked else None


def bootstrap_interval(items: Sequence[T], statistic: Callable[[Sequence[T]], Optional[float]], *,
                       resamples: int = BOOTSTRAP_RESAMPLES, level: float = 0.95,
                       seed: int = 0) -> Optional[Interval]:
    """Percentile bootstrap interval of ``statistic`` over ``items`` (resampled with replacement, seeded: the
    same input gives the same interval). Resamples where the statistic is undefined are left out; None when
    ``items`` is empty or the statistic is undefined in every resample.

    Resample the unit that is independent: a case (with its repetitions) rather than a single row.
    """
    if not items:
        return None
    rng = random.Random(seed)
    n = len(items)
    values = []
    for _ in range(resamples):
        sample = [items[rng.randrange(n)] for _ in range(n)]
        value = statistic(sample)
        if value is not None and not math.isnan(value):
            values.append(value)
    if not values:
        return None
    values.sort()
    tail = (1.0 - level) / 2
    return quantile(values, tail), quantile(values, 1.0 - tail)


def paired_bootstrap(before: Sequence[float], after: Sequence[float], *, resamples: int = BOOTSTRAP_RESAMPLES,
                     level: float = 0.95, seed: int = 0) -> Optional[Interval]:
    """Interval of the mean paired difference ``after − before`` (the same cases scored twice), resampling pairs:
    an interval that excludes 0 is a shift that the choice of cases does not explain."""
    _pairs(before, after)
    diffs = [b - a for a, b in zip(before, after, strict=True)]
    return bootstrap_interval(diffs, mean, resamples=resamples, level=level, seed=seed)


Z95 = 1.959963984540054
"""The standard normal quantile of 0.975: the z of a two-sided 95% interval."""


def wilson_interval(passed: int, n: int, z: float = Z95) -> Optional[Interval]:
    """Wilson score interval of a pass rate ``passed / n`` (95% by default); None with no observations.

    Unlike the normal ("Wald") interval it stays inside [0, 1] and is not zero-width at 0/n or n/n:
    ``wilson_interval(50, 50)`` is about (0.929, 1.0).
    """
    if n <= 0:
        return None
    p = passed / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def quantile(ordered: Sequence[float], q: float) -> float:
    """Linear-interpolation quantile of sorted values (``numpy.percentile``'s default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p-value for ``b`` and ``c`` discordant pairs (pass→fail and fail→pass): the
    binomial test of ``min(b, c)`` successes in ``b + c`` trials at 1/2. 1.0 with no discordant pair."""
    n = b + c
    if n == 0:
        return 1.0
    k = min(b, c)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)
