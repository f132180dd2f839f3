"""The run store as a consumer of a run (case by case) and as the engine's source of reusable results."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..engine.consumers import RunConsumer
from ..errors import first_line
from ..results import (
    CaseResult,
    MetricResult,
    RunResult,
    Status,
    case_key,
    row_key,
    tally_totals,
    utc_now,
)
from .keys import (
    KEY_PREFIX,
    NotCacheable,
    case_digest,
    evaluator_identity,
    expected_digest,
    file_digest,
    work_key,
)

if TYPE_CHECKING:
    from ..engine.grouping import Case
    from ..evaluators.base import BaseEvaluator
    from ._store import RunStore, SourceRecord

__all__ = ["FLUSH_CASES", "FLUSH_SECONDS", "LiveRunRecorder", "StoreConsumer", "StoreReuse", "run_meta"]

log = logging.getLogger(__name__)

_CACHEABLE = (Status.PASSED, Status.FAILED, Status.INFORMATIONAL)
"""What the cache reuses: scores. ERROR and NOT_EVALUATED often depend on the moment (a network error,
a missing API key) and are tried again."""
_FAILING = (Status.FAILED, Status.ERROR)

FLUSH_CASES = 256
"""Finished cases ``StoreConsumer`` writes in one transaction: one commit and a few multi-row statements per
batch instead of a dozen statements and a commit per case (the store's cost of a run is then a few percent)."""
FLUSH_SECONDS = 0.5
"""…or fewer, this long after the first of them finished: a slow run's cases reach the store (``runs show``,
serve's Runs page, ``--resume`` after a crash) within this long of finishing."""


def run_meta(*, options: dict[str, Any], config_path: Optional[str] = None,
             eval_set_path: Optional[str] = None) -> dict[str, Any]:
    """What the store records about a run besides its results: this process's command line (redacted by
    the store), working folder, digests of the config and eval set files, versions, and ``options``."""
    import os
    import platform
    import shlex
    import sys
    from pathlib import Path

    from ..__about__ import __version__
    from ..core.redact import MASK, redact_argv

    def digest(path: Optional[str]) -> Optional[str]:
        try:
            return file_digest(Path(path)) if path else None
        except OSError:
            return None

    # --api-token X, --api-token=X: a flag's secret is hidden whatever it looks like (the mask unquoted,
    # as the store's redaction of the rest leaves it).
    argv = ["agentevals", *redact_argv(sys.argv[1:])]
    command = " ".join(a if a == MASK or a.endswith(f"={MASK}") else shlex.quote(a) for a in argv)
    return {"command": command, "cwd": os.getcwd(),
            "config_digest": digest(config_path), "eval_set_digest": digest(eval_set_path),
            "versions": {"agentevals": __version__, "python": platform.python_version(),
                         "platform": _platform_text()},
            "options": options}


def _platform_text() -> str:
    """``platform.platform()``'s text on Linux (``Linux-6.1.0-x86_64-with-glibc2.36``) without its cost: it
    reads the Python binary for the libc version and starts ``uname -p`` (~9 ms per run stored)."""
    import os
    import platform

    name = os.uname() if hasattr(os, "uname") else None
    if name is None or name.sysname != "Linux":  # macOS and Windows name their release their own way
        return platform.platform()
    try:
        libc = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"
    except (OSError, ValueError):  # not glibc (musl): platform.platform() finds what it can
        libc = None
    if not libc:
        return platform.platform()
    text = "-".join(part for part in (name.sysname, name.release, name.machine) if part).replace(" ", "_")
    return f"{text}-with-{libc.replace(' ', '')}"


class StoreReuse:
    """Decides, per (case, evaluator), whether a stored result replaces running it.

    ``resume_from``: reuse every result that run has (``--resume``). ``rerun_failed_from``: reuse
    that run's results except those that failed or errored (``--rerun-failed``). ``cache``: reuse
    the newest stored score for the same work key from any run (see ``store.keys``). Counts what was
    reused in ``reused``.

    An evaluator whose key cannot cover what decides its result (``NotCacheable``) gets no key: it runs
    every time, and the reason is logged once at INFO (``agentevals -v run``). ``ignore``: files this run
    writes (the store, its reports), left out of the folder digests so they do not change the key.
    """

    def __init__(self, store: RunStore, *, cache: bool = True, resume_from: Optional[str] = None,
                 rerun_failed_from: Optional[str] = None, ignore: Collection[Path] = ()) -> None:
        self.store = store
        self.cache = cache
        self.resume_from = resume_from
        self.rerun_failed_from = rerun_failed_from
        self.reused = 0
        self.refused: dict[str, str] = {}
        """Evaluator name → why its results are not cached."""
        self.failure: Optional[str] = None
        """Why the store could not be read (the first error); the run then runs everything itself."""
        self._ignore = [*ignore, *_store_files(store)]
        self._identities: dict[int, Optional[str]] = {}
        self._keys: dict[int, str] = {}  # id(MetricResult) → work key, until its case is recorded
        self._expected: dict[int, tuple[Any, Optional[str]]] = {}  # id(eval case) → (it, expected_digest)
        self._stored: dict[str, bool] = {}  # a key prefix (evaluator) → whether the store had any of its results

    @property
    def ignored(self) -> list[Path]:
        """Files left out of the folder digests: this run's reports and the store's own files."""
        return list(self._ignore)

    def identity(self, evaluator: BaseEvaluator) -> Optional[str]:
        """The evaluator's identity (``store.keys.evaluator_identity``: its config, code and versions), computed
        once per run; None when it is not cacheable (the reason logged once)."""
        if id(evaluator) not in self._identities:
            try:
                self._identities[id(evaluator)] = evaluator_identity(evaluator, ignore=self._ignore)
            except (NotCacheable, OSError) as refusal:  # OSError: a file that went away while hashed
                self._identities[id(evaluator)] = None
                name = evaluator.config.name
                self.refused[name] = str(refusal)
                log.info("result cache: evaluator '%s' runs every time, not cached: %s", name, refusal)
        return self._identities[id(evaluator)]

    def key(self, case: Case, evaluator: BaseEvaluator) -> Optional[str]:
        """The pair's work key, or None when its evaluator is not cacheable."""
        identity = self.identity(evaluator)
        if identity is None:
            return None
        # Kept on the case itself: cases come and go while the run streams, and an id() could be reused.
        digest = getattr(case, "_work_digest", None)
        if digest is None:
            expected = None
            if case.eval_case is not None:  # one eval case often matches many cases: its digest is made once
                held = self._expected.get(id(case.eval_case))
                if held is None:  # (the eval case is held with it: its id stays its own)
                    held = self._expected[id(case.eval_case)] = (case.eval_case, expected_digest(case.eval_case))
                expected = held[1]
            digest = case_digest(case, expected=expected)
            case._work_digest = digest  # type: ignore[attr-defined]  # a cache the model does not declare
        return work_key(digest, identity)

    def lookup(self, case: Case, evaluator: BaseEvaluator) -> Optional[list[MetricResult]]:
        key = self.key(case, evaluator)
        if key is None:
            return None
        if self.failure is not None:
            return None
        try:
            found = self._lookup(key, evaluator)
        except Exception as exc:  # any backend's error (a locked file, a stopped server): run it instead
            self.failure = _cause(exc)
            log.debug("run store %s: lookup failed", self.store.location, exc_info=True)
            return None
        if found is not None:
            self.reused += 1
        return found

    def _lookup(self, key: str, evaluator: BaseEvaluator) -> Optional[list[MetricResult]]:
        found = None
        if self.resume_from is not None:
            found = self.store.lookup(key, run_id=self.resume_from)
        elif self.rerun_failed_from is not None:
            statuses = self.store.stored_statuses(key, self.rerun_failed_from)
            if any(s in _FAILING for s in statuses):
                return None  # failed last time: run it, whatever the cache holds
            if statuses:
                found = self.store.lookup(key, run_id=self.rerun_failed_from)
        if found is None and self.cache and evaluator.reproducible and self._any_stored(key):
            found = self.store.lookup(key, statuses=_CACHEABLE)
        return found

    def _any_stored(self, key: str) -> bool:
        """Whether the store held any result of this key's evaluator when the run first asked (its keys share
        their first ``KEY_PREFIX`` digits): a new evaluator, or a new store, is looked up once, not per case."""
        prefix = key[:KEY_PREFIX]
        if prefix not in self._stored:
            self._stored[prefix] = self.store.has_key_prefix(prefix)
        return self._stored[prefix]

    def produced(self, case: Case, evaluator: BaseEvaluator, metrics: list[MetricResult]) -> None:
        key = self.key(case, evaluator)
        if key is None:
            return
        for metric in metrics:
            self._keys[id(metric)] = key

    def keys_for(self, case: CaseResult) -> dict[int, str]:
        """Work keys of a finished case's rows, by position (forgotten once asked)."""
        return {pos: key for pos, m in enumerate(case.metrics) if (key := self._keys.pop(id(m), None))}


def _store_files(store: RunStore) -> list[Path]:
    """A SQLite store's files (WAL and journal beside it), which change on every run."""
    from ._db import sqlite_path

    try:
        path = sqlite_path(store.db.location)
    except Exception:  # not a location we opened: nothing to leave out
        return []
    if path is None:
        return []
    return [Path(f"{path}{suffix}") for suffix in ("", "-wal", "-shm", "-journal")]


class StoreConsumer(RunConsumer):
    """Writes the run to the store as it goes: the run row first, then its finished cases in batches (every
    ``FLUSH_CASES`` cases or ``FLUSH_SECONDS``, one transaction each), the rest when the run ends or is
    abandoned. A run killed outright keeps every case written before its last batch; ``--resume`` runs the rest.

    ``exit_code`` computes the code recorded with the run; ``interrupted`` is set by whoever stopped the
    run (the CLI's signal handling), which makes the stored status ``interrupted`` (``--resume`` continues it).

    A store that fails mid-run (a stopped server, a file another process keeps locked) does not stop the
    run: the first error is kept in ``failure``, no further write waits on that store, ``unstored`` counts
    the cases it did not record, and at the end the run is marked ``failed`` with the reason if the
    store takes that write. The caller keeps every result (the reports) and says what was not stored:

        recorder = StoreConsumer(store, run_id, meta=meta)
        run = await run_evaluation(..., consumers=[recorder])
        if recorder.failure:
            print(f"{recorder.unstored} case(s) not stored: {recorder.failure}")
    """

    def __init__(self, store: RunStore, run_id: str, *, meta: dict[str, Any], reuse: Optional[StoreReuse] = None,
                 resume: bool = False, exit_code: Optional[Callable[[RunResult], int]] = None,
                 sources: Optional[Callable[[RunResult], list[SourceRecord]]] = None) -> None:
        self.store = store
        self.sources = sources
        """The pull sources the run reads and their windows (``runs show``, ``--since last``, ``--resume``):
        recorded as they appear (a killed run's windows are kept for ``--resume``), then when the run ends."""
        self._run: Optional[RunResult] = None
        self._sources_seen = 0
        self.run_id = run_id
        self.meta = meta
        self.reuse = reuse
        self.resume = resume
        self.exit_code = exit_code
        self.interrupted = False
        self.failure: Optional[str] = None
        """The first store error of this run (``ExceptionType: first line``), or None."""
        self.unstored = 0
        """Cases the store did not record."""
        self.recorded = 0
        """Cases the store recorded."""
        self.finished = False
        self.carried: dict[int, tuple[int, CaseResult]] = {}
        """The cases this run takes from a stored run, by ``id``, with their position there
        (``_replay.Carried.taken``): a resumed run has them stored already (not written again where they come
        back at that position); a ``--rerun-failed`` run copies their rows from ``carried_from``."""
        self.carried_from: Optional[str] = None
        """The run ``--rerun-failed`` takes the passing cases of (their rows are copied in SQL, never encoded)."""
        self._copies: list[tuple[int, int]] = []  # (position in carried_from, index in this run), until flushed
        self.copied_from: Optional[str] = None
        """A stored run whose cases this run repeats (a whole-input cache hit, ``store._replay``): its rows
        are copied in one statement when the run starts, not written case by case."""
        self._batch: list[tuple[int, CaseResult, dict[int, str]]] = []
        self._timer: Optional[asyncio.TimerHandle] = None
        self._writing = False

    def _fail(self, exc: Exception) -> None:
        if self.failure is None:
            self.failure = _cause(exc)
            log.debug("run store %s: write failed", self.store.location, exc_info=True)

    def run_started(self, run: RunResult) -> None:
        run.run_id = self.run_id
        self._run = run
        try:
            if self.resume:
                self.store.reopen_run(self.run_id)
            else:
                self.store.begin_run(self.run_id, started_at=run.started_at or "", **self.meta)
            if self.copied_from is not None:
                self.recorded = self.store.copy_cases(self.copied_from, self.run_id)
        except Exception as exc:
            self._fail(exc)

    def case_finished(self, index: int, case: CaseResult) -> None:
        if self.copied_from is not None:  # copied when the run started (or counted unstored, if that failed)
            self.unstored += self.failure is not None
            return
        taken = self.carried.pop(id(case), None) if self.carried else None
        if taken is not None and taken[1] is case:
            if self.resume and taken[0] == index:  # --resume: this run has it at this position already
                self.recorded += 1
                return
            if not self.resume and self.carried_from is not None:  # --rerun-failed: its rows, copied
                if self.failure is not None:
                    self.unstored += 1
                    return
                self._copies.append((taken[0], index))
                self._flush_soon()
                return
        keys = self.reuse.keys_for(case) if self.reuse else {}
        if self.failure is not None:  # one wait on a failed store is enough (a lock waits for seconds)
            self.unstored += 1
            return
        self._batch.append((index, case, keys))
        self._flush_soon()

    def _flush_soon(self) -> None:
        """Write now if a batch is full, else within ``FLUSH_SECONDS``."""
        if len(self._batch) + len(self._copies) >= FLUSH_CASES:
            self.flush()
        elif self._timer is None:
            self._timer = _later(self.flush)
            if self._timer is None:  # no event loop to come back on: now
                self.flush()

    def flush(self) -> None:
        """Write the cases finished since the last write, in one transaction."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if not (self._batch or self._copies) or self._writing:  # (``abandon`` from a signal while writing)
            return
        batch, self._batch = self._batch, []
        copies, self._copies = self._copies, []
        self._writing = True
        try:
            if self.failure is not None:
                self.unstored += len(batch) + len(copies)
                return
            self._record_sources(final=False)
            if batch:
                self.store.record_cases(self.run_id, batch)
            if copies:
                assert self.carried_from is not None
                self.store.copy_case_rows(self.carried_from, self.run_id, copies)
            self.recorded += len(batch) + len(copies)
        except Exception as exc:
            self._fail(exc)
            self.unstored += len(batch) + len(copies)
        finally:
            self._writing = False

    def run_finished(self, run: RunResult) -> None:
        from ..errors import StoreError

        self.flush()
        self._run = run
        if self.failure is None:  # before the run is "completed" (a completed run's windows are watermarks)
            try:
                self._record_sources(final=True)
            except Exception as exc:
                self._fail(exc)
        status = "interrupted" if self.interrupted else "aborted" if run.aborted else "completed"
        code = self.exit_code(run) if self.exit_code else run.exit_code()
        stored = run
        if self.failure is not None:
            # The run row, if the store takes this write again, says what happened (status and reason);
            # the cases it has are the ones recorded before the failure (``--resume`` adds the rest).
            status = "interrupted" if self.interrupted else "failed"
            code = code if self.interrupted else StoreError.exit_code
            stored = run.model_copy(update={"aborted": self.failure_line(len(run.cases))})
        try:
            self.store.finish_run(stored, status=status, exit_code=code, totals=run.totals())
            self.finished = True
        except Exception as exc:
            self._fail(exc)

    def _record_sources(self, *, final: bool) -> None:
        """Store the sources' windows: at the end, or when a source has begun reading since the last time."""
        if self.sources is None or self._run is None:
            return
        records = self.sources(self._run)
        if final or len(records) > self._sources_seen:
            self.store.record_sources(self.run_id, records)
            self._sources_seen = len(records)

    def abandon(self, exit_code: int) -> None:
        """The process ends now (a second Ctrl-C): the run is marked ``interrupted`` with what it recorded,
        never left ``running`` (``--resume`` continues it)."""
        if not self.finished:
            self.flush()
        if not self.finished and self.failure is None:
            self.store.close_run(self.run_id, status="interrupted", exit_code=exit_code)
            self.finished = True

    def failure_line(self, cases: int) -> str:
        """``run store runs.sqlite: 12 of 40 cases not recorded (OperationalError: database is locked)``."""
        return (f"run store {self.store.location}: {self.unstored} of {cases} case{'s' if cases != 1 else ''} not "
                f"recorded ({self.failure})")


def _later(callback: Callable[[], None]) -> Optional[asyncio.TimerHandle]:
    """``callback`` in ``FLUSH_SECONDS`` on the running event loop (the run's: consumers are called on it), or
    None outside one."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return None
    return loop.call_later(FLUSH_SECONDS, callback)


def _cause(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {first_line(exc)[:300]}"


class LiveRunRecorder(RunConsumer):
    """Records what ``agentevals serve`` evaluates as the cases of one run that stays open while it serves.

        recorder = LiveRunRecorder(store, meta={"command": "agentevals serve", ...})
        recorder.begin()             # the run is stored as ``live``
        await run_evaluation(traces, evaluators, consumers=[recorder])   # once per batch of sessions
        recorder.close()             # ``completed``, with its totals

    Finished sessions are written together: those of one evaluation batch when it ends (``run_finished``),
    or every ``FLUSH_SECONDS`` while a batch goes on, in one transaction with the run's new totals. A case
    is found again by its case id (the session id), so a session evaluated again replaces its case instead
    of adding one. Totals are kept as counts: ``agentevals runs list`` shows the live run's case count and
    pass rate as it grows, without anyone reading its cases. A write that fails is logged once per cause
    (the live sessions are still served from memory) and its sessions counted in ``failures``.
    """

    def __init__(self, store: RunStore, *, meta: dict[str, Any], run_id: Optional[str] = None) -> None:
        from ._store import new_run_id

        self.store = store
        self.run_id = run_id or new_run_id()
        self.meta = meta
        self.recorded = 0
        self.failures = 0
        self.begun = False
        self._next = 0
        self._cases: dict[str, int] = {}
        self._metrics: dict[str, dict[str, int]] = {}
        self._lock = threading.Lock()
        self._logged: set[str] = set()
        self._pending: dict[str, CaseResult] = {}
        """Sessions finished and not yet written, by case id (evaluated twice meanwhile: the latest)."""
        self._timer: Optional[asyncio.TimerHandle] = None

    def begin(self) -> None:
        """Store the run as ``live`` (raises ``StoreError`` like ``run`` when the store cannot be written)."""
        self.store.begin_run(self.run_id, started_at=utc_now(), status="live", totals=self.totals(), **self.meta)
        self.begun = True

    def totals(self) -> dict[str, Any]:
        """The run's totals so far (``RunResult.totals()`` of its stored cases)."""
        return tally_totals(self._cases, self._metrics)

    def case_finished(self, index: int, case: CaseResult) -> None:
        with self._lock:
            self._pending.pop(case.case_id, None)  # re-inserted: written in the order they last finished
            self._pending[case.case_id] = case
            if self._timer is None:  # a long batch (a slow judge): what finished is written meanwhile
                self._timer = _later(self.flush)

    def run_finished(self, run: RunResult) -> None:
        self.flush()

    def flush(self) -> None:
        """Write the sessions finished since the last write, in one transaction (a failure is logged)."""
        with self._lock:
            if self._timer is not None:
                self._timer.cancel()
                self._timer = None
            cases = list(self._pending.values())
            self._pending.clear()
            if not cases:
                return
            try:
                self._record(cases)
            except Exception as exc:  # any backend's error: the server goes on, the cause is logged once
                self.failures += len(cases)
                cause = f"{type(exc).__name__}: {first_line(exc)}"
                if cause not in self._logged and len(self._logged) < 20:
                    self._logged.add(cause)
                    log.warning("run store %s: %d session(s) not recorded in run %s (%s): %s", self.store.location,
                                len(cases), self.run_id, cases[0].case_id, cause)

    def _record(self, finished: list[CaseResult]) -> None:
        cases, metrics = dict(self._cases), {name: dict(per) for name, per in self._metrics.items()}
        known = self.store.case_indexes(self.run_id, [case.case_id for case in finished])
        following = self._next
        rows: list[tuple[int, CaseResult, dict[int, str]]] = []
        for case in finished:
            index = known.get(case.case_id)
            if index is None:
                index, following = following, following + 1
            else:  # replaced: its old statuses leave the counts
                old_status, old_rows = self.store.case_keys(self.run_id, index)
                if old_status is not None:
                    cases[old_status] -= 1
                for name, old in old_rows:
                    metrics[name][old] -= 1
                    if not any(metrics[name].values()):  # a metric only that case had: gone, as in totals()
                        del metrics[name]
            status = case_key(case)
            cases[status] = cases.get(status, 0) + 1
            for m in case.metrics:
                per = metrics.setdefault(m.name, {})
                key = row_key(m)
                per[key] = per.get(key, 0) + 1
            rows.append((index, case, {}))
        self.store.record_cases(self.run_id, rows, totals=tally_totals(cases, metrics))
        self._cases, self._metrics = cases, metrics
        self._next = max(self._next, following)
        self.recorded += len(rows)

    def close(self, *, status: str = "completed") -> None:
        """Write what is left, then end the run with its final totals (``interrupted`` when sessions were left
        unevaluated)."""
        self.flush()
        with self._lock:
            self.store.close_run(self.run_id, status=status, totals=self.totals())
