"""What a run emits as it goes: the contract between the engine and everything downstream of it.

Reporters, the run store, the live server and the OpenTelemetry exporter are all consumers. The engine
calls ``run_started`` once, ``case_finished`` once per case as soon as that case is complete (in the
run's deterministic order: input order, then config order within a case), ``cases_planned`` whenever it
knows better how many cases the run will have (an estimate while the input is read, then the exact
number), ``input_read`` as the input is read (how much, and how many cases wait for its end), and
``run_finished`` once with the final ``RunResult`` (also when the run stopped early: see
``RunResult.aborted``). A consumer never holds traces; it sees compact results only.

Example:
    ```python
    from agentevals.engine.consumers import RunConsumer

    class Printer(RunConsumer):
        def case_finished(self, index, case):
            print(index, case.case_id, [m.status.value for m in case.metrics])

        def cases_planned(self, total, estimated):
            print("of", f"~{total}" if estimated else total)

    await run_evaluation(["trace.json"], evaluators, consumers=[Printer()])
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional, Protocol

if TYPE_CHECKING:
    from ..evaluators.base import BaseEvaluator
    from ..results import CaseResult, MetricResult, RunResult
    from .grouping import Case

__all__ = ["ResultReuse", "RunConsumer", "emit"]


class RunConsumer:
    """Receives a run's results as they are produced. Override what you need; the defaults do nothing.

    Methods are called from the engine's event loop thread and must not block for long; an exception
    raised by a consumer propagates and stops the run (a run store that cannot write must not pass
    silently).
    """

    def run_started(self, run: RunResult) -> None:
        """Before any case: ``run`` carries the run's metadata and no cases yet."""

    def case_finished(self, index: int, case: CaseResult) -> None:
        """One case is complete. ``index`` is its 0-based position in the run's output order."""

    def cases_planned(self, total: int, estimated: bool) -> None:
        """How many cases the run will have: ``estimated`` while the input is still being read (called again
        as the estimate moves, at most every 0.1 s), then once with the exact total when the whole input
        has been read (``estimated=False``). Also readable as ``RunResult.planned``."""

    def input_read(self, traces: int, fraction: float, waiting: int) -> None:
        """The input is being read: ``traces`` read so far, ``fraction`` of the input read (0 to 1; files weigh
        their size in bytes), ``waiting`` cases held until the input ends (conversations: a later trace may
        join them). Called as the reading moves, at most every 0.1 s, until the exact ``cases_planned``."""

    def run_finished(self, run: RunResult) -> None:
        """The run is over (complete or stopped early); ``run`` is final."""


def emit(consumers: Sequence[RunConsumer], method: str, *args: object) -> None:
    """Call ``method`` on every consumer, in order."""
    for consumer in consumers:
        getattr(consumer, method)(*args)


class ResultReuse(Protocol):
    """Stored results the engine may use instead of running a (case, evaluator) pair.

    The run store's result cache, ``--resume`` and ``--rerun-failed`` are one implementation
    (``agentevals.store.StoreReuse``). The engine calls ``lookup`` once per pair before scheduling it
    (a list of results means: do not run it, use these), and ``produced`` once per pair with the
    results it ended up with (stored or fresh), before the case goes to ``case_finished``.
    """

    def lookup(self, case: Case, evaluator: BaseEvaluator) -> Optional[list[MetricResult]]: ...

    def produced(self, case: Case, evaluator: BaseEvaluator, metrics: list[MetricResult]) -> None: ...
