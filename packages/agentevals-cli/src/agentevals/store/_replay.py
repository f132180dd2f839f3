"""Whole-input reruns from the run store: when every input file's bytes and everything that decides the
results are the same as a completed run's, that run's cases are emitted again without reading a trace.

    key = input_key(paths, evaluators, identity=reuse.identity, options=..., digests=..., trace_format=...,
                    file_digests=store.file_digests)
    prior = find_replay(store, key)   # a completed run recorded with that key, every result a score
    if prior is not None:
        run = await replay(store, prior, consumers, files=len(paths))

``--resume`` and ``--rerun-failed`` of a run recorded with the same key take its finished (or passing) cases
as they are and read only the other traces (``carry``).

The key (recorded in the run's options as ``input_key``) covers: each file's bytes (sha256, in chunks; a file
whose stat is as when it was last hashed is not read again, ``store._digests``),
the config and eval set files' bytes, the run options, the trace format, each evaluator's identity
(``store.keys.evaluator_identity``: its config, code and versions) and agentevals' version. Any change is a
miss, and the run reads its inputs as before (the per-case result cache still applies).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..results import CaseResult, RunResult, Status, utc_now
from ..results.cases import CaseList
from .keys import file_digest, value_digest

if TYPE_CHECKING:
    from ..engine.consumers import RunConsumer
    from ._recording import StoreReuse
    from ._store import RunStore

__all__ = ["REPLAY_NOTE", "Carried", "carry", "find_replay", "input_key", "input_keys", "replay"]

log = logging.getLogger(__name__)

_SCANNED = 100
"""How many of the newest completed runs are searched for the key (each is one row already read)."""
_SCORES = (Status.PASSED, Status.FAILED, Status.INFORMATIONAL)
"""A run is replayed only when every result is a score: errors and NOT_EVALUATED are tried again."""
REPLAY_NOTE = "file(s) served from the cache"
TAKEN_NOTE = "their traces were not read again"
"""How the note of a run that took stored cases (``carry``, ``store._perfile``) ends."""


def input_key(paths: Sequence[str], evaluators: Sequence[Any], *, identity: Callable[[Any], Optional[str]],
              options: dict[str, Any], digests: Sequence[Optional[str]], trace_format: Optional[str],
              file_digests: Optional[Callable[[list[Path]], list[str]]] = None) -> Optional[str]:
    """The whole-input key of a run, or None when it cannot have one (an input that is not a regular file,
    an evaluator that is not reproducible or not cacheable, a file that cannot be read). ``identity`` gives an
    evaluator's identity or None (``StoreReuse.identity``, computed once for this key and the run's per-case
    keys); ``digests``: those of the config and eval set files (``run_meta`` computed them); ``file_digests``:
    the sha256 of each input file (default: hash each, ``keys.file_digest``; the CLI passes
    ``RunStore.file_digests``, which skips files unchanged since they were last hashed)."""
    keys = input_keys(paths, evaluators, identity=identity, options=options, digests=digests,
                      trace_format=trace_format, file_digests=file_digests)
    return None if keys is None else keys[0]


def input_keys(paths: Sequence[str], evaluators: Sequence[Any], *, identity: Callable[[Any], Optional[str]],
               options: dict[str, Any], digests: Sequence[Optional[str]], trace_format: Optional[str],
               file_digests: Optional[Callable[[list[Path]], list[str]]] = None) -> Optional[tuple[str, list[str]]]:
    """(``input_key``, each file's key), or None as for ``input_key``. A file's key is the whole-input key with
    that file alone in place of every input (its name as given, its absolute path and digest), and without
    the list of inputs in ``options``: what a case read from that file alone depends on (``store._perfile``)."""
    from ..__about__ import __version__

    try:
        files = [Path(p) for p in paths]
        if not files or not all(f.is_file() for f in files):
            return None
        identities = []
        for loaded in evaluators:
            ev = getattr(loaded, "evaluator", loaded)
            found = identity(ev) if getattr(ev, "reproducible", False) else None
            if found is None:
                return None
            identities.append(found)
        sums = file_digests(files) if file_digests is not None else [file_digest(f) for f in files]
    except OSError as exc:
        log.debug("whole-input cache: no key (%s)", exc)
        return None
    rest = {
        "config": list(digests),
        "evaluators": identities,
        "trace_format": trace_format,
        "agentevals": __version__,
    }
    whole = value_digest({"files": [(os.path.abspath(f), digest) for f, digest in zip(files, sums, strict=True)],
                          "options": options, **rest})
    alone = {name: value for name, value in options.items() if name != "inputs"}
    return whole, [value_digest({"file": (str(given), os.path.abspath(f), digest), "options": alone, **rest})
                   for given, f, digest in zip(paths, files, sums, strict=True)]


def find_replay(store: RunStore, key: str) -> Optional[str]:
    """The newest completed run recorded with ``key`` whose results are all scores, or None."""
    for record in store.list_runs(limit=_SCANNED, statuses=("completed",)):
        if record.options.get("input_key") != key:
            continue
        statuses = store.db.execute("SELECT DISTINCT status FROM metric_results WHERE run_id = ?", (record.run_id,))
        # Labels (from the eval set, or added later by people) belong to that run's cases: a run that has
        # any is not copied, so that no label added since shows up in this run's reports.
        labelled = store.db.execute("SELECT COUNT(*) FROM labels WHERE run_id = ?", (record.run_id,))[0][0]
        if statuses and all(Status(row[0]) in _SCORES for row in statuses) and not labelled:
            return record.run_id
        return None  # the newest run of these inputs had errors (or labels): run them again
    return None


class Carried:
    """The cases of a stored run that this run takes as they are (``carry``): ``(position, case)`` in position
    order, read from the store a chunk at a time as the run emits them (``run_evaluation``'s ``carried``)."""

    CHUNK = 256

    def __init__(self, store: RunStore, run_id: str, positions: list[int], traces: set[str], results: int) -> None:
        self.store = store
        self.run_id = run_id
        self.positions = positions
        self.traces = traces
        """Their trace ids: the read leaves these out (``ReadContext.skip_trace``)."""
        self.results = results
        """How many result rows they hold."""
        self.taken: Optional[dict[int, tuple[int, CaseResult]]] = None
        """Set by the run that records (``StoreConsumer.carried``): each carried case read so far, by ``id``, with
        its position in the stored run, until the recorder meets it. ``--resume`` does not write it again where
        this run has it already; ``--rerun-failed`` copies its rows from the stored run instead of encoding them."""

    def __len__(self) -> int:
        return len(self.positions)

    def __iter__(self) -> Iterator[tuple[int, CaseResult]]:
        for start in range(0, len(self.positions), self.CHUNK):
            for position, case in self.store.load_cases(self.run_id, indexes=self.positions[start:start + self.CHUNK]):
                if self.taken is not None:
                    self.taken[id(case)] = (position, case)
                yield position, case


def carry(store: RunStore, prior: str, key: Optional[str], *, failed_again: bool) -> Optional[Carried]:
    """What ``--resume`` (``failed_again`` False: every case ``prior`` finished) or ``--rerun-failed`` (True: its
    cases with no FAILED or ERROR result) take from run ``prior`` without reading their traces, or None when the
    run must read every trace: ``prior`` was recorded with another whole-input key (other bytes, settings or
    evaluators: ``input_key``; None when this run has none), a trace of it belongs to two cases, a case has no
    trace id, or (``--rerun-failed``) it has labels, which belong to that run's cases (as for ``find_replay``).
    Reads ids and statuses only: the cases themselves are read as the run emits them."""
    if key is None or store.get_run(prior).options.get("input_key") != key:
        return None
    db = store.db
    if failed_again and db.execute("SELECT COUNT(*) FROM labels WHERE run_id = ?", (prior,))[0][0]:
        return None
    cases = [row[0] for row in db.execute("SELECT idx FROM cases WHERE run_id = ? ORDER BY idx", (prior,))]
    owner: dict[str, int] = {}
    for idx, trace_id in db.execute("SELECT idx, trace_id FROM case_traces WHERE run_id = ?", (prior,)):
        if owner.setdefault(trace_id, idx) != idx:
            return None
    if len(set(owner.values())) != len(cases):
        return None  # a case without a trace id
    rows = dict(db.execute("SELECT idx, COUNT(*) FROM metric_results WHERE run_id = ? GROUP BY idx", (prior,)))
    if failed_again:
        failing = {row[0] for row in db.execute("SELECT DISTINCT idx FROM metric_results WHERE run_id = ? AND status "
                                                "IN (?, ?)", (prior, Status.FAILED.value, Status.ERROR.value))}
        cases = [idx for idx in cases if idx not in failing]
    taken = set(cases)
    return Carried(store, prior, cases, {t for t, idx in owner.items() if idx in taken},
                   sum(rows.get(idx, 0) for idx in cases))


async def replay(store: RunStore, prior: str, consumers: Sequence[RunConsumer], *, files: int,
                 reuse: Optional[StoreReuse] = None) -> RunResult:
    """Emit the stored run ``prior`` to ``consumers`` as a new run (started now), case by case; every
    result counts as reused in ``reuse`` (the run's note says how many, as for the per-case cache)."""
    from ..__about__ import __version__
    from ..engine.consumers import emit

    stored = store.load_run(prior)
    run = RunResult(agentevals_version=__version__, started_at=utc_now())
    run.notes.extend(n for n in stored.notes if "reused from the run store" not in n and REPLAY_NOTE not in n
                     and not n.endswith(TAKEN_NOTE))  # what that run took from another: this one says its own
    run.input_errors = stored.input_errors
    run._planned = len(stored.cases)  # exact: progress shows a full bar
    # Grows as cases are emitted, as the engine's does (an interrupted run reports them). A CaseList keeps the
    # counts and score clusters as cases are appended: totals, exit code, gates and the summary's intervals
    # read them instead of walking every case again (five walks of a 1,000-case run otherwise). Never spilled:
    # ``stored`` holds every case in memory already.
    run.cases = emitted = CaseList(threshold=len(stored.cases))
    emit(consumers, "run_started", run)
    for index, case in enumerate(stored.cases):
        emitted.append(case)
        emit(consumers, "case_finished", index, case)
    if reuse is not None:
        reuse.reused += sum(len(case.metrics) for case in stored.cases)
    run.repetitions = stored.repetitions
    run.notes.append(f"{files} {REPLAY_NOTE} (run {prior}, same bytes and settings; --no-cache reads them again)")
    run.finished_at = utc_now()
    emit(consumers, "run_finished", run)
    return run
