"""The run's output order: each finished case goes to the consumers as soon as it and every case before it
are complete (input order, then config order), whatever the concurrency or the pool.

Example:
    ```python
    output = Output(consumers, stop_on_error=False)
    output.expect(0); output.expect(1)
    output.finished(1, second)   # held: case 0 is not finished
    output.finished(0, first)    # emits first, then second
    ```
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator, Sequence
from typing import Optional

from ..results import SKIP_KINDS, CaseResult, MetricResult, Status, case_key
from ..results.cases import CaseList
from ..results.repetitions import RepetitionTally
from .budget import UsageTally
from .consumers import RunConsumer, emit

__all__ = ["Output", "RunFacts"]

_EVALUATED = frozenset((Status.PASSED, Status.FAILED, Status.INFORMATIONAL))


class RunFacts:
    """What the run's notes and repetition summaries need, kept as cases are emitted: the end of a run reads
    no case again (a big run's cases lie on disk, see ``CaseList``)."""

    def __init__(self) -> None:
        self.matched = False
        """Some case was paired with an eval case."""
        self.missing_eval_case = False
        """Some metric was not evaluated for want of an eval case."""
        self.evaluated = False
        """Some metric PASSED, FAILED or is INFORMATIONAL."""
        self.only_skipped = True
        """Every case was sampled or filtered out by every evaluator (so far)."""
        self.usage = UsageTally()
        self.repetitions = RepetitionTally()

    def add(self, index: int, case: CaseResult) -> None:
        self.matched = self.matched or case.eval_id is not None
        for r in case.metrics:
            self.evaluated = self.evaluated or r.status in _EVALUATED
            self.missing_eval_case = self.missing_eval_case or (r.status == Status.NOT_EVALUATED
                                                                and "eval case" in (r.reason or ""))
        self.only_skipped = self.only_skipped and case_key(case) in SKIP_KINDS
        self.usage.add(case)
        self.repetitions.add(index, case)


class Output:
    """Emits finished cases to the consumers in output order (by the sequence number of a case's first
    trace), each as soon as it and every case before it are complete."""

    def __init__(self, consumers: Sequence[RunConsumer], *, stop_on_error: bool) -> None:
        self.consumers = consumers
        self.stop_on_error = stop_on_error
        self.emitted = CaseList()
        """Every emitted case, in order (past a threshold on disk: see ``CaseList``)."""
        self.facts = RunFacts()
        """Figures of the emitted cases, kept as they go."""
        self.stopped_by: Optional[tuple[CaseResult, MetricResult]] = None
        """The case (and its failed metric) that stopped the run under ``fail_on_evaluation_error``."""
        self._open: list[int] = []  # heap: sequence numbers that are, or may still become, cases
        self._done: dict[int, CaseResult] = {}
        self._stored: dict[int, Iterable[CaseResult]] = {}  # see ``stored``
        self._dropped: set[int] = set()
        self._carried: Iterator[tuple[int, CaseResult]] = iter(())  # see ``carry``
        self._next: Optional[tuple[int, CaseResult]] = None

    def expect(self, seq: int) -> None:
        heapq.heappush(self._open, seq)

    def drop(self, seq: int) -> None:
        """``seq`` turned out to be no case of its own (it joined a conversation)."""
        self._dropped.add(seq)
        self._flush()

    def finished(self, seq: int, result: CaseResult) -> None:
        self._done[seq] = result
        self._flush()

    def stored(self, seq: int, cases: Iterable[CaseResult]) -> None:
        """``seq`` (``Grouper.reserve``) stands for ``cases``, a stored input file's, in their order (read as they
        are emitted): they come out where that file's own cases would, once every case before them has."""
        self._stored[seq] = cases
        self._flush()

    def carry(self, stored: Iterable[tuple[int, CaseResult]]) -> None:
        """Take ``stored`` cases as ``(position, case)`` in position order (a stored run's, whose traces this run
        does not read: ``--resume``, ``--rerun-failed``), read as they are emitted. Called before the first trace.
        This run's own cases fill the positions the stored ones leave free, in order, so a rerun keeps the
        stored run's order: a stored case is emitted as soon as every position before it is (``release``
        emits those past this run's last case)."""
        self._carried = iter(stored)
        self._next = next(self._carried, None)
        self._release()

    def release(self) -> None:
        """Emit the carried cases still held (the run has no case left to place before them)."""
        self._release(everything=True)

    def _release(self, *, everything: bool = False) -> None:
        while self._next is not None and self.stopped_by is None and (everything or self._next[0] <= len(self.emitted)):
            self._emit(self._next[1])
            self._next = next(self._carried, None)

    def _emit(self, result: CaseResult) -> None:
        self.emitted.append(result)
        self.facts.add(len(self.emitted) - 1, result)
        emit(self.consumers, "case_finished", len(self.emitted) - 1, result)

    def _flush(self) -> None:
        while self._open and self.stopped_by is None:
            seq = self._open[0]
            if seq in self._dropped:
                heapq.heappop(self._open)
                self._dropped.discard(seq)
                continue
            block = self._stored.pop(seq, None)
            if block is not None:
                heapq.heappop(self._open)
                for case in block:
                    if self.stopped_by is not None:
                        break
                    self._emit(case)
                    self._release()
                continue
            result = self._done.pop(seq, None)
            if result is None:
                return
            heapq.heappop(self._open)
            self._emit(result)
            if self.stop_on_error and result.evaluation_status == "evaluation_failed":
                self.stopped_by = (result, next(m for m in result.metrics if m.status == Status.ERROR))
            self._release()
