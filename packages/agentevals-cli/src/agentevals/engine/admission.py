"""Whether a (case × evaluator) evaluation runs at all: sampling, session filters and judge budgets.

Each check is an ``Admission`` in ``RunOptions.admissions``; the pool asks them in order before it queues
an evaluation, and the first ``Skip`` stands in for it as a NOT_EVALUATED row whose ``details["skipped"]``
says why (``sampled_out``, ``filtered_out``, ``over_budget``). Skipped rows are counted in the run's
totals and the live view, never scored, and do not fail a ``--strict`` run::

    class EveryOther:
        def skip(self, case, evaluator):
            return Skip("sampled_out", "sampled out (sample: 0.5)") if hash(case.case_id) % 2 else None

    options.admissions.append(EveryOther())
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Optional, Protocol

from ..results import SKIP_KINDS as _KINDS
from ..results import MetricResult

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..evaluators.base import BaseEvaluator
    from .grouping import Case
    from .options import RunOptions

__all__ = ["SKIP_KINDS", "Admission", "Skip", "SkipKind", "admissions_for", "begin_evaluation", "end_evaluation",
           "first_skip", "skip_kind", "skipped_metric"]

SkipKind = Literal["sampled_out", "filtered_out", "over_budget"]
SKIP_KINDS: tuple[SkipKind, ...] = _KINDS  # type: ignore[assignment]  # one list, kept by results (reports count them)


@dataclass(frozen=True)
class Skip:
    """Why an evaluation does not run: its kind (counted) and a one-line reason (shown in reports)."""

    kind: SkipKind
    reason: str


class Admission(Protocol):
    """A check before each evaluation. Must be cheap and thread-safe (``serve`` batches run on a worker).

    An admission may also have ``begin(key, evaluator) -> Optional[Skip]``, asked right before the
    evaluation starts (after it waited in the queue; ``key`` names this case's evaluation, its case id first),
    and ``end(key, evaluator, usage)``, told when an evaluation it let begin has ended, with its
    ``details["judge_usage"]`` (None when it made no judge calls):
    judge budgets (``engine.budget``) use both.
    """

    def skip(self, case: Case, evaluator: BaseEvaluator) -> Optional[Skip]: ...


def admissions_for(evaluators: Sequence[BaseEvaluator], options: RunOptions) -> list[Admission]:
    """The run's checks, in the order they are asked: the caller's (``options.admissions``), then the
    session filter (``filter``), sampling (``sample``, the evaluators' own), judge budgets. Built once
    per run by ``run_evaluation``."""
    found: list[Admission] = list(options.admissions)
    if options.filter:
        from .filters import FilterAdmission, parse_filter

        found.append(FilterAdmission(parse_filter(options.filter)))
    from .sampling import Sampler

    if Sampler.needed(options.sample, list(evaluators)):
        found.append(Sampler(options.sample))
    from .budget import BudgetAdmission, JudgeLedger, has_budget

    if any(has_budget(ev) for ev in evaluators):
        found.append(BudgetAdmission(options.judge_ledger or JudgeLedger(), evaluators))
    return found


def first_skip(admissions: list[Admission], case: Case, evaluator: BaseEvaluator) -> Optional[Skip]:
    """The first admission's ``Skip`` for this pair, or None: it runs."""
    for admission in admissions:
        found = admission.skip(case, evaluator)
        if found is not None:
            return found
    return None


def begin_evaluation(admissions: list[Admission], key: str, evaluator: BaseEvaluator) -> Optional[Skip]:
    """Ask each admission's ``begin`` right before the evaluation runs; the first ``Skip`` stands in for it
    (the admissions that had begun are told it ended, without usage)."""
    begun: list[Any] = []
    for admission in admissions:
        begin = getattr(admission, "begin", None)
        if begin is None:
            continue
        found = begin(key, evaluator)
        if found is not None:
            end_evaluation(begun, key, evaluator, None)
            return found
        begun.append(admission)
    return None


def end_evaluation(admissions: Sequence[Any], key: str, evaluator: BaseEvaluator,
                   usage: Optional[dict[str, Any]]) -> None:
    """Tell each admission with an ``end`` that the evaluation ended (``usage``: its judge usage, or None)."""
    for admission in admissions:
        end = getattr(admission, "end", None)
        if end is not None:
            end(key, evaluator, usage)


def skipped_metric(evaluator: BaseEvaluator, skip: Skip) -> MetricResult:
    """The row a skipped evaluation leaves: NOT_EVALUATED, ``details["skipped"]`` = its kind."""
    return MetricResult.not_evaluated(evaluator.display_name, skip.reason, type=evaluator.name,
                                      details={"skipped": skip.kind})


def skip_kind(metric: MetricResult) -> Optional[SkipKind]:
    """The kind of skip a row records, or None for a row that was evaluated (or failed to be)."""
    kind = metric.details.get("skipped") if metric.details else None
    return kind if kind in SKIP_KINDS else None
