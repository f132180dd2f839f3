"""results/stats.py against scipy and scikit-learn (computed here, test dependencies only) and its properties."""

from __future__ import annotations

import math
import random

import pytest
from agentevals.results import stats
from hypothesis import given, settings
from hypothesis import strategies as st

scipy_stats = pytest.importorskip("scipy.stats", reason="scipy is a test dependency (hatch.toml)")
metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn is a test dependency (hatch.toml)")
numpy = pytest.importorskip("numpy")


def _labels(seed: int, n: int, classes: tuple[str, ...] = ("pass", "fail"), p: float = 0.6) -> list[str]:
    rng = random.Random(seed)
    return [classes[0] if rng.random() < p else rng.choice(classes[1:]) for _ in range(n)]


@pytest.mark.parametrize("seed", range(6))
def test_kappa_matches_scikit_learn(seed: int) -> None:
    classes = ("pass", "fail") if seed % 2 else ("a", "b", "c")
    human = _labels(seed, 80, classes)
    judge = [h if random.Random(seed * 7 + i).random() < 0.7 else random.Random(i).choice(classes)
             for i, h in enumerate(human)]
    assert stats.cohen_kappa(human, judge) == pytest.approx(metrics.cohen_kappa_score(human, judge))
    assert stats.percent_agreement(human, judge) == pytest.approx(metrics.accuracy_score(human, judge))


@pytest.mark.parametrize("seed", range(4))
def test_confusion_and_precision_recall_match_scikit_learn(seed: int) -> None:
    classes = ("pass", "fail", "borderline")
    human = _labels(seed, 60, classes, p=0.5)
    judge = _labels(seed + 100, 60, classes, p=0.4)
    order = sorted(classes)
    expected = metrics.confusion_matrix(human, judge, labels=order)
    table = stats.confusion(human, judge)
    assert [[table[t][p] for p in order] for t in order] == expected.tolist()
    precision, recall, _, support = metrics.precision_recall_fscore_support(human, judge, labels=order,
                                                                            zero_division=numpy.nan)
    got = stats.precision_recall(human, judge)
    for i, c in enumerate(order):
        assert got[c]["support"] == support[i]
        for name, ref in (("precision", precision[i]), ("recall", recall[i])):
            if math.isnan(ref):
                assert got[c][name] is None
            else:
                assert got[c][name] == pytest.approx(ref)


@pytest.mark.parametrize("seed", range(4))
def test_correlations_and_mae_match_scipy(seed: int) -> None:
    rng = random.Random(seed)
    x = [round(rng.random(), 1) for _ in range(40)]  # rounded: ties, which Spearman must average
    y = [min(1.0, max(0.0, v + rng.gauss(0, 0.2))) for v in x]
    assert stats.pearson(x, y) == pytest.approx(scipy_stats.pearsonr(x, y).statistic)
    assert stats.spearman(x, y) == pytest.approx(scipy_stats.spearmanr(x, y).statistic)
    assert stats.mean_absolute_error(x, y) == pytest.approx(metrics.mean_absolute_error(x, y))


@pytest.mark.parametrize(("b", "c"), [(0, 0), (0, 5), (3, 11), (7, 7), (12, 30), (1, 0)])
def test_mcnemar_exact_matches_the_binomial_test(b: int, c: int) -> None:
    expected = 1.0 if b + c == 0 else scipy_stats.binomtest(min(b, c), b + c, 0.5).pvalue
    assert stats.mcnemar_exact(b, c) == pytest.approx(expected)


def test_bootstrap_percentile_interval_matches_scipy() -> None:
    rng = random.Random(3)
    data = [rng.random() for _ in range(60)]
    lo, hi = stats.bootstrap_interval(data, stats.mean, resamples=4000, seed=1)  # type: ignore[misc]
    ref = scipy_stats.bootstrap((data,), numpy.mean, method="percentile", n_resamples=4000,
                                random_state=numpy.random.default_rng(1)).confidence_interval
    # Different random streams: the two intervals agree to within Monte Carlo error, not digit for digit.
    assert lo == pytest.approx(ref.low, abs=0.015) and hi == pytest.approx(ref.high, abs=0.015)
    assert lo < stats.mean(data) < hi  # type: ignore[operator]


def test_paired_bootstrap_matches_scipy_paired() -> None:
    rng = random.Random(8)
    before = [rng.random() for _ in range(50)]
    after = [min(1.0, b + 0.1 + rng.gauss(0, 0.1)) for b in before]
    lo, hi = stats.paired_bootstrap(before, after, resamples=4000, seed=2)  # type: ignore[misc]
    ref = scipy_stats.bootstrap((before, after), lambda a, b: numpy.mean(b - a), paired=True, vectorized=False,
                                method="percentile", n_resamples=4000,
                                random_state=numpy.random.default_rng(2)).confidence_interval
    assert lo == pytest.approx(ref.low, abs=0.01) and hi == pytest.approx(ref.high, abs=0.01)
    assert 0 < lo < hi  # a real shift: the interval excludes 0


def test_bootstrap_is_seeded_and_skips_undefined_resamples() -> None:
    data = list(range(30))
    assert stats.bootstrap_interval(data, stats.mean, seed=5) == stats.bootstrap_interval(data, stats.mean, seed=5)
    assert stats.bootstrap_interval(data, stats.mean, seed=5) != stats.bootstrap_interval(data, stats.mean, seed=6)
    assert stats.bootstrap_interval([], stats.mean) is None
    assert stats.bootstrap_interval([1, 1], lambda s: None) is None


def test_kappa_is_one_on_identical_labels_and_none_when_undefined() -> None:
    for seed in range(5):
        labels = _labels(seed, 50)
        if len(set(labels)) > 1:
            assert stats.cohen_kappa(labels, labels) == pytest.approx(1.0)
    assert stats.cohen_kappa(["pass"] * 5, ["pass"] * 5) is None  # chance agreement is 1: undefined
    assert stats.cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="differ in length"):
        stats.cohen_kappa(["pass"], [])


def test_kappa_is_near_zero_for_independent_raters() -> None:
    human = _labels(11, 4000, p=0.7)
    judge = _labels(12, 4000, p=0.4)
    kappa = stats.cohen_kappa(human, judge)
    assert kappa is not None and abs(kappa) < 0.05
    interval = stats.bootstrap_interval(list(zip(human, judge, strict=True)),
                                        lambda rows: stats.cohen_kappa([h for h, _ in rows], [j for _, j in rows]),
                                        resamples=300)
    # a 95% interval misses the truth 1 time in 20: check it is tight around 0, not that it covers it
    assert interval is not None and -0.07 < interval[0] < kappa < interval[1] < 0.07


def test_flip_rate_is_two_p_one_minus_p_for_independent_noise() -> None:
    rng = random.Random(4)
    p = 0.2
    repeats = [[("fail" if rng.random() < p else "pass") for _ in range(4)] for _ in range(3000)]
    assert stats.flip_rate(repeats) == pytest.approx(2 * p * (1 - p), abs=0.02)
    assert stats.flip_rate([["pass"], ["fail"]]) is None
    assert stats.flip_rate([["pass", "pass", "fail"]]) == 0.5


def test_base_rate_and_undefined_correlations() -> None:
    assert stats.base_rate(["pass", "fail", "pass", "pass"], "pass") == 0.75
    assert stats.base_rate([], "pass") is None
    assert stats.pearson([0.5, 0.5, 0.5], [0.1, 0.2, 0.3]) is None
    assert stats.spearman([1.0], [2.0]) is None


verdict_pairs = st.lists(st.tuples(st.sampled_from(["pass", "fail", "borderline"]),
                                   st.sampled_from(["pass", "fail", "borderline"])), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(verdict_pairs)
def test_kappa_properties_on_any_labels(pairs: list[tuple[str, str]]) -> None:
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    kappa = stats.cohen_kappa(a, b)
    if len(set(a) | set(b)) == 1:
        assert kappa is None  # one class throughout: chance agreement is 1
        return
    assert kappa is not None and -1.0 <= kappa <= 1.0
    assert kappa == pytest.approx(metrics.cohen_kappa_score(a, b))
    assert stats.cohen_kappa(b, a) == pytest.approx(kappa)  # symmetric
    if len(set(a)) > 1:
        assert stats.cohen_kappa(a, a) == pytest.approx(1.0)
    table = stats.confusion(a, b)
    assert sum(sum(row.values()) for row in table.values()) == len(pairs)
