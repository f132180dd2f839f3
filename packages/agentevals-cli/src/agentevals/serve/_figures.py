"""Model, tokens, latency and cost of a session or a case, read from its ``performance_metrics``.

Those figures come from the trace itself (``traces.convert``): the LLM spans' ``gen_ai.request.model`` and
``gen_ai.usage.input_tokens`` / ``output_tokens`` (and their aliases), and the agent turns' span durations.
Nothing is estimated: a figure the trace does not carry is None and shows as "—".

    figures = case_figures(case.performance_metrics, case.metrics)
    figures.cells()   # {"model": "gpt-4.1-mini", "tokens_in": "3,776", "tokens_out": "130",
                      #  "latency": "4.17 s", "cost": "$0.0017", "judge_cost": "—"}

Cost is the built-in price table's (``evaluators.pricing``, the one judge budgets use) for the case's tokens,
known only when the case used a single model the table prices (tokens are not split per model); judge cost
is what the judge evaluations of the case recorded (``details["judge_usage"]``), when every model was priced.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Optional

__all__ = ["UNKNOWN", "Figures", "case_figures", "fmt_cost", "fmt_ms", "fmt_tokens", "percentiles", "record_figures"]

UNKNOWN = "—"
"""What a page shows for a figure the trace does not carry."""


@dataclass(frozen=True)
class Figures:
    """One session's or case's figures; None = not in the trace (or no price for its model)."""

    model: Optional[str] = None
    tokens_in: Optional[int] = None
    tokens_out: Optional[int] = None
    latency_ms: Optional[float] = None
    """The agent turns' duration: the turn's for one turn, their median for a conversation."""
    turns: int = 0
    cost_usd: Optional[float] = None
    judge_cost_usd: Optional[float] = None

    def cells(self) -> dict[str, str]:
        """The figures as a page shows them ("—" when unknown)."""
        return {"model": self.model or UNKNOWN, "tokens_in": fmt_tokens(self.tokens_in),
                "tokens_out": fmt_tokens(self.tokens_out), "latency": fmt_ms(self.latency_ms),
                "cost": fmt_cost(self.cost_usd), "judge_cost": fmt_cost(self.judge_cost_usd)}


def case_figures(pm: Optional[dict[str, Any]], metrics: Sequence[Any] = ()) -> Figures:
    """The figures of a case's ``performance_metrics`` (None: nothing known) and its results' judge usage."""
    judge = _judge_cost(metrics)
    if not pm:
        return Figures(judge_cost_usd=judge)
    models = [str(m) for m in pm.get("models") or ()]
    tokens = pm.get("tokens") or {}
    llm_calls = int((pm.get("counts") or {}).get("llm_calls") or 0)
    # Token attributes absent from every LLM span read as 0: that is "unknown", not "free".
    known = llm_calls > 0 and int(tokens.get("total") or 0) > 0
    tokens_in = int(tokens.get("total_prompt") or 0) if known else None
    tokens_out = int(tokens.get("total_output") or 0) if known else None
    overall = (pm.get("latency") or {}).get("overall") or {}
    turns = int(overall.get("count") or 0)
    latency = float(overall["median"]) if turns and overall.get("median") is not None else None
    cost = None
    if len(models) == 1 and tokens_in is not None and tokens_out is not None:
        from ..evaluators.pricing import Prices

        cost = Prices().cost(models[0], tokens_in, tokens_out)
    return Figures(model=", ".join(models) or None, tokens_in=tokens_in, tokens_out=tokens_out, latency_ms=latency,
                   turns=turns, cost_usd=cost, judge_cost_usd=judge)


def record_figures(record: Any) -> Figures:
    """A session's figures (``record``: a ``SessionRecord``; its evaluation's ``performance_metrics``)::

        record_figures(ctx.store.get(session_id)).cells()
    """
    result = record.result
    return case_figures(result.performance_metrics if result else None, result.metrics if result else ())


def _judge_cost(metrics: Sequence[Any]) -> Optional[float]:
    """USD the case's judge calls cost; None when no result called a judge or a judge model had no price."""
    usages = [m.details["judge_usage"] for m in metrics
              if isinstance(getattr(m, "details", None), dict) and isinstance(m.details.get("judge_usage"), dict)]
    if not usages or any(u.get("unpriced") for u in usages):
        return None
    return round(sum(float(u.get("cost_usd") or 0.0) for u in usages), 8)


def percentiles(values: Iterable[float]) -> Optional[dict[str, float]]:
    """p50, p95 and p99 of ``values`` (None when there are none), computed as the traces' own figures are
    (``traces.convert._common.stats``, as agentevals-cli 0.11 did): p50 is the median (the mean of the two
    middle values for an even count), p95 and p99 the value at index ``int(n * p)`` of the sorted values.

        percentiles([120, 80, 100, 4000])   # {"p50": 110.0, "p95": 4000, "p99": 4000}
    """
    from ..traces.convert._common import stats

    figures = stats(values)
    return None if figures is None else {"p50": figures["p50"], "p95": figures["p95"], "p99": figures["p99"]}


def fmt_ms(ms: Optional[float]) -> str:
    """``850 ms``, ``4.17 s``, ``2 min 5 s``; "—" when unknown."""
    if ms is None:
        return UNKNOWN
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.3g} s" if ms < 10_000 else f"{ms / 1000:.1f} s"
    minutes, seconds = divmod(round(ms / 1000), 60)
    return f"{minutes} min {seconds} s"


def fmt_tokens(count: Optional[float]) -> str:
    """``3,776``; "—" when unknown."""
    return UNKNOWN if count is None else f"{round(count):,}"


def fmt_cost(usd: Optional[float]) -> str:
    """``$0.0017`` (four decimals below a dollar, cents above); "—" when unknown."""
    if usd is None:
        return UNKNOWN
    return f"${usd:,.2f}" if usd >= 1 else f"${usd:.4f}"
