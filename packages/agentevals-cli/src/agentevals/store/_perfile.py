"""Per-file reruns: a run over several files where only some changed takes the unchanged files' cases from a
stored run and reads only the others.

    tracker = FileTracker(labels)              # a consumer: which cases each input file made, in output order
    ... run ...
    record_files(store, run_id, tracker.rows(file_keys, run, sessions))
    taken = find_files(store, file_keys, grouped=group_by != "trace")   # next run: the files it need not read
    for pos, (first, count) in taken.files.items():
        inputs[pos] = StoredFile(labels[pos], taken.cases(first, count), count)

A file's key (``store._replay.input_keys``) is the whole-input key with that file alone in place of the inputs.
A file is recorded only when each of its cases came from it alone, one after another, none is a repetition
(``agentevals.repeat_index`` on a trace), none of its traces was unreadable, and the run read no OTLP log records (those reach traces of every file). Whether a file is
independent of the others in a given run (no rule looks across cases: sampling, budgets, repetitions, a
one-case eval set) is the caller's to decide (``cli._perfile``); those runs record nothing and take nothing.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from ..engine.consumers import RunConsumer
from ..results import CaseResult, RunResult, Status

if TYPE_CHECKING:
    from ._store import RunStore

__all__ = ["FileTracker", "Taken", "find_files", "record_files"]

_SCORES = (Status.PASSED.value, Status.FAILED.value, Status.INFORMATIONAL.value)
"""A file's cases are taken only when each result is a score (errors and NOT_EVALUATED are tried again)."""


class FileTracker(RunConsumer):
    """Which cases each input file (by its label: the path as given) made, as positions in the run's output."""

    def __init__(self, labels: Sequence[str]) -> None:
        self.labels = list(labels)
        self._known = set(self.labels)
        self._first: dict[str, int] = {}
        self._count: dict[str, int] = {}
        self._mixed: set[str] = set()
        """Files with a case that also came from another file or is a repetition, or whose cases are not one run
        of positions."""
        self._last: Optional[str] = None

    def case_finished(self, index: int, case: CaseResult) -> None:
        sources = case.sources
        # A repetition's number is given among every case of its task, whichever file it came from.
        if len(sources) != 1 or sources[0] not in self._known or case.repeat_group is not None:
            self._mixed.update(sources)
            self._last = None
            return
        label = sources[0]
        if label not in self._first:
            self._first[label], self._count[label] = index, 1
        elif self._last == label:
            self._count[label] += 1
        else:
            self._mixed.add(label)
        self._last = label

    def rows(self, keys: Sequence[str], run: RunResult, sessions: set[str]) -> list[tuple[int, str, int, int, bool]]:
        """``(pos, file key, first case, cases, had a session id)`` of every file a later run may take alone."""
        failed = {error.source for error in run.input_errors}
        return [(pos, key, self._first.get(label, 0), self._count.get(label, 0), label in sessions)
                for pos, (label, key) in enumerate(zip(self.labels, keys, strict=True))
                if label not in self._mixed and label not in failed]


def record_files(store: RunStore, run_id: str, rows: Sequence[tuple[int, str, int, int, bool]]) -> None:
    """Store the run's file rows (``FileTracker.rows``), replacing any it had."""
    db = store.db
    with db.transaction():
        db.execute("DELETE FROM run_files WHERE run_id = ?", (run_id,))
        db.executemany("INSERT INTO run_files (run_id, pos, file_key, first_idx, cases, sessions) "
                       "VALUES (?, ?, ?, ?, ?, ?)", [(run_id, pos, key, first, count, int(sessions))
                                                     for pos, key, first, count, sessions in rows])


@dataclass
class Taken:
    """The files a run takes from stored run ``run_id``: input position → (first case there, how many)."""

    store: RunStore
    run_id: str
    files: dict[int, tuple[int, int]] = field(default_factory=dict)
    results: int = 0
    """How many result rows their cases hold."""
    sessions: set[int] = field(default_factory=set)
    """The positions of taken files that had a trace with a session id."""

    CHUNK = 256

    def cases(self, first: int, count: int) -> Iterator[CaseResult]:
        """The stored cases ``first`` to ``first + count``, read a chunk at a time as they are emitted."""
        for start in range(first, first + count, self.CHUNK):
            indexes = list(range(start, min(start + self.CHUNK, first + count)))
            for _, case in self.store.load_cases(self.run_id, indexes=indexes):
                yield case

    @property
    def count(self) -> int:
        return sum(count for _, count in self.files.values())


def find_files(store: RunStore, keys: Sequence[str], *, grouped: bool) -> Optional[Taken]:
    """The files (by position in ``keys``) whose cases the newest completed run that recorded any of these keys
    holds, or None. A file is left to be read when its cases hold a result that is not a score, when its traces
    had a session id and the run groups conversations (``grouped``: another file's trace may join them), or
    when that run's cases are not all there; the whole run is left when it has labels (they belong to its
    cases, as for ``find_replay``)."""
    if not keys:
        return None
    db = store.db
    where = ", ".join("?" * len(keys))
    rows = db.execute("SELECT f.run_id, f.file_key, f.first_idx, f.cases, f.sessions FROM run_files f "
                      "JOIN runs r ON r.run_id = f.run_id "
                      f"WHERE r.status = 'completed' AND f.file_key IN ({where}) "
                      "ORDER BY r.started_at DESC, f.run_id DESC", list(keys))
    if not rows:
        return None
    run_id = rows[0][0]
    if db.execute("SELECT COUNT(*) FROM labels WHERE run_id = ?", (run_id,))[0][0]:
        return None
    taken = Taken(store, run_id)
    stored = {key: (first, count, bool(sessions)) for rid, key, first, count, sessions in rows if rid == run_id}
    for pos, key in enumerate(keys):
        if key not in stored or pos in taken.files:
            continue
        first, count, sessions = stored[key]
        if sessions and grouped:
            continue
        span = (run_id, first, first + count)
        statuses = {row[0] for row in db.execute("SELECT DISTINCT status FROM metric_results WHERE run_id = ? "
                                                 "AND idx >= ? AND idx < ?", span)}
        if not statuses <= set(_SCORES) or (count and not statuses):
            continue
        if db.execute("SELECT COUNT(*) FROM cases WHERE run_id = ? AND idx >= ? AND idx < ?", span)[0][0] != count:
            continue
        taken.files[pos] = (first, count)
        taken.results += int(db.execute("SELECT COUNT(*) FROM metric_results WHERE run_id = ? AND idx >= ? "
                                        "AND idx < ?", span)[0][0])
        if sessions:
            taken.sessions.add(pos)
    return taken if taken.files else None
