"""Evaluate complete sessions with the same engine as ``run``, on a worker thread of its own.

The receivers' event loop only decodes and buffers; conversion and evaluation (CPU, evaluator
processes) run here, so the server keeps answering while sessions are evaluated. Each batch of ready
sessions is converted (``trace_sources.load_traces``), matched to an eval set, and evaluated by
``engine.run_evaluation`` with ``group_by="conversation"`` so that one session is one case; results go
to the session store and to the extra ``consumers`` (``--emit-otel``, the run store's live run).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import queue
import threading
import time
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from ..engine.budget import JudgeLedger
from ..engine.consumers import RunConsumer
from ..errors import ConfigError, InputFileError, first_line
from ..evalsets import EvalSet, load_eval_set, match_case
from ..results import CaseResult, InputError
from ..traces.model import ConvertedTrace
from .sessions import ReadySession, SessionAssembler
from .store import SessionRecord, SessionStore

__all__ = ["BATCH_SESSIONS", "EvalSettings", "LiveEvaluator", "load_eval_sets"]

log = logging.getLogger(__name__)

BATCH_SESSIONS = 256
"""Ready sessions evaluated together (one engine run, one run-store transaction). What a batch costs apart from
its sessions (evaluators prepared, the engine started, a commit) is then paid once per 256 sessions under a
flood; a quiet server's batches hold what is ready, often one session."""


@dataclass
class EvalSettings:
    """What live sessions are evaluated with: ``--config``/``-m`` as in ``run``, and ``--eval-sets DIR``."""

    config: Optional[str] = None
    metrics: list[str] = field(default_factory=list)
    eval_sets: dict[str, EvalSet] = field(default_factory=dict)
    judge_ledger: Optional[JudgeLedger] = None
    """The server's judge budget ledger: every batch checks ``max_calls_per_hour`` / ``budget_usd_per_day``
    against it, so budgets span batches (``engine.budget``)."""
    sample: Optional[float] = None
    """``serve --sample``: overrides the config's ``sample``."""
    filter: Optional[str] = None
    """``serve --filter``: overrides the config's ``filter``."""
    eval_sets_dir: Optional[str] = None
    """``--eval-sets DIR``: where ``eval_sets`` were read from (the UI saves golden cases there, then ``reload``)."""

    def reload(self) -> None:
        """Read ``eval_sets_dir`` again (after the UI saved a set): sessions evaluated from now on match the new
        sets, with no restart. ``ConfigError`` names a bad file; the sets loaded before stay in use then."""
        if self.eval_sets_dir:
            self.eval_sets = load_eval_sets(self.eval_sets_dir)  # one assignment: the worker sees old or new

    def prepare(self):  # -> tuple[list[LoadedEvaluator], RunOptions]
        """Fresh evaluators and options for one batch (raises ``ConfigError`` like ``run``, and for a bad filter)."""
        from ..api import prepare_run
        from ..engine.filters import parse_filter

        evaluators, options, _ = prepare_run(config=self.config, metrics=list(self.metrics), group_by="conversation")
        options.judge_ledger = self.judge_ledger
        options.sample = self.sample if self.sample is not None else options.sample
        options.filter = self.filter if self.filter is not None else options.filter
        if options.filter:
            parse_filter(options.filter, label="--filter" if self.filter is not None else "filter")
        return evaluators, options

    def choose_eval_set(self, eval_set_id: Optional[str], traces: Sequence[ConvertedTrace]) -> tuple[Optional[EvalSet], str]:
        """The eval set for a session and why: the one it names, the only one loaded, or the first that matches."""
        if eval_set_id:
            found = self.eval_sets.get(eval_set_id)
            return found, "" if found else f"eval set '{eval_set_id}' named by the session is not loaded (--eval-sets)"
        if len(self.eval_sets) == 1:
            return next(iter(self.eval_sets.values())), ""
        invocations = [inv for t in traces for inv in t.invocations]
        eval_id = next((t.eval_id for t in traces if t.eval_id), None)
        for eval_set in self.eval_sets.values():
            if match_case(eval_set, invocations, eval_id=eval_id)[0] is not None:
                return eval_set, ""
        return None, ""


def load_eval_sets(directory: str | Path) -> dict[str, EvalSet]:
    """Every ``*.json`` eval set in ``directory`` by its ``eval_set_id``; ``ConfigError`` names a bad file."""
    directory = Path(directory)
    if not directory.is_dir():
        raise ConfigError(f"--eval-sets {directory}: not a directory")
    out: dict[str, EvalSet] = {}
    for path in sorted(directory.glob("*.json")):
        try:
            eval_set = load_eval_set(path)
        except InputFileError as exc:
            raise ConfigError(f"--eval-sets: {exc}") from None
        if eval_set.eval_set_id in out:
            raise ConfigError(f"--eval-sets: {path}: eval_set_id '{eval_set.eval_set_id}' is also in "
                              f"{out[eval_set.eval_set_id].source}")
        out[eval_set.eval_set_id] = eval_set
    return out


class _Recorder(RunConsumer):
    """Writes each finished case into its session's record when the batch ends: after the consumers before
    it (the run store's live run writes the batch's sessions in ``run_finished``), so that a session the API
    says is evaluated is in the run store too."""

    def __init__(self, store: SessionStore, records: dict[str, SessionRecord]) -> None:
        self.store = store
        self.records = records
        self.finished: list[CaseResult] = []

    def case_finished(self, index: int, case: CaseResult) -> None:
        self.finished.append(case)

    def run_finished(self, run: object) -> None:
        self.mark()

    def mark(self) -> None:
        """Mark the sessions finished so far evaluated."""
        finished, self.finished = self.finished, []
        for case in finished:
            record = self.records.get(case.case_id)
            if record is None:
                continue
            record.result = case
            record.status = "evaluated"
            record.evaluated_at = time.time()
            self.store.put(record)


class LiveEvaluator:
    """Takes ready sessions from the assembler and evaluates them in batches on its own thread.

        worker = LiveEvaluator(assembler, store, settings, consumers=[emitter])
        worker.start()          # sweeps the assembler every ``tick`` seconds
        ...
        worker.stop()           # flushes what is buffered, evaluates it, and joins
    """

    def __init__(self, assembler: SessionAssembler, store: SessionStore, settings: EvalSettings, *,
                 consumers: Sequence[RunConsumer] = (), batch_size: int = BATCH_SESSIONS, tick: float = 0.1,
                 keep_converted: int = 200) -> None:
        self.assembler = assembler
        self.store = store
        self.settings = settings
        self.consumers = list(consumers)
        self.batch_size = batch_size
        self.tick = tick
        self._ready: queue.Queue[ReadySession] = queue.Queue()
        self._pulled: queue.Queue[tuple[list[ReadySession], Future[None]]] = queue.Queue()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        # Converted turns of recent conversations, so a late trace re-evaluates the whole conversation.
        self._converted: OrderedDict[str, list[ConvertedTrace]] = OrderedDict()
        self._keep_converted = keep_converted
        self.evaluated_sessions = 0
        evaluators, options = settings.prepare()  # fail at startup (exit 2) on a bad config, not per batch
        from ..engine.filters import filter_needs_spans

        self._needs_spans = any(e.evaluator.needs_spans for e in evaluators) or filter_needs_spans(options.filter)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="agentevals-live", daemon=True)
        self._thread.start()

    def running(self) -> bool:
        """Whether the evaluation thread is still at work (after ``stop``: it missed its deadline)."""
        return self._thread is not None and self._thread.is_alive()

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            stopping = self._stop.is_set()
            for session in self.assembler.sweep(flush=stopping):
                self._ready.put(session)
            try:  # a pulled batch (``submit``): evaluated as it is, then its caller is told
                pulled, future = self._pulled.get_nowait()
            except queue.Empty:
                pass
            else:
                self._evaluate_pulled(pulled, future)
                continue
            batch: list[ReadySession] = []
            while len(batch) < self.batch_size:
                try:
                    batch.append(self._ready.get_nowait())
                except queue.Empty:
                    break
            if batch:
                try:
                    _run_paused(self.evaluate(batch))
                except Exception:  # a bug must not kill the worker: the batch is marked, the next one runs
                    log.exception("live evaluation of %d session(s) failed", len(batch))
            elif stopping:
                return
            else:
                self._stop.wait(self.tick)

    async def evaluate(self, batch: Sequence[ReadySession]) -> None:
        """Convert, match and evaluate a batch of sessions; every session ends evaluated or with an error."""
        from ..engine import load_traces
        from ..engine.run import run_evaluation

        groups: dict[Optional[str], list[ConvertedTrace]] = {}
        sets: dict[Optional[str], Optional[EvalSet]] = {}
        records: dict[str, SessionRecord] = {}
        for session in batch:
            try:
                errors: list[InputError] = []
                if session.converted is not None:
                    converted = session.converted
                else:
                    converted, errors = load_traces(session.traces, keep_spans=self._needs_spans)
            except Exception as exc:  # a converter bug: this session is marked, the batch goes on
                log.debug("converting session %s failed", session.session_id, exc_info=True)
                converted, errors = [], [InputError(source=session.session_id,
                                                    error=f"{type(exc).__name__}: {first_line(exc)}")]
            finally:
                self.assembler.release(session.units)
            if session.conversation:
                converted = self._remember(session.session_id, converted)
            record = SessionRecord(
                session_id=session.session_id, trace_ids=[t.trace_id for t in converted],
                span_count=sum(len(t.spans) for t in session.traces) or sum(
                    len(t.trace.spans) for t in converted if t.trace is not None), eval_set_id=session.eval_set_id,
                invocations=[inv.model_dump(mode="json") for t in converted for inv in t.invocations])
            session.traces = []  # the spans are converted: let them go
            records[session.session_id] = record
            if not converted:
                record.status, record.error = "error", "; ".join(e.error for e in errors) or "no spans"
                self.store.put(record)
                continue
            for trace in converted:  # one session is one case
                trace.session_id = session.session_id
            eval_set, problem = self.settings.choose_eval_set(session.eval_set_id, converted)
            if problem:
                record.error = problem
            record.eval_set_id = eval_set.eval_set_id if eval_set else None
            key = eval_set.eval_set_id if eval_set else None
            sets[key] = eval_set
            groups.setdefault(key, []).extend(converted)
            self.store.put(record)
        for key, traces in groups.items():
            # The session is marked evaluated last: once the API says so, the run store has it too.
            marker = _Recorder(self.store, records)
            try:
                evaluators, options = self.settings.prepare()
                options.independent_cases = True  # a batch of sessions, each evaluated as if alone
                await run_evaluation(traces, evaluators, eval_set=sets[key], options=options,
                                     consumers=[*self.consumers, marker])
            except Exception as exc:
                log.debug("evaluating live sessions failed", exc_info=True)
                marker.mark()  # the sessions that finished before the failure keep their results
                for record in records.values():
                    if record.status == "evaluating" and record.eval_set_id == key:
                        record.status, record.error = "error", f"{type(exc).__name__}: {first_line(exc)}"
                        self.store.put(record)
        self.evaluated_sessions += len(batch)

    def submit(self, sessions: Sequence[ReadySession]) -> Future[None]:
        """Evaluate already converted sessions (``ReadySession.converted``) on the worker's thread, as one
        batch; the future is done once every session is evaluated and recorded (``serve --pull`` then
        advances its watermark), or fails with the batch's error."""
        future: Future[None] = Future()
        if self._stop.is_set() and not self.running():
            future.set_exception(RuntimeError("the live evaluator has stopped"))
        else:
            self._pulled.put((list(sessions), future))
        return future

    def _evaluate_pulled(self, sessions: list[ReadySession], future: Future[None]) -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            if sessions:
                _run_paused(self.evaluate(sessions))
        except BaseException as exc:  # the caller keeps its watermark and reads the window again
            log.exception("live evaluation of %d pulled session(s) failed", len(sessions))
            future.set_exception(exc)
        else:
            future.set_result(None)

    def _remember(self, session_id: str, converted: list[ConvertedTrace]) -> list[ConvertedTrace]:
        known = self._converted.pop(session_id, [])
        seen = {t.trace_id for t in converted}
        merged = sorted([*(t for t in known if t.trace_id not in seen), *converted], key=lambda t: t.start_ns)
        self._converted[session_id] = merged
        while len(self._converted) > self._keep_converted:
            self._converted.popitem(last=False)
        return merged


def _run_paused(batch: Coroutine[Any, Any, None]) -> None:
    """Evaluate a batch with the cyclic garbage collector paused, as ``convert_trace`` does for one trace.

    A batch allocates many objects and frees them by reference counting when it ends; meanwhile the collector
    would walk the server's whole heap again and again (a fifth of a flood's CPU, mostly full collections).
    Paused for the batch, it catches up once after. A batch still running after ``GC_PAUSE_SECONDS`` waits on
    something (a judge, an evaluator process), not on the CPU: the collector runs again from then on, so that
    what the API allocates meanwhile is collected. Left as it is when someone else has paused it."""
    paused = gc.isenabled()
    gc.disable()
    try:
        asyncio.run(_resuming_gc(batch) if paused else batch)
    finally:
        if paused:
            gc.enable()


GC_PAUSE_SECONDS = 2.0
"""The longest a live batch keeps the cyclic garbage collector paused (``_run_paused``)."""


async def _resuming_gc(batch: Coroutine[Any, Any, None]) -> None:
    timer = asyncio.get_running_loop().call_later(GC_PAUSE_SECONDS, gc.enable)
    try:
        await batch
    finally:
        timer.cancel()
