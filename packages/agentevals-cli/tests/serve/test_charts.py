"""The UI's percentile rule, figures and chart geometry (``serve/_figures.py``, ``serve/_charts.py``)."""

from __future__ import annotations

import itertools
import math
import random

import pytest
from agentevals.results import MetricResult, Status
from agentevals.serve._charts import Series, line_chart, nice_ticks
from agentevals.serve._figures import case_figures, fmt_ms, percentiles


def nearest_rank(values: list[float], p: float) -> float:
    """The documented rule, written out: the value at index floor(n * p) of the sorted values."""
    ordered = sorted(values)
    return ordered[min(math.floor(len(ordered) * p), len(ordered) - 1)]


def test_percentiles_follow_the_documented_rule():
    rng = random.Random(26)
    for n in (1, 2, 3, 19, 20, 21, 100, 101):
        values = [rng.uniform(1, 5000) for _ in range(n)]
        ordered = sorted(values)
        median = ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2
        assert percentiles(values) == {"p50": median, "p95": nearest_rank(values, 0.95),
                                       "p99": nearest_rank(values, 0.99)}, n
    assert percentiles([]) is None
    # 20 values: index 19 (the largest) for p95, not an interpolation between the two largest
    assert percentiles(list(range(1, 21)))["p95"] == 20


def test_nice_ticks_cover_the_top_in_round_steps():
    for top in (0.7, 1.0, 3.0, 930.0, 4163.8, 18241.7, 123456.0):
        ticks = nice_ticks(top)
        assert ticks[0] == 0 and ticks[-1] >= top and ticks[-2] < top and len(ticks) <= 7
        steps = {round(b - a, 9) for a, b in itertools.pairwise(ticks)}
        (step,) = steps
        assert step / 10 ** math.floor(math.log10(step)) in (1, 2, 2.5, 5)
    assert nice_ticks(0) == [0.0, 1.0]


def test_points_sit_on_the_scale_of_their_axis():
    chart = line_chart([Series("latency", "s1", [200.0, None, 1000.0])], x_labels=["a", "b", "c"], x_title="case",
                       unit="ms", title="latency")
    ticks = {t["label"]: t["y"] for t in chart["y_ticks"]}
    assert list(ticks) == ["0", "200", "400", "600", "800", "1000"] and chart["y_title"] == "latency (ms)"
    (line,) = chart["lines"]
    assert [d["y"] for d in line["dots"]] == [ticks["200"], ticks["1000"]]  # the None is skipped, not drawn as 0
    assert [d["x"] for d in line["dots"]] == [chart["left"], chart["right"]]
    assert [d["title"] for d in line["dots"]] == ["latency: 200 ms", "latency: 1 s"]
    # from 2 s up the axis reads seconds
    chart = line_chart([Series("latency", "s1", [1500.0, 4200.0])], x_labels=["a", "b"], x_title="case",
                       unit="ms", title="latency")
    assert chart["y_title"] == "latency (s)" and [t["label"] for t in chart["y_ticks"]] == ["0", "1", "2", "3", "4", "5"]


def test_many_x_labels_are_thinned_and_the_newest_kept():
    labels = [f"run {i}" for i in range(50)]
    chart = line_chart([Series("p50", "s1", [float(i) for i in range(50)])], x_labels=labels, x_title="run",
                       unit="tokens", title="tokens")
    shown = [t["label"] for t in chart["x_ticks"]]
    assert 2 <= len(shown) <= 8 and shown[0] == "run 0" and shown[-1] == "run 49"


def test_equal_marks_are_drawn_once():
    chart = line_chart([Series("latency", "s1", [1.0, 2.0, 3.0])], x_labels=["a", "b", "c"], x_title="case",
                       unit="ms", title="latency", marks=[("p50", 2.0), ("p95", 3.0), ("p99", 3.0)])
    assert [m["label"] for m in chart["marks"]] == ["p50 2 ms", "p95, p99 3 ms"]


def _pm(*, models=("gpt-4.1-mini",), prompt=3776, output=130, llm_calls=2, turns=(4168.0,)):
    ordered = sorted(turns)
    return {"latency": {"overall": {"count": len(turns), "median": ordered[len(turns) // 2] if len(turns) % 2
                                    else sum(ordered[len(turns) // 2 - 1:len(turns) // 2 + 1]) / 2}},
            "tokens": {"total_prompt": prompt, "total_output": output, "total": prompt + output},
            "counts": {"llm_calls": llm_calls}, "models": list(models)}


@pytest.mark.parametrize(("pm", "cells"), [
    (_pm(), {"model": "gpt-4.1-mini", "tokens_in": "3,776", "tokens_out": "130", "latency": "4.17 s",
             "cost": f"${3776 * 0.40e-6 + 130 * 1.60e-6:.4f}"}),
    # no LLM span: no model, no tokens, no cost (never 0); the turn's duration is still known
    (_pm(models=(), prompt=0, output=0, llm_calls=0, turns=(420.0,)),
     {"model": "—", "tokens_in": "—", "tokens_out": "—", "latency": "420 ms", "cost": "—"}),
    # LLM spans without token attributes read as 0 by the converter: unknown here, not free
    (_pm(prompt=0, output=0), {"model": "gpt-4.1-mini", "tokens_in": "—", "tokens_out": "—", "cost": "—"}),
    # two models: the tokens are not split per model, so no price is guessed
    (_pm(models=("gpt-4.1-mini", "gpt-4o")), {"model": "gpt-4.1-mini, gpt-4o", "cost": "—"}),
    (_pm(models=("some-local-model",)), {"model": "some-local-model", "cost": "—"}),
    (_pm(turns=(700.0, 2300.0)), {"latency": "1.5 s"}),
    (None, {"model": "—", "tokens_in": "—", "tokens_out": "—", "latency": "—", "cost": "—", "judge_cost": "—"}),
])
def test_case_figures(pm, cells):
    shown = case_figures(pm).cells()
    assert {k: shown[k] for k in cells} == cells


def test_judge_cost_only_when_every_judge_model_is_priced():
    def judged(cost, unpriced=None):
        usage = {"calls": 1, "cost_usd": cost, **({"unpriced": unpriced} if unpriced else {})}
        return MetricResult(name="judge", status=Status.PASSED, score=1.0, details={"judge_usage": usage})

    assert case_figures(None, [judged(0.0012), judged(0.0003)]).judge_cost_usd == pytest.approx(0.0015)
    assert case_figures(None, [judged(0.0012), judged(0.0, ["my-model"])]).judge_cost_usd is None
    assert case_figures(None, [MetricResult(name="x", status=Status.PASSED, score=1.0)]).judge_cost_usd is None


def test_fmt_ms():
    assert [fmt_ms(v) for v in (None, 0.4, 850, 1000, 4168, 18241.7, 125_000)] == [
        "—", "0 ms", "850 ms", "1 s", "4.17 s", "18.2 s", "2 min 5 s"]
