"""Per-file reruns: a run over several files where only some changed takes the unchanged files' cases from a
stored run and reads only the others.

    tracker = FileTracker(labels)              # a consumer: which cases each input file made, in output order
    ... run ...
    grouped = groups_conversations(group_by, session_totals(sessions.values()))
    record_files(store, run_id, tracker.rows(file_keys, run, sessions, grouped=grouped))
    taken = find_files(store, file_keys, grouped=group_by != "trace")   # next run: the files it need not read
    apart(taken, sessions_of_the_files_read, group_by)    # with session ids: only those no other file shares
    for pos, (first, count) in taken.files.items():
        inputs[pos] = StoredFile(labels[pos], taken.cases(first, count), count)

A file's key (``store._replay.input_keys``) is the whole-input key with that file alone in place of the inputs.
A file is recorded only when each of its cases came from it alone, one after another, none is a repetition
(``agentevals.repeat_index`` on a trace), none of its traces was unreadable, and the run read no OTLP log records (those reach traces of every file). Whether a file is
independent of the others in a given run (no rule looks across cases: sampling, budgets, repetitions, a
one-case eval set) is the caller's to decide (``cli._perfile``); those runs record nothing and take nothing.

Under ``--group-by conversation`` or ``auto``, a file whose traces have session ids is taken only when its cases
would be what they were: none of its session ids is another file's (a trace elsewhere would join the
conversation), and under ``auto`` the run groups conversations exactly when the stored run did (some session
id has two traces or more). The row keeps each file's session ids with their traces and the stored run's
grouping; the caller counts the session ids of the files it reads (``apart``).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from ..engine.consumers import RunConsumer
from ..results import CaseResult, RunResult, Status

if TYPE_CHECKING:
    from ._store import RunStore

__all__ = ["FileTracker", "Taken", "apart", "find_files", "groups_conversations", "record_files", "session_totals"]

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

    def rows(self, keys: Sequence[str], run: RunResult, sessions: Mapping[str, Mapping[str, int]], *,
             grouped: bool) -> list[tuple[int, str, int, int, Optional[str]]]:
        """``(pos, file key, first case, cases, session ids)`` of every file a later run may take alone. The
        session ids (None when it had none) are JSON: each id's traces in that file (``sessions``: label →
        id → traces, ``ReadContext.sessions``), and whether the run ``grouped`` conversations."""
        failed = {error.source for error in run.input_errors}
        return [(pos, key, self._first.get(label, 0), self._count.get(label, 0),
                 json.dumps({"ids": sessions[label], "grouped": grouped}, sort_keys=True) if sessions.get(label)
                 else None)
                for pos, (label, key) in enumerate(zip(self.labels, keys, strict=True))
                if label not in self._mixed and label not in failed]


def session_totals(counts: Iterable[Mapping[str, int]]) -> Counter[str]:
    """Each session id's traces over several inputs (each: session id → its traces there)."""
    totals = Counter[str]()
    for found in counts:
        totals.update(found)
    return totals


def groups_conversations(group_by: str, totals: Mapping[str, int]) -> bool:
    """Whether a run groups conversations, given each session id's traces over all its inputs."""
    if group_by != "auto":
        return group_by == "conversation"
    return any(n > 1 for n in totals.values())


def record_files(store: RunStore, run_id: str, rows: Sequence[tuple[int, str, int, int, Optional[str]]]) -> None:
    """Store the run's file rows (``FileTracker.rows``), replacing any it had."""
    db = store.db
    with db.transaction():
        db.execute("DELETE FROM run_files WHERE run_id = ?", (run_id,))
        db.executemany("INSERT INTO run_files (run_id, pos, file_key, first_idx, cases, sessions, session_ids) "
                       "VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [(run_id, pos, key, first, count, int(ids is not None), ids)
                        for pos, key, first, count, ids in rows])


@dataclass
class Taken:
    """The files a run takes from stored run ``run_id``: input position → (first case there, how many)."""

    store: RunStore
    run_id: str
    files: dict[int, tuple[int, int]] = field(default_factory=dict)
    held: dict[int, int] = field(default_factory=dict)
    """Position → how many result rows that file's cases hold."""
    sessions: dict[int, dict[str, int]] = field(default_factory=dict)
    """Position of a taken file whose traces had session ids → each id's traces there."""
    grouped: dict[int, bool] = field(default_factory=dict)
    """Position of a taken file with session ids → whether the stored run grouped conversations."""

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

    @property
    def results(self) -> int:
        """How many result rows the taken files' cases hold."""
        return sum(self.held.values())

    def drop(self, pos: int) -> None:
        """Read file ``pos`` after all."""
        for kept in (self.files, self.held, self.sessions, self.grouped):
            kept.pop(pos, None)


def apart(taken: Taken, read: Mapping[str, int], group_by: str) -> None:
    """Leave out of ``taken`` (to be read) each file with session ids whose cases would not be the stored ones:
    one of its ids has traces in another file (``read``: each session id's traces in the files this run reads),
    or the run groups conversations where the stored run did not, or the other way round."""
    totals = session_totals([read, *taken.sessions.values()])
    now = groups_conversations(group_by, totals)
    for pos, counts in list(taken.sessions.items()):
        if taken.grouped[pos] != now or any(totals[session] != n for session, n in counts.items()):
            taken.drop(pos)


def find_files(store: RunStore, keys: Sequence[str], *, grouped: bool) -> Optional[Taken]:
    """The files (by position in ``keys``) whose cases the newest completed run that recorded any of these keys
    holds, or None. A file is left to be read when its cases hold a result that is not a score, when its traces
    had session ids the row does not name (a run of an earlier agentevals) and the run groups conversations
    (``grouped``: another file's trace may join them), or when that run's cases are not all there; the whole
    run is left when it has labels (they belong to its cases, as for ``find_replay``). Taken files with session
    ids are the caller's to check against the files it reads (``apart``)."""
    if not keys:
        return None
    db = store.db
    where = ", ".join("?" * len(keys))
    rows = db.execute("SELECT f.run_id, f.file_key, f.first_idx, f.cases, f.sessions, f.session_ids FROM run_files f "
                      "JOIN runs r ON r.run_id = f.run_id "
                      f"WHERE r.status = 'completed' AND f.file_key IN ({where}) "
                      "ORDER BY r.started_at DESC, f.run_id DESC", list(keys))
    if not rows:
        return None
    run_id = rows[0][0]
    if db.execute("SELECT COUNT(*) FROM labels WHERE run_id = ?", (run_id,))[0][0]:
        return None
    taken = Taken(store, run_id)
    stored = {key: (first, count, bool(sessions), ids) for rid, key, first, count, sessions, ids in rows
              if rid == run_id}
    wanted = [(pos, stored[key]) for pos, key in enumerate(keys) if key in stored]
    if not wanted:
        return None
    # Two queries over the cases the files span, whatever the number of files (a round trip each on Postgres).
    span = (run_id, min(first for _, (first, *_) in wanted), max(first + count for _, (first, count, *_) in wanted))
    results: dict[int, list[tuple[str, int]]] = {}
    for idx, status, rows in db.execute("SELECT idx, status, COUNT(*) FROM metric_results WHERE run_id = ? AND "
                                        "idx >= ? AND idx < ? GROUP BY idx, status", span):
        results.setdefault(int(idx), []).append((status, int(rows)))
    cases = {int(row[0]) for row in db.execute("SELECT idx FROM cases WHERE run_id = ? AND idx >= ? AND idx < ?",
                                               span)}
    for pos, (first, count, sessions, ids) in wanted:
        if pos in taken.files:
            continue
        found = _session_ids(ids) if sessions else None
        if sessions and grouped and found is None:  # no ids recorded (a run of agentevals before them)
            continue
        indexes = range(first, first + count)
        held = [found_row for idx in indexes for found_row in results.get(idx, ())]
        if any(status not in _SCORES for status, _ in held) or (count and not held):
            continue
        if any(idx not in cases for idx in indexes):
            continue
        taken.files[pos] = (first, count)
        taken.held[pos] = sum(rows for _, rows in held)
        if found is not None:
            taken.sessions[pos], taken.grouped[pos] = found
    return taken if taken.files else None


def _session_ids(text: Optional[str]) -> Optional[tuple[dict[str, int], bool]]:
    """A row's session ids with their traces, and whether its run grouped conversations (None: not recorded)."""
    try:
        found = json.loads(text)  # type: ignore[arg-type]
        return {str(k): int(n) for k, n in found["ids"].items()}, bool(found["grouped"])
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
