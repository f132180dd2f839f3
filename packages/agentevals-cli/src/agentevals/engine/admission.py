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
from typing import TYPE_CHECKING, Literal, Optional, Protocol

from ..results import MetricResult

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..evaluators.base import BaseEvaluator
    from .grouping import Case
    from .options import RunOptions

__all__ = ["SKIP_KINDS", "Admission", "Skip", "SkipKind", "admissions_for", "first_skip", "skip_kind",
           "skipped_metric"]

SkipKind = Literal["sampled_out", "filtered_out", "over_budget"]
SKIP_KINDS: tuple[SkipKind, ...] = ("sampled_out", "filtered_out", "over_budget")


@dataclass(frozen=True)
class Skip:
    """Why an evaluation does not run: its kind (counted) and a one-line reason (shown in reports)."""

    kind: SkipKind
    reason: str


class Admission(Protocol):
    """A check before each evaluation. Must be cheap and thread-safe (``serve`` batches run on a worker)."""

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
    return found


def first_skip(admissions: list[Admission], case: Case, evaluator: BaseEvaluator) -> Optional[Skip]:
    """The first admission's ``Skip`` for this pair, or None: it runs."""
    for admission in admissions:
        found = admission.skip(case, evaluator)
        if found is not None:
            return found
    return None


def skipped_metric(evaluator: BaseEvaluator, skip: Skip) -> MetricResult:
    """The row a skipped evaluation leaves: NOT_EVALUATED, ``details["skipped"]`` = its kind."""
    return MetricResult.not_evaluated(evaluator.display_name, skip.reason, type=evaluator.name,
                                      details={"skipped": skip.kind})


def skip_kind(metric: MetricResult) -> Optional[SkipKind]:
    """The kind of skip a row records, or None for a row that was evaluated (or failed to be)."""
    kind = metric.details.get("skipped") if metric.details else None
    return kind if kind in SKIP_KINDS else None
