"""Judge calls, tokens and cost per evaluator in ``serve``: ``ContinuousState.judge_usage`` and ``/api/metrics``.

Every finished session's rows carry what their judges used (``details["judge_usage"]``, one evaluation's
calls, tokens and priced USD, see ``engine.budget``) or that a budget skipped them (``over_budget``);
``JudgeUsageRecorder`` adds them up per evaluator. ``judges_json`` is what the API shows: those totals with the
budget ledger's rolling figures (evaluations in the last hour, spend in the last 24 hours) and limits::

    consumers.append(JudgeUsageRecorder(state))
    judges_json(state, settings.judge_ledger)
    # {"quality": {"calls": 42, "input_tokens": 51234, "output_tokens": 3310, "cost_usd": 0.0097,
    #              "over_budget": 5, "evaluations": 40, "calls_last_hour": 40, "spent_last_day_usd": 0.0097,
    #              "max_calls_per_hour": 40, "budget_usd_per_day": null}}
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from ..engine.admission import skip_kind
from ..engine.consumers import RunConsumer
from ..results import CaseResult
from .continuous import ContinuousState, JudgeUsage

if TYPE_CHECKING:
    from ..engine.budget import JudgeLedger

__all__ = ["JudgeUsageRecorder", "judges_json"]


class JudgeUsageRecorder(RunConsumer):
    """Adds each finished case's judge usage and budget skips to ``state.judge_usage`` (by row name)."""

    def __init__(self, state: ContinuousState) -> None:
        self.state = state

    def case_finished(self, index: int, case: CaseResult) -> None:
        for metric in case.metrics:
            usage = metric.details.get("judge_usage") if metric.details else None
            over = skip_kind(metric) == "over_budget"
            if not usage and not over:
                continue
            with self.state.lock:
                row = self.state.judge_usage.setdefault(metric.name, JudgeUsage())
                if over:
                    row.over_budget += 1
                if usage:
                    row.add(usage)


def judges_json(state: ContinuousState, ledger: Optional[JudgeLedger]) -> dict[str, dict[str, Any]]:
    """Per evaluator: the server's judge totals, with the budget's rolling figures and limits when it has one."""
    with state.lock:
        out = {name: usage.as_json() for name, usage in state.judge_usage.items()}
    for name in ledger.names() if ledger is not None else []:
        book = ledger.book(name).as_json()  # type: ignore[union-attr]
        row = out.setdefault(name, JudgeUsage().as_json())
        row.update({key: book[key] for key in ("calls_last_hour", "spent_last_day_usd", "running",
                                               "max_calls_per_hour", "budget_usd_per_day")})
    return out
