"""``RunStore``: runs, their cases and metric results, written case by case, read back by id."""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Optional, Union

import orjson

from ..core._json import dumps as json_bytes
from ..core._json import loads as json_loads
from ..core.redact import may_need_redaction, redact, redact_obj, redact_url
from ..errors import RunNotFoundError, StoreError
from ..results import SKIP_KINDS, CaseResult, MetricResult, RunResult, Status, case_status, row_key, utc_now
from ._db import Database, connect
from ._labels import (
    LabelRecord,
    check_metric,
    delete_label,
    make_label,
    read_labels,
    resolve_case,
    write_labels,
)

__all__ = ["RUN_STATUSES", "LabelRecord", "RunRecord", "RunStore", "SourceRecord", "new_run_id", "report_context_values",
           "utc_now", "utc_text"]

RUN_STATUSES = ("running", "completed", "aborted", "interrupted", "failed", "live")
"""``running`` also marks a run whose process died without a word (killed with SIGKILL). ``failed``: the
store could not record every case (it failed mid-run; the reports have them all; ``--resume`` completes
it). ``live``: the
run of an ``agentevals serve`` that is serving (its sessions are added as they are evaluated; it is
``completed`` when serve stops, or stays ``live`` if serve was killed)."""


MAX_RUN_REF = 200
"""The longest run reference looked up (ids are 29 characters; older ones 22)."""

_last_micros = 0
_id_lock = threading.Lock()


def new_run_id() -> str:
    """``20260102-030405-123456-1a2b3c``: UTC time to the microsecond, then a random tail.

    Ids sort in start order, also within one second (two ids of one process are at least a microsecond
    apart), and never collide (the random tail). Ids of older versions (``20260102-030405-1a2b3c``) stay
    valid: an id is only ever compared as text and looked up by prefix.
    """
    global _last_micros
    with _id_lock:
        micros = _last_micros = max(time.time_ns() // 1000, _last_micros + 1)
    seconds, fraction = divmod(micros, 1_000_000)
    return f"{time.strftime('%Y%m%d-%H%M%S', time.gmtime(seconds))}-{fraction:06d}-{uuid.uuid4().hex[:6]}"


@dataclass
class RunRecord:
    """One row of ``runs``: what ``agentevals runs list`` shows."""

    run_id: str
    started_at: str
    finished_at: Optional[str]
    status: str
    command: str
    cwd: Optional[str]
    config_digest: Optional[str]
    eval_set_digest: Optional[str]
    versions: dict[str, Any]
    options: dict[str, Any]
    totals: Optional[dict[str, Any]]
    exit_code: Optional[int]

    def as_dict(self) -> dict[str, Any]:
        """The record as ``runs list --json`` (and ``/api/runs``, MCP ``list_runs``) gives it: its fields, and
        ``pass_rate_interval`` (the pass rate's Wilson 95% interval, ``results.intervals.rate_interval``; None
        without a pass rate)."""
        from ..results.intervals import totals_interval

        return {**self.__dict__, "pass_rate_interval": totals_interval(self.totals)}


@dataclass
class SourceRecord:
    """One pull source a run read (a row of ``run_sources``): what ``runs show`` lists, what ``--resume`` and
    ``--rerun-failed`` read again, and, for ``--since last``, where the next run of the same source starts."""

    uri: str
    key: str
    """The source without its window (``PullQuery.key``): runs of the same source share it."""
    start: datetime
    end: datetime
    traces: int = 0
    newest: Optional[datetime] = None
    """The latest start time among the traces read (None: unknown or none)."""
    error: Optional[str] = None
    """Why the read failed (the run's input error), None when it read the whole window."""


_RUN_COLUMNS = ("run_id, started_at, finished_at, status, command, cwd, config_digest, eval_set_digest, versions, "
                "options, totals, exit_code")


class RunStore:
    """The run store at one location (a SQLite file or a Postgres URL).

    Example:
        ```python
        store = RunStore.open("runs.sqlite")
        for record in store.list_runs(limit=5):
            print(record.run_id, record.status, record.totals["pass_rate"])
        run = store.load_run(store.resolve("latest"))
        ```
    """

    def __init__(self, db: Database) -> None:
        self.db = db

    @classmethod
    def open(cls, location: str, *, migrate: Optional[bool] = None) -> RunStore:
        return cls(connect(location, migrate=migrate))

    @property
    def location(self) -> str:
        """Where the store is, as messages show it (a URL's password hidden)."""
        return redact_url(self.db.location)

    def close(self) -> None:
        self.db.close()

    # Writing ---------------------------------------------------------------------------------------
    def begin_run(self, run_id: str, *, command: str, cwd: Optional[str], config_digest: Optional[str],
                  eval_set_digest: Optional[str], versions: dict[str, Any], options: dict[str, Any],
                  started_at: str, status: str = "running", totals: Optional[dict[str, Any]] = None) -> None:
        """Record a new run as ``running`` (or ``live``, for ``serve``)."""
        _check_status(status)
        with self._writing():
            self.db.execute(
                f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                (run_id, started_at, status, redact(command), cwd, config_digest, eval_set_digest, _dumps(versions),
                 _dumps(options), _dumps(totals) if totals is not None else None))

    def reopen_run(self, run_id: str) -> None:
        """A resumed run is ``running`` again; its stored cases stay until replaced."""
        with self._writing():
            self.db.execute("UPDATE runs SET status = 'running', finished_at = NULL WHERE run_id = ?", (run_id,))

    def record_case(self, run_id: str, index: int, case: CaseResult, keys: dict[int, str], *,
                    totals: Optional[dict[str, Any]] = None) -> None:
        """Store one finished case (replacing what a resumed run stored at ``index``). ``keys`` maps a
        metric's position in ``case.metrics`` to its work key (see ``store.keys``); ``totals``, when
        given, become the run's totals in the same transaction (a live run's running count)."""
        self.record_cases(run_id, [(index, case, keys)], totals=totals)

    def record_cases(self, run_id: str, cases: Sequence[tuple[int, CaseResult, dict[int, str]]], *,
                     totals: Optional[dict[str, Any]] = None) -> None:
        """Store finished cases in one transaction, each as ``record_case`` stores one: ``(index, case, keys)``,
        the indexes distinct (a case already stored at one is replaced). What ``run`` and ``serve`` write as
        a run goes: one transaction and a few multi-row statements per batch, not a dozen statements per case.

            store.record_cases(run_id, [(0, first, {}), (1, second, {0: key})])
        """
        # Every row's JSON column is encoded first, all of them checked for secrets in one scan (``_dumps_all``).
        documents: list[Any] = []
        for _, case, _ in cases:
            documents.append(_shell(case))
            documents += [m.model_dump(mode="json") for m in case.metrics]
        texts = iter(_dumps_all(documents))  # in that order: a case's shell, then its metric rows
        case_rows: list[tuple[Any, ...]] = []
        metric_rows: list[tuple[Any, ...]] = []
        trace_rows: list[tuple[Any, ...]] = []
        labels: list[LabelRecord] = []
        for index, case, keys in cases:
            case_rows.append((run_id, index, case.case_id, case_status(case).value, next(texts)))
            metric_rows += [(run_id, index, pos, case.case_id, m.name, m.name, m.status.value, m.score, keys.get(pos),
                             next(texts)) for pos, m in enumerate(case.metrics)]
            trace_rows += [(run_id, index, t) for t in dict.fromkeys(case.trace_ids)]
            # from the eval case it matched (labels that travel with a golden set)
            labels += [LabelRecord(run_id, index, case.case_id, label) for label in case.labels]
        where = [(run_id, index) for index, _, _ in cases]
        with self._writing():
            for table in ("metric_results", "cases", "case_traces"):
                self.db.executemany(f"DELETE FROM {table} WHERE run_id = ? AND idx = ?", where)
            self.db.executemany("INSERT INTO case_traces (run_id, idx, trace_id) VALUES (?, ?, ?)", trace_rows)
            self.db.executemany("INSERT INTO cases (run_id, idx, case_id, status, case_json) VALUES (?, ?, ?, ?, ?)",
                                case_rows)
            self.db.executemany(
                "INSERT INTO metric_results (run_id, idx, pos, case_id, evaluator, metric, status, score, work_key, "
                "metric_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", metric_rows)
            if totals is not None:
                self.db.execute("UPDATE runs SET totals = ? WHERE run_id = ?", (_dumps(totals), run_id))
            if labels:
                write_labels(self.db, labels)

    def copy_cases(self, source: str, run_id: str) -> int:
        """Copy every stored case of run ``source`` (its metric rows, work keys and trace ids, not its labels)
        into run ``run_id``, at the same indexes: a rerun served whole from the cache (``store._replay``).
        The rows were redacted when first written. Returns how many cases were copied.

        ``run_id`` is a run ``begin_run`` has just added (a replay is never a resumed run), so it holds no rows
        to clear: its rows' foreign keys need the run first, and deleting a run deletes them."""
        with self._writing():
            for table, columns in _CASE_TABLES:
                self.db.execute(f"INSERT INTO {table} (run_id, idx, {columns}) SELECT ?, idx, {columns} FROM {table} "
                                "WHERE run_id = ?", (run_id, source))
            return int(self.db.execute("SELECT COUNT(*) FROM cases WHERE run_id = ?", (run_id,))[0][0])

    def copy_case_rows(self, source: str, run_id: str, moves: Sequence[tuple[int, int]]) -> None:
        """Copy the cases of run ``source`` at the first position of each ``(position, index)`` pair into run
        ``run_id`` at the second (replacing what it has there), in one transaction: the cases a ``--rerun-failed``
        run takes as stored (their metric rows, work keys and trace ids; not labels, which such a run never
        takes). The rows were redacted when first written.

            store.copy_case_rows("run-1", "run-2", [(0, 0), (3, 2)])
        """
        where = [(run_id, index) for _, index in moves]
        copied = [(run_id, index, source, position) for position, index in moves]
        with self._writing():
            for table in ("metric_results", "cases", "case_traces"):  # as ``record_cases``: a case's rows go first
                self.db.executemany(f"DELETE FROM {table} WHERE run_id = ? AND idx = ?", where)
            for table, columns in _CASE_TABLES:
                self.db.executemany(f"INSERT INTO {table} (run_id, idx, {columns}) SELECT ?, ?, {columns} "
                                    f"FROM {table} WHERE run_id = ? AND idx = ?", copied)

    def close_run(self, run_id: str, *, status: str, totals: Optional[dict[str, Any]] = None,
                  exit_code: Optional[int] = None, finished_at: Optional[str] = None) -> None:
        """End a run that was written case by case without a final ``RunResult`` (``serve``'s live run)."""
        _check_status(status)
        with self._writing():
            self.db.execute("UPDATE runs SET status = ?, finished_at = ?, exit_code = ?, totals = COALESCE(?, totals) "
                            "WHERE run_id = ?", (status, finished_at or utc_now(), exit_code,
                                                 _dumps(totals) if totals is not None else None, run_id))

    def finish_run(self, run: RunResult, *, status: str, exit_code: Optional[int], totals: dict[str, Any]) -> None:
        """Close the run: final status, totals, exit code and its run-level parts (notes, input errors, …).

        Cases past the run's last one (left by an earlier attempt of a resumed run) are dropped.
        """
        _check_status(status)
        extra = run.model_dump(mode="json", exclude={"cases"})
        with self._writing():
            self.db.execute("UPDATE runs SET status = ?, finished_at = ?, totals = ?, exit_code = ?, run_json = ? "
                            "WHERE run_id = ?", (status, run.finished_at or utc_now(), _dumps(totals), exit_code,
                                                 _dumps(extra), run.run_id))
            # Repetition numbers are known only once every case is in: rewrite the cases that got one.
            # In batches: a 100,000-case run (its cases spilled to disk) never holds every row at once.
            rows: list[tuple[str, Optional[str], int]] = []
            for i, c in enumerate(run.cases):
                if c.repeat_index is not None:
                    rows.append((_dumps(_shell(c)), run.run_id, i))
                if len(rows) >= 500:
                    self.db.executemany("UPDATE cases SET case_json = ? WHERE run_id = ? AND idx = ?", rows)
                    rows = []
            self.db.executemany("UPDATE cases SET case_json = ? WHERE run_id = ? AND idx = ?", rows)
            if status != "interrupted":
                self.db.execute("DELETE FROM metric_results WHERE run_id = ? AND idx >= ?", (run.run_id, len(run.cases)))
                self.db.execute("DELETE FROM cases WHERE run_id = ? AND idx >= ?", (run.run_id, len(run.cases)))
                self.db.execute("DELETE FROM case_traces WHERE run_id = ? AND idx >= ?", (run.run_id, len(run.cases)))

    def record_sources(self, run_id: str, sources: Sequence[SourceRecord]) -> None:
        """Store the pull sources the run read, with their windows (replacing what a resumed run stored)."""
        rows = [(run_id, pos, redact(s.uri), redact(s.key), s.start.isoformat(), s.end.isoformat(), s.traces,
                 s.newest.isoformat() if s.newest else None, s.error) for pos, s in enumerate(sources)]
        with self._writing():
            self.db.execute("DELETE FROM run_sources WHERE run_id = ?", (run_id,))
            self.db.executemany("INSERT INTO run_sources (run_id, pos, uri, source_key, window_start, window_end, "
                                "traces, newest, error) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

    # Reading ---------------------------------------------------------------------------------------
    def file_digests(self, paths: Sequence[Path]) -> list[str]:
        """The sha256 of each file's bytes, not read again when its stat is as when it was last hashed
        (``store._digests``: the racy-window rule, the rows as a cache). Raises ``OSError`` for a file that
        cannot be read.

            key_part = store.file_digests([Path("traces.json")])[0]
        """
        from ._digests import stored_file_digests

        return stored_file_digests(self.db, paths)

    def sources(self, run_id: str) -> list[SourceRecord]:
        """The pull sources the run read, in input order (empty for a run of files only)."""
        return [_source(row) for row in self.db.execute(
            "SELECT uri, source_key, window_start, window_end, traces, newest, error FROM run_sources "
            "WHERE run_id = ? ORDER BY pos", (run_id,))]

    def watermark(self, key: str, *, live: bool = False) -> Optional[tuple[datetime, str]]:
        """``--since last``: the end of the window that the latest completed run of the source ``key`` read
        in full, and that run's id; None when no completed run read it (a failed read does not count: its
        window is read again).

        ``live``: also the windows of ``serve --pull`` runs (``live``, or ``completed``/``interrupted`` after
        serve stopped, or still ``live`` after it was killed): a pulled window is recorded only once its
        traces are scored and stored, so it counts whatever became of the process; the latest end wins.
        """
        if live:
            rows = self.db.execute(
                "SELECT s.window_end, s.run_id FROM run_sources s JOIN runs r ON r.run_id = s.run_id "
                "WHERE s.source_key = ? AND s.error IS NULL AND r.status IN ('completed', 'live', 'interrupted') "
                "ORDER BY s.window_end DESC LIMIT 1", (key,))
        else:
            rows = self.db.execute(
                "SELECT s.window_end, s.run_id FROM run_sources s JOIN runs r ON r.run_id = s.run_id "
                "WHERE s.source_key = ? AND s.error IS NULL AND r.status = 'completed' "
                "ORDER BY r.started_at DESC, r.run_id DESC, s.window_end DESC LIMIT 1", (key,))
        return (datetime.fromisoformat(rows[0][0]), rows[0][1]) if rows else None

    def scored_traces(self, trace_ids: Sequence[str], *,
                      statuses: Sequence[str] = ("PASSED", "FAILED", "INFORMATIONAL")) -> set[str]:
        """Which of ``trace_ids`` some stored case holds with a result (its status PASSED, FAILED or
        INFORMATIONAL by default; a case with an ERROR row, or skipped or not evaluated, does not count):
        what ``run --unscored`` leaves out (``serve --pull`` passes every status: a trace it evaluated once,
        whatever came of it, is not evaluated again). Cases stored before schema version 4 are not known."""
        found: set[str] = set()
        ids = list(dict.fromkeys(trace_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            rows = self.db.execute(
                "SELECT DISTINCT t.trace_id FROM case_traces t JOIN cases c ON c.run_id = t.run_id AND c.idx = t.idx "
                f"WHERE t.trace_id IN ({', '.join('?' * len(chunk))}) "
                f"AND c.status IN ({', '.join('?' * len(statuses))})", [*chunk, *statuses])
            found.update(row[0] for row in rows)
        return found

    def list_runs(self, *, limit: int = 20, statuses: Sequence[str] = (), before: Optional[str] = None) -> list[RunRecord]:
        """The newest runs first; only those with one of ``statuses`` (when given) and started before
        ``before`` (a time in ``utc_now``'s form, which sorts as text)."""
        where: list[str] = []
        params: list[Any] = []
        if statuses:
            where.append(f"status IN ({', '.join('?' * len(statuses))})")
            params.extend(statuses)
        if before is not None:
            where.append("started_at < ?")
            params.append(before)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        rows = self.db.execute(f"SELECT {_RUN_COLUMNS} FROM runs{clause} ORDER BY started_at DESC, run_id DESC "
                               "LIMIT ?", (*params, limit))
        return [_record(row) for row in rows]

    def get_run(self, run_id: str) -> RunRecord:
        rows = self.db.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE run_id = ?", (run_id,))
        if not rows:
            raise RunNotFoundError(f"no run {run_id!r} in the run store {self.location} (see 'agentevals runs list')")
        return _record(rows[0])

    def resolve(self, ref: Optional[str] = None, *, statuses: tuple[str, ...] = (), batch: bool = False) -> str:
        """A run id from ``ref``: a full id, a unique prefix, ``latest``/``last`` or None (the latest run,
        among ``statuses`` when given; with ``batch``, the latest run of ``agentevals run``, not a live run
        of ``serve``: what ``run --baseline latest``, ``--rerun-failed`` and ``--resume`` mean)."""
        if ref in (None, "", "latest", "last"):
            where = f" WHERE status IN ({', '.join('?' * len(statuses))})" if statuses else ""
            # Live runs are rare beside batch runs: scan the newest ids in pages rather than parse JSON in SQL.
            offset = 0
            while True:
                rows = self.db.execute(f"SELECT run_id, options FROM runs{where} ORDER BY started_at DESC, "
                                       f"run_id DESC LIMIT 50 OFFSET {offset}", statuses)
                for run_id, options in rows:
                    if not batch or not json.loads(options or "{}").get("live"):
                        return run_id
                if len(rows) < 50:
                    break
                offset += 50
            which = f" {'/'.join(statuses)}" if statuses else ""
            kind = " of agentevals run" if batch else ""
            raise RunNotFoundError(f"no{which} run{kind} in the run store {self.location}")
        assert ref is not None
        if len(ref) > MAX_RUN_REF or "\0" in ref:  # no run id is like that (and Postgres text holds no NUL)
            raise RunNotFoundError(f"no run {ref[:40]!r}… ({len(ref)} characters) in the run store {self.location} "
                                   "(see 'agentevals runs list')")
        # A literal prefix: substr, not LIKE (where '%' and '_' in the reference would be wildcards).
        rows = self.db.execute("SELECT run_id FROM runs WHERE substr(run_id, 1, CAST(? AS INTEGER)) = ? "
                               "ORDER BY run_id LIMIT 6", (len(ref), ref))
        ids = [row[0] for row in rows]
        if ref in ids:
            return ref
        if len(ids) == 1:
            return ids[0]
        if not ids:
            raise RunNotFoundError(f"no run {ref!r} in the run store {self.location} (see 'agentevals runs list')")
        raise StoreError(f"run {ref!r} is ambiguous: {', '.join(ids[:5])}{' …' if len(ids) > 5 else ''}")

    def load_run(self, run_id: str, *, cases: Optional[list[tuple[int, CaseResult]]] = None) -> RunResult:
        """The stored run as a ``RunResult`` (cases in order; an interrupted run has what finished).

        ``cases``: what ``load_cases(run_id)`` returned, when the caller already read them (the web UI
        needs each case's index too).
        """
        record = self.get_run(run_id)
        extra = json.loads(self.db.execute("SELECT run_json FROM runs WHERE run_id = ?", (run_id,))[0][0] or "{}")
        run = RunResult.model_validate({**extra, "cases": []})
        run.cases = [case for _, case in (self.load_cases(run_id) if cases is None else cases)]
        run.run_id = run_id
        run.started_at = run.started_at or record.started_at
        run.finished_at = run.finished_at or record.finished_at
        if record.status == "running" and not run.aborted:
            run.aborted = "the run did not finish (still running, or its process was killed)"
        elif record.status == "failed" and not run.aborted:
            run.aborted = "the run store failed during the run: some cases were not recorded"
        elif record.status == "live" and not run.aborted:
            run.aborted = "a live run: agentevals serve is still recording its sessions (or was killed)"
        return run

    def load_cases(self, run_id: str, *, index: Optional[int] = None,
                   indexes: Optional[Sequence[int]] = None) -> list[tuple[int, CaseResult]]:
        """The stored cases of a run as ``(index, case)`` in run order (an interrupted run may have gaps), each
        with its human labels (``CaseResult.labels``); only the case at ``index`` when given (an empty list when
        there is none), or those at ``indexes`` (a few hundred at a time: one statement each)."""
        where = "run_id = ?"
        params: list[Any] = [run_id]
        if index is not None:
            where, params = where + " AND idx = ?", [run_id, index]
        elif indexes is not None:
            where, params = where + f" AND idx IN ({', '.join('?' * len(indexes))})", [run_id, *indexes]
            if not indexes:
                return []
        # Parsed with orjson and validated with their case in one call: a 1,000-case run loads in half the time
        # of a validation per row (a rerun served from the cache loads every case of the run it repeats).
        metrics: dict[int, list[Any]] = {}
        for idx, metric_json in self.db.execute(
                f"SELECT idx, metric_json FROM metric_results WHERE {where} ORDER BY idx, pos", params):
            metrics.setdefault(idx, []).append(_loads(metric_json))
        labels: dict[tuple[int, str], list[Any]] = {}  # by index and case id: never on another case stored there
        for record in read_labels(self.db, run_id, index=index, indexes=indexes):
            labels.setdefault((record.index, record.case_id), []).append(record.label)
        cases = []
        for idx, case_json in self.db.execute(f"SELECT idx, case_json FROM cases WHERE {where} ORDER BY idx", params):
            data = _loads(case_json)
            transcript = data.pop("_transcript", None)
            data["metrics"] = metrics.get(idx, [])
            case = CaseResult.model_validate(data)
            case.labels = labels.get((idx, case.case_id), [])
            if transcript:
                case._transcript = transcript
            cases.append((idx, case))
        return cases

    def has_key_prefix(self, prefix: str) -> bool:
        """Whether any stored result has a work key starting with ``prefix`` (hex digits: ``store.keys.KEY_PREFIX``
        of an evaluator's identity), by one probe of the work-key index."""
        # A range, not LIKE: Postgres uses a text index for LIKE only under the C collation; every key with the
        # prefix sorts between it and the prefix followed by "g", hex digits being [0-9a-f].
        return bool(self.db.execute("SELECT 1 FROM metric_results WHERE work_key >= ? AND work_key < ? LIMIT 1",
                                    (prefix, f"{prefix}g")))

    def lookup(self, key: str, *, run_id: Optional[str] = None,
               statuses: tuple[Status, ...] = (), exclude_run: Optional[str] = None) -> Optional[list[MetricResult]]:
        """The stored results of one (case, evaluator) pair by work key: from ``run_id``, or else from
        the newest run that has them; only when every row's status is in ``statuses`` (any if empty)."""
        where, params = "m.work_key = ?", [key]
        if run_id is not None:
            where += " AND m.run_id = ?"
            params.append(run_id)
        if exclude_run is not None:
            where += " AND m.run_id <> ?"
            params.append(exclude_run)
        rows = self.db.execute(
            "SELECT m.run_id, m.idx, m.status, m.metric_json FROM metric_results m JOIN runs r ON r.run_id = m.run_id "
            f"WHERE {where} ORDER BY r.started_at DESC, m.run_id DESC, m.idx, m.pos LIMIT 64", params)
        if not rows:
            return None
        first = (rows[0][0], rows[0][1])
        group = [row for row in rows if (row[0], row[1]) == first]
        if statuses and any(Status(row[2]) not in statuses for row in group):
            return None
        return [MetricResult.model_validate_json(row[3]) for row in group]

    def case_index(self, run_id: str, case_id: str) -> Optional[int]:
        """Where ``case_id`` is stored in the run (its first position), or None."""
        # Not MIN(idx) in SQL: SQLite would walk the run's cases in idx order instead of using cases_case_id.
        rows = self.db.execute("SELECT idx FROM cases WHERE run_id = ? AND case_id = ?", (run_id, case_id))
        return min(row[0] for row in rows) if rows else None

    def case_indexes(self, run_id: str, case_ids: Sequence[str]) -> dict[str, int]:
        """``case_index`` of many case ids at once (those stored in the run; the others are left out)."""
        found: dict[str, int] = {}
        ids = list(dict.fromkeys(case_ids))
        for start in range(0, len(ids), 500):
            chunk = ids[start:start + 500]
            for case_id, idx in self.db.execute(
                    f"SELECT case_id, idx FROM cases WHERE run_id = ? AND case_id IN ({', '.join('?' * len(chunk))})",
                    [run_id, *chunk]):
                found[case_id] = min(idx, found.get(case_id, idx))
        return found

    def case_statuses(self, run_id: str, index: int) -> tuple[Optional[Status], list[tuple[str, Status]]]:
        """The stored case status at ``index`` and its rows as (metric, status); (None, []) when empty."""
        case = self.db.execute("SELECT status FROM cases WHERE run_id = ? AND idx = ?", (run_id, index))
        rows = self.db.execute("SELECT metric, status FROM metric_results WHERE run_id = ? AND idx = ? ORDER BY pos",
                               (run_id, index))
        return (Status(case[0][0]) if case else None), [(name, Status(status)) for name, status in rows]

    def case_keys(self, run_id: str, index: int) -> tuple[Optional[str], list[tuple[str, str]]]:
        """Like ``case_statuses``, each counted as ``totals`` counts it: a skipped row (sampled or filtered
        out, over budget) under its kind (``results.row_key``, ``case_key``); (None, []) when empty."""
        status, rows = self.case_statuses(run_id, index)
        if status is None or not any(s == Status.NOT_EVALUATED for _, s in rows):
            return (status.value if status else None), [(name, s.value) for name, s in rows]
        stored = self.db.execute("SELECT metric_json FROM metric_results WHERE run_id = ? AND idx = ? ORDER BY pos",
                                 (run_id, index))
        metrics = [MetricResult.model_validate_json(row[0]) for row in stored]
        keys = [(m.name, row_key(m)) for m in metrics]
        if keys and all(k in SKIP_KINDS for _, k in keys):
            return keys[0][1], keys
        return status.value, keys

    def stored_statuses(self, key: str, run_id: str) -> list[Status]:
        """Statuses stored for one work key in one run (empty when the run has no result for it)."""
        return [Status(row[0]) for row in self.db.execute(
            "SELECT status FROM metric_results WHERE work_key = ? AND run_id = ?", (key, run_id))]

    # Human labels ----------------------------------------------------------------------------------
    def label_record(self, run_id: str, case: Union[str, int], *, verdict: Optional[str] = None,
                     score: Union[float, str, None] = None, metric: Optional[str] = None, note: Optional[str] = None,
                     labeler: Optional[str] = None, created_at: Optional[str] = None) -> LabelRecord:
        """A checked label of the stored ``case`` (its case id, or its index as an int) of run ``run_id`` (a full
        id), not yet stored. Raises ``RunNotFoundError`` for an unknown run, ``ConfigError`` for an unknown case
        or metric (``metric`` must be one of the case's result rows; None labels the whole case), a verdict that
        is not pass/fail, a score outside [0, 1], or neither given."""
        self.get_run(run_id)
        index, case_id = resolve_case(self.db, run_id, case)
        label = make_label(verdict=verdict, score=score, metric=metric, note=note, labeler=labeler,
                           created_at=created_at)
        if label.metric is not None:
            check_metric(self.db, run_id, index, case_id, label.metric)
        return LabelRecord(run_id, index, case_id, label)

    def add_label(self, run_id: str, case: Union[str, int], *, verdict: Optional[str] = None,
                  score: Union[float, str, None] = None, metric: Optional[str] = None, note: Optional[str] = None,
                  labeler: Optional[str] = None, created_at: Optional[str] = None) -> LabelRecord:
        """Label a stored case, or one metric of it (see ``label_record``), replacing the label the same labeler
        gave the same case and metric; returns what was stored (the note with secrets redacted).

        Example:
            ```python
            store.add_label(run_id, "3e289017fe03ffd7c4145316d2eb3d0d", verdict="fail",
                            metric="tool_trajectory_avg_score", note="called helm twice", labeler="ana")
            ```
        """
        record = self.label_record(run_id, case, verdict=verdict, score=score, metric=metric, note=note,
                                   labeler=labeler, created_at=created_at)
        self.add_labels([record])
        return record

    def add_labels(self, records: Sequence[LabelRecord]) -> None:
        """Store checked labels (``label_record``) in one transaction: all or none."""
        with self._writing():
            write_labels(self.db, records)

    def labels(self, run_id: Optional[str] = None) -> list[LabelRecord]:
        """The labels of run ``run_id`` in case order (of every run, oldest first, when None)."""
        return read_labels(self.db, run_id)

    def remove_label(self, run_id: str, index: int, *, metric: Optional[str] = None,
                     labeler: Optional[str] = None) -> bool:
        """Remove the label ``labeler`` gave the case at ``index`` (its ``metric``, or the whole case); whether
        there was one."""
        with self._writing():
            return delete_label(self.db, run_id, index, metric=metric, labeler=labeler)

    # ------------------------------------------------------------------------------------------------
    def _writing(self) -> AbstractContextManager[None]:
        return self.db.transaction()


def incomplete_reason(record: RunRecord, run: RunResult) -> Optional[str]:
    """Why a stored run is not a finished report (``runs show`` and the API mark it), or None."""
    return run.aborted if record.status in ("interrupted", "running", "failed", "live") else None


def _check_status(status: str) -> None:
    if status not in RUN_STATUSES:
        raise ValueError(f"unknown run status {status!r}")


def _record(row: tuple[Any, ...]) -> RunRecord:
    (run_id, started, finished, status, command, cwd, config_digest, eval_set_digest, versions, options, totals,
     exit_code) = row
    return RunRecord(run_id, started, finished, status, command, cwd, config_digest, eval_set_digest,
                     json.loads(versions or "{}"), json.loads(options or "{}"),
                     json.loads(totals) if totals else None, exit_code)


_CASE_TABLES = (("cases", "case_id, status, case_json"),
                ("metric_results", "pos, case_id, evaluator, metric, status, score, work_key, metric_json"),
                ("case_traces", "trace_id"))
"""The tables holding a run's cases, with their columns but ``run_id`` and ``idx``, in the order a case's rows are
written (its metric rows and trace ids refer to it)."""


def _source(row: tuple[Any, ...]) -> SourceRecord:
    uri, key, start, end, traces, newest, error = row
    return SourceRecord(uri, key, datetime.fromisoformat(start), datetime.fromisoformat(end), int(traces),
                        datetime.fromisoformat(newest) if newest else None, error)


def _shell(case: CaseResult) -> dict[str, Any]:
    """A case without its metric rows and labels (stored apart), with its transcript."""
    shell = case.model_dump(mode="json", exclude={"metrics", "labels"})
    if case._transcript:
        shell["_transcript"] = case._transcript
    return shell


def _loads(text: str) -> Any:
    """A stored JSON text: orjson, or the stdlib for what it refuses (``NaN``, integers past 64 bits, which
    ``_dumps`` may have written)."""
    return json_loads(text)


def _dumps(value: Any) -> str:
    """JSON of ``value`` with secrets redacted: nothing the store keeps can leak a key (``agentevals.core.redact``)."""
    return _dumps_all([value])[0]


def _dumps_all(values: Sequence[Any]) -> list[str]:
    """``_dumps`` of each value, the encoded texts checked for secrets in one scan: rows have nothing to hide but
    rarely (then only the rows that may are walked and encoded again), and the scan costs as much per row as
    encoding it."""
    texts = [_encode(value) for value in values]
    # Joined by a newline, which no pattern of the redactor matches across: a secret in one text is still
    # found; one the join seems to make (across two texts) only costs each text its own check.
    if texts and may_need_redaction(texts[0] if len(texts) == 1 else "\n".join(texts)):
        texts = [_encode(redact_obj(value)) if may_need_redaction(text) else text
                 for value, text in zip(values, texts, strict=True)]
    return texts


_ORJSON_OPTIONS = orjson.OPT_NON_STR_KEYS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _encode(value: Any) -> str:
    """Compact JSON, UTF-8 as it is, what is not JSON as its ``str`` (a date, a dataclass): orjson, several times
    the stdlib's speed; NaN and infinities are written null (the stdlib's ``NaN`` is no JSON). What orjson does
    not encode (an integer past 64 bits, a lone surrogate) is written by the stdlib."""
    return json_bytes(value, default=str, option=_ORJSON_OPTIONS).decode()


def run_sources(pulled: list[SourceRecord], cases: Iterable[CaseResult]) -> list[dict[str, Any]]:
    """What the run read, for the reports: each pull source (window, traces, error), then each other source its
    cases name (a file), with how many cases came from it, in first-seen order."""
    out: list[dict[str, Any]] = [
        {"uri": s.uri, "kind": "pull", "window_start": utc_text(s.start), "window_end": utc_text(s.end), "traces": s.traces,
         "error": s.error} for s in pulled]
    files: dict[str, int] = {}
    known = {s.uri for s in pulled}
    for case in cases:
        for source in case.sources:
            if source not in known:
                files[source] = files.get(source, 0) + 1
    out += [{"uri": uri, "kind": "file", "cases": n} for uri, n in files.items()]
    return out


def report_context_values(record: RunRecord, run: RunResult, pulled: list[SourceRecord]) -> dict[str, Any]:
    """The ``ReportContext`` keywords of a stored run's report (``runs show``, the API's run document): why it
    is incomplete, its human labels' disagreements (None without labels) and what it read::

        context = ReportContext(**report_context_values(store.get_run(r), store.load_run(r), store.sources(r)))
    """
    from ..results.labels import disagreements

    differ = disagreements(run.cases) if any(c.labels for c in run.cases) else None
    return {"incomplete": incomplete_reason(record, run), "disagreements": differ,
            "sources": run_sources(pulled, run.cases)}


def utc_text(moment: datetime) -> str:
    """``2026-11-27T10:00:00Z``: a moment as the store and ``runs show`` print it."""
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
