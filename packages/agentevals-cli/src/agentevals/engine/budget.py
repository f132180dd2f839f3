"""Judge budgets: an evaluator's ``max_calls_per_hour`` and ``budget_usd_per_day`` sample it down instead of
overspending.

A ``JudgeLedger`` keeps, per evaluator, the evaluations started in the last hour and the judge spend of the
last 24 hours (rolling windows). ``BudgetAdmission`` asks it twice: when a case is queued (``skip``: already
over? then the pair is skipped at once) and right before the evaluation starts (``begin``: the exact check,
which also reserves the call); ``end`` records what the evaluation cost, priced from the tokens its judge
calls reported (``evaluators.usage``, ``evaluators.pricing``)::

    ledger = JudgeLedger()                 # serve keeps one for its lifetime; a run without one gets its own
    options.judge_ledger = ledger
    run_evaluation(traces, evaluators, options=options)     # admissions_for adds BudgetAdmission(ledger, ...)
    ledger.book("quality").as_json()       # {"calls_last_hour": 12, "spent_last_day_usd": 0.0314, ...}

The spend check counts each evaluation still running at the evaluator's mean cost so far, so at most the
evaluations already running when the budget is reached (``concurrency`` of them, fewer once a cost is known)
can carry the spend past it. A row skipped for budget is NOT_EVALUATED with ``details["skipped"] =
"over_budget"``: counted, never cached, never failing a ``--strict`` run.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Optional

from ..evaluators.pricing import Prices
from ..evaluators.usage import JudgeUsage, UsageMeter
from .admission import Skip

if TYPE_CHECKING:
    from ..evaluators.base import BaseEvaluator
    from ..results import CaseResult
    from .grouping import Case

__all__ = ["DAY", "HOUR", "BudgetAdmission", "JudgeLedger", "LedgerBook", "UsageTally", "has_budget", "usage_details", "usage_note"]

HOUR = 3600.0
DAY = 24 * HOUR
_STALE = 2 * HOUR
"""An evaluation that never reported its end (its run was cancelled) stops counting as in flight after this."""


@dataclass
class LedgerBook(JudgeUsage):
    """One evaluator's rolling counts (``JudgeLedger.book``) and its totals since the ledger was made (the
    ``JudgeUsage`` fields)."""

    started: deque[float] = field(default_factory=deque)
    """Start times of the evaluations of the last hour (``max_calls_per_hour`` counts these)."""
    spend: deque[tuple[float, float]] = field(default_factory=deque)
    """``(time, USD)`` of the evaluations of the last day that cost something."""
    running: dict[str, float] = field(default_factory=dict)
    """Evaluations started and not ended: key -> start time."""
    max_calls_per_hour: Optional[int] = None
    budget_usd_per_day: Optional[float] = None
    """The limits the evaluator was last checked against."""

    def spent(self) -> float:
        return sum(cost for _, cost in self.spend)

    def mean_cost(self) -> float:
        """Mean USD of an ended evaluation (0 before the first): what one still running is counted at."""
        return self.cost_usd / self.evaluations if self.evaluations else 0.0

    def as_json(self) -> dict[str, Any]:
        return {"evaluations": self.evaluations, "calls": self.calls, "input_tokens": self.input_tokens,
                "output_tokens": self.output_tokens, "cost_usd": round(self.cost_usd, 6),
                "over_budget": self.over_budget, "calls_last_hour": len(self.started),
                "spent_last_day_usd": round(self.spent(), 6), "running": len(self.running),
                "max_calls_per_hour": self.max_calls_per_hour, "budget_usd_per_day": self.budget_usd_per_day}


class JudgeLedger:
    """Rolling per-evaluator judge counts and spend; thread-safe (serve evaluates on a worker thread)."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._books: dict[str, LedgerBook] = {}

    def __getstate__(self) -> dict[str, Any]:  # options travel to Ray actors: each gets its own empty ledger
        return {"clock": self.clock}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(clock=state["clock"])  # type: ignore[misc]

    def book(self, name: str) -> LedgerBook:
        """A copy of evaluator ``name``'s book (windows trimmed to now)."""
        with self._lock:
            book = self._book(name)
            return replace(book, started=deque(book.started), spend=deque(book.spend), running=dict(book.running))

    def names(self) -> list[str]:
        """The evaluators the ledger has a book for, in the order first seen."""
        with self._lock:
            return list(self._books)

    def over(self, name: str, max_calls: Optional[int], budget_usd: Optional[float], *,
             reserve: Optional[str] = None) -> Optional[str]:
        """Why evaluator ``name`` may not start another evaluation now, or None. With ``reserve`` (a key),
        a None answer also starts that evaluation (counted until ``end(name, key, ...)``)."""
        with self._lock:
            book = self._book(name)
            book.max_calls_per_hour, book.budget_usd_per_day = max_calls, budget_usd
            reason = None
            if max_calls is not None and len(book.started) >= max_calls:
                reason = f"over budget: {len(book.started)} evaluations in the last hour (max_calls_per_hour: {max_calls})"
            elif budget_usd is not None:
                committed = book.spent() + len(book.running) * book.mean_cost()
                if committed >= budget_usd or (reserve is not None and committed + book.mean_cost() > budget_usd):
                    reason = (f"over budget: ${committed:.4f} of ${budget_usd:g} spent or committed in the last "
                              f"24h (budget_usd_per_day)")
            if reason is not None:
                book.over_budget += 1  # once per pair: one skipped when queued never gets to ``begin``
                return reason
            if reserve is not None:
                now = self.clock()
                book.started.append(now)
                book.running[reserve] = now
            return None

    def end(self, name: str, key: str, usage: Optional[dict[str, Any]]) -> None:
        """Evaluation ``key`` of ``name`` ended; ``usage`` is its ``details["judge_usage"]`` (None: no calls)."""
        with self._lock:
            book = self._book(name)
            book.running.pop(key, None)
            if not usage:
                book.evaluations += 1
            elif (cost := book.add(usage)) > 0:
                book.spend.append((self.clock(), cost))

    def _book(self, name: str) -> LedgerBook:
        book = self._books.setdefault(name, LedgerBook())
        now = self.clock()
        while book.started and book.started[0] <= now - HOUR:
            book.started.popleft()
        while book.spend and book.spend[0][0] <= now - DAY:
            book.spend.popleft()
        for key in [k for k, at in book.running.items() if at <= now - _STALE]:
            del book.running[key]
        return book


def has_budget(evaluator: BaseEvaluator) -> bool:
    """Whether the evaluator's entry sets ``max_calls_per_hour`` or ``budget_usd_per_day``."""
    config = evaluator.config
    return getattr(config, "max_calls_per_hour", None) is not None or getattr(config, "budget_usd_per_day", None) is not None


class BudgetAdmission:
    """The ``Admission`` of judge budgets (built by ``admissions_for`` when an entry sets one)."""

    def __init__(self, ledger: JudgeLedger, evaluators: Sequence[BaseEvaluator]) -> None:
        self.ledger = ledger
        self.budgeted = {ev.display_name for ev in evaluators if has_budget(ev)}
        """By name, not identity: under ``--executor ray`` the admission travels with copies of the evaluators."""

    def skip(self, case: Case, evaluator: BaseEvaluator) -> Optional[Skip]:
        """At queueing time: skip at once when the budget is already spent (the exact check is ``begin``)."""
        return self._check(evaluator, None)

    def begin(self, key: str, evaluator: BaseEvaluator) -> Optional[Skip]:
        """Right before the evaluation runs: over budget now, or reserve its call."""
        return self._check(evaluator, key)

    def end(self, key: str, evaluator: BaseEvaluator, usage: Optional[dict[str, Any]]) -> None:
        if evaluator.display_name in self.budgeted:
            self.ledger.end(evaluator.display_name, key, usage)

    def _check(self, evaluator: BaseEvaluator, reserve: Optional[str]) -> Optional[Skip]:
        if evaluator.display_name not in self.budgeted:
            return None
        config = evaluator.config
        reason = self.ledger.over(evaluator.display_name, config.max_calls_per_hour, config.budget_usd_per_day,
                                  reserve=reserve)
        return Skip("over_budget", reason) if reason else None


def usage_details(meter: UsageMeter, prices: Prices) -> Optional[dict[str, Any]]:
    """``details["judge_usage"]`` of an evaluation: calls, tokens, USD (priced models only), per model;
    ``unpriced`` lists models with no price (add them to ``judge_prices``). None when it made no calls."""
    if not meter.by_model:
        return None
    models: dict[str, Any] = {}
    unpriced: list[str] = []
    total = 0.0
    for model, (calls, tokens_in, tokens_out) in sorted(meter.by_model.items()):
        cost = prices.cost(model, tokens_in, tokens_out)
        if cost is None:
            unpriced.append(model)
        total += cost or 0.0
        models[model] = {"calls": calls, "input_tokens": tokens_in, "output_tokens": tokens_out,
                         "cost_usd": None if cost is None else round(cost, 8)}
    out: dict[str, Any] = {"calls": meter.calls, "input_tokens": meter.input_tokens,
                           "output_tokens": meter.output_tokens, "cost_usd": round(total, 8), "models": models}
    if unpriced:
        out["unpriced"] = unpriced
    return out


def usage_note(cases: Iterable[CaseResult]) -> Optional[str]:
    """The run's note on judge usage per evaluator (row name), e.g. ``judge usage: quality 12 calls, 14,210 in /
    1,180 out tokens, $0.0029``; None when no evaluation called a judge (``UsageTally`` as cases come)."""
    tally = UsageTally()
    for case in cases:
        tally.add(case)
    return tally.note()


class UsageTally:
    """Judge usage per evaluator (row name), summed one case at a time; ``note()`` is ``usage_note``'s text."""

    def __init__(self) -> None:
        self._totals: dict[str, JudgeUsage] = {}
        self._unpriced: dict[str, set[str]] = {}

    def add(self, case: CaseResult) -> None:
        for metric in case.metrics:
            usage = metric.details.get("judge_usage") if metric.details else None
            if usage:
                self._totals.setdefault(metric.name, JudgeUsage()).add(usage)
                self._unpriced.setdefault(metric.name, set()).update(usage.get("unpriced") or ())

    def note(self) -> Optional[str]:
        if not self._totals:
            return None
        parts = [f"{name} {u.calls} call{'s' if u.calls != 1 else ''}, {u.input_tokens:,} in / {u.output_tokens:,} "
                 f"out tokens, ${u.cost_usd:.4f}"
                 + (f" (no price for {', '.join(sorted(self._unpriced[name]))}: add it to judge_prices)"
                    if self._unpriced[name] else "")
                 for name, u in self._totals.items()]
        return "judge usage: " + "; ".join(parts)
