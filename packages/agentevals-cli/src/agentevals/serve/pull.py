"""``serve --pull URI --every D``: poll trace backends for new traces and score them live.

One ``SourcePoller`` per source, each on a thread of its own, so a source that is slow or down never holds
up the others or the OTLP receivers. A poll reads the window from the source's watermark (less an
``overlap``, for traces that reach the backend late) to now, leaves out the traces already evaluated
(the run store's ``scored_traces``, and the ids this process has seen), waits for a second read to
confirm a new trace is complete (``DEFAULT_SETTLE``), groups the rest into sessions
(one per conversation id, else one per trace) and hands them to the ``LiveEvaluator``. Only once they
are evaluated and recorded does the watermark move: it is stored as the window of this serve's live run
(``run_sources``), so a restart reads on from there, neither scoring a trace twice nor skipping one.

A failed poll (a ``SourceError``: unreachable, 5xx after the client's retries, a request past its
deadline) backs off: the next poll waits ``every × 2^failures``, at most ``max_backoff``; the source shows
``backing_off`` (``down`` from ``DOWN_AFTER`` failures on) with its error in ``ContinuousState.sources``
(``/api/health``), and each change of state is one log line.

    puller = Puller(["phoenix+http://127.0.0.1:6006?project=prod"], worker, state, every=30, runs=store,
                    recorder=recorder)
    puller.start()      # after the live run has begun
    ...
    puller.stop()
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any, Optional

from ..core.redact import redact
from ..errors import ConfigError, InputFileError, first_line
from ..results import InputError, Status
from ..traces.model import ConvertedTrace
from .continuous import ContinuousState, SourceStatus

if TYPE_CHECKING:
    from ..store import LiveRunRecorder, RunStore, SourceRecord
    from ..trace_sources.pull import PullSource
    from .live import LiveEvaluator

__all__ = ["DOWN_AFTER", "Puller", "SourcePoller", "check_pull_sources", "next_delay"]

log = logging.getLogger("agentevals.serve")

DOWN_AFTER = 5
"""Consecutive failed polls after which a source shows ``down`` (before: ``backing_off``)."""
DEFAULT_OVERLAP = 300.0
"""Seconds each poll reads back before the watermark (at most: never more than the time since serve
started pulling plus the first window), for traces indexed late; duplicates are left out by trace id."""
DEFAULT_SETTLE = 5.0
"""A trace is scored once two reads agree on it (the same span count) and the second read found nothing
else new or growing: a backend still ingesting shows part of a trace, and a trace id is scored only once.
(Phoenix inserts an export in transactions of 100 spans, in the order the OTLP export grouped them: by
instrumentation scope, not by trace. Under load one trace keeps a partial count for seconds while others grow.)
A poll that found new traces is followed by the next one after ``min(every, DEFAULT_SETTLE)`` seconds, to
confirm them, instead of a whole ``every``."""
MAX_HOLD = 60.0
"""Seconds a trace whose span count no longer changes is held back while other traces keep arriving; then
it is scored anyway (a backend that never falls quiet still gets its traces scored)."""
BATCH_TRACES = 500
"""Traces handed to the evaluator at a time within one poll (memory stays bounded on a large first window)."""
_SEEN = 200_000
"""Trace ids remembered in memory (besides the store) so the overlap does not evaluate them again."""


def next_delay(every: float, failures: int, max_backoff: float) -> float:
    """Seconds until the next poll: ``every`` after a success, ``every × 2^failures`` (capped) after failures."""
    if failures <= 0:
        return every
    return min(max_backoff, every * 2 ** min(failures, 30))


def check_pull_sources(uris: Sequence[str]) -> None:
    """Refuse, before serve listens, a ``--pull`` URI that is not a backend source (one ``ConfigError`` line)."""
    from ..trace_sources.pull import PullSource
    from ..trace_sources.resolve import source_for

    for uri in uris:
        try:
            source = source_for(uri)
        except ConfigError as exc:
            raise ConfigError(f"--pull {redact(uri)}: {exc}") from None
        if not isinstance(source, PullSource):
            raise ConfigError(f"--pull {redact(uri)}: not a trace backend's query URI (say e.g. "
                              "phoenix+http://HOST:6006?project=NAME; see 'agentevals sources list')")
        source.close()
    if len(set(uris)) != len(uris):
        raise ConfigError("--pull: the same source is given twice")


class SourcePoller:
    """Polls one source; ``poll()`` is one poll (what the thread repeats every ``every`` seconds)."""

    def __init__(self, uri: str, worker: LiveEvaluator, status: SourceStatus, *, every: float,
                 overlap: float = DEFAULT_OVERLAP, settle: Optional[float] = None, runs: Optional[RunStore] = None,
                 save: Callable[[], None] = lambda: None, clock: Callable[[], float] = time.time) -> None:
        from ..trace_sources.resolve import source_for

        self.uri = uri
        self.worker = worker
        self.status = status
        self.every = every
        self.overlap = overlap
        self.settle = min(every, DEFAULT_SETTLE) if settle is None else settle
        self.runs = runs
        self.save = save
        self.clock = clock
        probe = source_for(uri)
        self.key: str = probe.query.key  # type: ignore[attr-defined]
        probe.close()
        self._warned: set[str] = set()
        self.first_start: Optional[datetime] = None
        self.newest: Optional[datetime] = None
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._unsettled: dict[str, int] = {}
        """Traces read but not yet scored (new, growing, or held back while others grow), by span count."""
        self._waiting: dict[str, float] = {}
        """When each unsettled trace was first read (``clock``), for ``MAX_HOLD``."""
        self._stop = threading.Event()
        found = runs.watermark(self.key, live=True) if runs is not None else None
        if found is not None:
            status.watermark = found[0].timestamp()
            log.info("pull %s: reading on from %s (where run %s got to)", redact(uri), found[0].isoformat(), found[1])

    # ---- one poll ----------------------------------------------------------------------------------
    def poll(self) -> int:
        """Read the source's new traces, evaluate them, advance the watermark; returns the sessions
        evaluated. Raises ``InputFileError`` (``SourceError``) when the source cannot be read, and
        ``RuntimeError`` when the evaluation failed or serve is stopping: the watermark stays."""
        from ..trace_sources.base import ReadContext
        from ..trace_sources.resolve import source_for
        from ..traces.readers import ReadPosition

        source: PullSource = source_for(self.uri)  # type: ignore[assignment]
        end = datetime.fromtimestamp(self.clock(), timezone.utc)
        if self.status.watermark is not None:
            start = datetime.fromtimestamp(self.status.watermark, timezone.utc) - timedelta(seconds=self.overlap)
        else:  # never read: the window the URI names (since=/start=), else the last hour
            start = source._window(None, None)[0]
        start = min(start, end)
        keep_spans = bool(getattr(self.worker, "_needs_spans", True))
        ctx = ReadContext(keep_spans=True, pinned={source.label: (start, end)})  # spans counted, then let go
        unsettled: dict[str, int] = {}
        sessions = skipped = 0
        pending: dict[str, list[ConvertedTrace]] = {}
        held = 0
        stable: list[ConvertedTrace] = []  # read twice with the same span count: scored once this read is quiet
        begun: dict[str, float] = {}
        now = self.clock()
        try:
            for item in source.read(ctx, ReadPosition()):
                if self._stop.is_set():
                    raise RuntimeError("serve is stopping")
                if isinstance(item, InputError):  # a trace that cannot be converted: said once, not scored
                    if item.error not in self._warned and len(self._warned) < 1000:
                        self._warned.add(item.error)
                        log.warning("pull %s: %s", redact(self.uri), redact(item.error))
                    continue
                if self._evaluated(item.trace_id):  # read again by the overlap, or scored before a restart
                    skipped += 1
                    continue
                spans = len(item.trace.spans) if item.trace is not None else 0
                if item.start_ns > 0:
                    begun[item.trace_id] = item.start_ns / 1e9
                if self._unsettled.get(item.trace_id) != spans:  # new, or still growing: read it again first
                    unsettled[item.trace_id] = spans
                    continue
                if not keep_spans:
                    item.trace = None
                stable.append(item)
            # a read that found anything new or growing means the backend is still ingesting: a trace
            # unchanged meanwhile may be missing spans it has yet to insert, so it waits (MAX_HOLD at most)
            busy = bool(unsettled)
            for item in stable:
                if busy and now - self._waiting.get(item.trace_id, now) < MAX_HOLD:
                    unsettled[item.trace_id] = self._unsettled[item.trace_id]
                    continue
                pending.setdefault(item.session_id or item.trace_id, []).append(item)
                held += 1
                if held >= BATCH_TRACES:
                    sessions += self._evaluate(pending)
                    pending, held = {}, 0
            sessions += self._evaluate(pending)
        finally:
            source.close()
        oldest_unsettled = min((begun[t] for t in unsettled if t in begun), default=None)
        self._waiting = {t: self._waiting.get(t, now) for t in unsettled}
        self._unsettled = unsettled
        self.status.unsettled = len(unsettled)
        window = ctx.windows.get(source.label)
        if window is not None and window.newest is not None and (self.newest is None or window.newest > self.newest):
            self.newest = window.newest
        self.status.traces_read += window.traces - skipped - len(unsettled) if window is not None else 0
        if self.first_start is None:
            self.first_start = start
        # the confirming read must reach every unsettled trace, however far behind the overlap it began
        self.status.watermark = min(end.timestamp(), oldest_unsettled if oldest_unsettled is not None else math.inf)
        self.save()
        return sessions

    def record(self) -> Optional[SourceRecord]:
        """This source's row of the live run's ``run_sources`` (its watermark), None before a poll succeeded."""
        from ..store import SourceRecord

        if self.status.watermark is None or self.first_start is None:
            return None
        end = datetime.fromtimestamp(self.status.watermark, timezone.utc)
        return SourceRecord(uri=self.uri, key=self.key, start=min(self.first_start, end), end=end,
                            traces=self.status.traces_read, newest=self.newest)

    def _evaluated(self, trace_id: str) -> bool:
        if trace_id in self._seen:
            return True
        if self.runs is not None:
            try:
                return bool(self.runs.scored_traces([trace_id], statuses=[s.value for s in Status]))
            except Exception:  # the store went away: this process's memory still de-duplicates
                log.debug("pull: run store lookup failed", exc_info=True)
        return False

    def _evaluate(self, pending: dict[str, list[ConvertedTrace]]) -> int:
        from .sessions import ReadySession

        if not pending:
            return 0
        batch = [ReadySession(session_id=key, traces=[], units=0, converted=traces,
                              conversation=any(t.session_id for t in traces)) for key, traces in pending.items()]
        future = self.worker.submit(batch)
        while True:  # wait, but not past a stop (the watermark stays: the next start reads them again)
            try:
                future.result(timeout=0.2)
                break
            except concurrent.futures.TimeoutError:
                if self._stop.is_set():
                    raise RuntimeError("serve is stopping") from None
        for traces in pending.values():
            for trace in traces:
                self._seen[trace.trace_id] = None
        while len(self._seen) > _SEEN:
            self._seen.popitem(last=False)
        self.status.sessions_scored += len(batch)
        return len(batch)

    # ---- the thread --------------------------------------------------------------------------------
    def run(self, max_backoff: float) -> None:
        """Poll until ``stop``: every ``every`` seconds, backing off after failures."""
        shown = redact(self.uri)
        while not self._stop.is_set():
            self.status.last_poll = self.clock()
            try:
                self.poll()
            except (InputFileError, RuntimeError, OSError, ConfigError) as exc:
                if self._stop.is_set():
                    return
                self._failed(shown, redact(first_line(exc)), max_backoff)
            except Exception as exc:  # a bug in a source or converter: the same backoff, with the type
                if self._stop.is_set():
                    return
                log.debug("pull %s failed", shown, exc_info=True)
                self._failed(shown, redact(f"{type(exc).__name__}: {first_line(exc)}"), max_backoff)
            else:
                if self.status.state != "ok":
                    log.info("pull %s: ok%s", shown, f" again after {self.status.failures} failed poll(s)"
                             if self.status.failures else "")
                self.status.state, self.status.failures = "ok", 0
                self.status.last_success = self.clock()
            delay = next_delay(self.every, self.status.failures, max_backoff)
            if self._unsettled and not self.status.failures:  # confirm the new traces soon, not a whole interval on
                delay = min(delay, self.settle)
            self.status.next_poll = self.clock() + delay
            self._stop.wait(delay)

    def _failed(self, shown: str, error: str, max_backoff: float) -> None:
        self.status.failures += 1
        self.status.error = error
        state = "down" if self.status.failures >= DOWN_AFTER else "backing_off"
        if state != self.status.state:
            log.warning("pull %s: %s: %s (next poll in %.0fs)", shown, state.replace("_", " "), error,
                        next_delay(self.every, self.status.failures, max_backoff))
        self.status.state = state  # type: ignore[assignment]

    def stop(self) -> None:
        self._stop.set()


class Puller:
    """All ``--pull`` sources of one serve: their pollers, threads, and the live run's ``run_sources`` rows."""

    def __init__(self, uris: Sequence[str], worker: LiveEvaluator, state: ContinuousState, *, every: float,
                 runs: Optional[RunStore] = None, recorder: Optional[LiveRunRecorder] = None,
                 overlap: Optional[float] = None, max_backoff: Optional[float] = None) -> None:
        self.recorder = recorder
        self.runs = runs if recorder is not None else None
        self.every = every
        self.max_backoff = max_backoff if max_backoff is not None else max(every, min(10 * every, 300.0))
        self._lock = threading.Lock()
        self.pollers: list[SourcePoller] = []
        for uri in uris:
            status = state.sources.setdefault(redact(uri), SourceStatus(redact(uri)))
            self.pollers.append(SourcePoller(uri, worker, status, every=every, runs=self.runs, save=self._save,
                                             overlap=DEFAULT_OVERLAP if overlap is None else overlap))
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        log.info("pulling %d source(s) every %gs", len(self.pollers), self.every)
        for i, poller in enumerate(self.pollers):
            thread = threading.Thread(target=poller.run, args=(self.max_backoff,), name=f"agentevals-pull-{i}",
                                      daemon=True)
            thread.start()
            self._threads.append(thread)

    def started(self, on_ready: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
        """``on_ready`` that first starts the pollers (serve calls it once everything listens)."""
        def ready(addresses: dict[str, Any]) -> None:
            self.start()
            on_ready(addresses)

        return ready

    def stop(self, timeout: float = 5.0) -> None:
        for poller in self.pollers:
            poller.stop()
        deadline = time.monotonic() + timeout
        for thread in self._threads:  # a poll blocked on a slow request ends at its own deadline (daemon)
            thread.join(max(0.0, deadline - time.monotonic()))

    def _save(self) -> None:
        """Store every source's watermark as the live run's ``run_sources`` (one write replaces them all)."""
        if self.runs is None or self.recorder is None or not self.recorder.begun:
            return
        with self._lock:
            records = [r for r in (p.record() for p in self.pollers) if r is not None]
            try:
                self.runs.record_sources(self.recorder.run_id, records)
            except Exception as exc:  # the evaluation is kept; the next poll tries again
                log.warning("run store %s: pull watermarks not saved: %s", self.runs.location, first_line(exc))


def pulling(options: Any, worker: LiveEvaluator, state: ContinuousState, recorder: Optional[LiveRunRecorder]
            ) -> Optional[Puller]:
    """The ``Puller`` of ``serve --pull`` (None without ``--pull``)."""
    if not options.pull:
        return None
    return Puller(options.pull, worker, state, every=options.every,
                  runs=recorder.store if recorder is not None else None, recorder=recorder)
