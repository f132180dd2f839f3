"""``CaseList``: a run's case results in output order, kept in memory up to a threshold and spilled to a
temporary file past it, so that a run's memory does not grow with its input (100,000 traces hold about
what 2,000 do). Readers of ``run.cases`` see a sequence: ``len``, iteration, indexing and slicing work as
on a list, and a small run never touches the disk.

Example:
    ```python
    cases = CaseList(threshold=2)
    for case in results:
        cases.append(case)          # the third and later go to disk
    len(cases); cases[0]; cases[-1]; cases[:10]; list(cases)
    ```

Each read of a spilled case unpickles a fresh copy: a change to a case after it was appended is kept only
when put back with ``replace(i, case)`` (``summarize_repetitions`` does). ``AGENTEVALS_SPILL_CASES`` sets the threshold (see ``agentevals.core.spill``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Optional, Union, overload

from ..core.spill import Spilled, SpillFile, spill_threshold
from . import tally_statuses
from .intervals import add_score_clusters

if TYPE_CHECKING:
    from . import CaseResult
    from .intervals import ScoreClusters

__all__ = ["CaseList"]


class CaseList(Sequence["CaseResult"]):
    """Append-only sequence of case results that spills past ``threshold`` (default from
    ``AGENTEVALS_SPILL_CASES``)."""

    def __init__(self, cases: Iterable[CaseResult] = (), *, threshold: Optional[int] = None) -> None:
        self.threshold = spill_threshold("AGENTEVALS_SPILL_CASES") if threshold is None else threshold
        self._memory: list[CaseResult] = []
        self._refs: list[Spilled] = []  # the cases past the threshold, in order after ``_memory``
        self._spill: Optional[SpillFile] = None
        self._case_counts: dict[str, int] = {}
        self._metric_counts: dict[str, dict[str, int]] = {}
        self.score_clusters: ScoreClusters = {}
        """Scores summed per metric and cluster as cases are appended (``results.intervals.run_intervals``)."""
        for case in cases:
            self.append(case)

    def append(self, case: CaseResult) -> None:
        tally_statuses((case,), self._case_counts, self._metric_counts)
        add_score_clusters(self.score_clusters, len(self), case)
        if len(self._memory) < self.threshold:
            self._memory.append(case)
            return
        if self._spill is None:
            self._spill = SpillFile()
        self._refs.append(self._spill.put(case))

    def replace(self, index: int, case: CaseResult) -> None:
        """Put a changed copy of a case back (a spilled case read with ``cases[i]`` is a copy)."""
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError("case index out of range")
        if index < len(self._memory):
            self._memory[index] = case
            return
        assert self._spill is not None
        self._refs[index - len(self._memory)] = self._spill.put(case)

    def settled(self) -> Sequence[CaseResult]:
        """What a finished run holds: a plain list when nothing was spilled (a small run's ``run.cases`` is
        the list it always was), else this sequence."""
        return list(self._memory) if not self._refs else self

    def tally(self) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        """Running counts (``results.tally_statuses``) of the cases appended: ``RunResult.totals()`` and
        ``counts()`` read them instead of every case. Statuses never change after a case is appended."""
        return dict(self._case_counts), {name: dict(per) for name, per in self._metric_counts.items()}

    @property
    def spilled(self) -> int:
        """How many cases lie on disk."""
        return len(self._refs)

    def __len__(self) -> int:
        return len(self._memory) + len(self._refs)

    def __bool__(self) -> bool:
        return bool(self._memory) or bool(self._refs)

    def __iter__(self) -> Iterator[CaseResult]:
        yield from self._memory
        spill = self._spill
        for i in range(len(self._refs)):  # by index: appends during iteration are seen, as with a list
            assert spill is not None
            yield spill.get(self._refs[i])

    @overload
    def __getitem__(self, index: int) -> CaseResult: ...
    @overload
    def __getitem__(self, index: slice) -> list[CaseResult]: ...

    def __getitem__(self, index: Union[int, slice]) -> Union[CaseResult, list[CaseResult]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("case index out of range")
        if index < len(self._memory):
            return self._memory[index]
        assert self._spill is not None
        return self._spill.get(self._refs[index - len(self._memory)])

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (CaseList, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # mutable, like a list

    def __repr__(self) -> str:
        return f"CaseList({len(self)} cases, {self.spilled} spilled)"

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled or deep-copied (Ray, model_copy(deep=True)): a plain list, with no file behind it.
        return (list, (list(self),))

    def close(self) -> None:
        """Drop the spill file (the cases on disk are gone; the run is over)."""
        if self._spill is not None:
            self._spill.close()
