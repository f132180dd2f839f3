"""The pipeline, one stream: read → convert → group → evaluate → emit. ``agentevals run`` and the Python
API both call ``run_evaluation``, so they cannot disagree.

Read from top to bottom: ``run_evaluation`` drives the stream; ``_read`` / ``iter_traces`` read and
convert inputs trace by trace (in a background thread); ``_Grouper`` turns traces into cases; ``_Pool``
runs every (case × evaluator) pair under one bound (``RunOptions.concurrency``) across all cases;
``_Output`` hands each finished case to the consumers in the deterministic output order (input order,
then config order), whatever the concurrency.

Every (case, evaluator) pair runs under its own deadline; a failure becomes that pair's ERROR row with a
one-line cause and never affects the other rows. Unreadable files become ``input_errors`` and the other
files are still evaluated.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import heapq
import logging
import os
import sys
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Optional, Union

from .__about__ import __version__
from .config import LoadedEvaluator
from .consumers import ResultReuse, RunConsumer, emit
from .errors import AgentevalsError, InputFileError
from .evalsets import EvalCase, EvalSet, load_eval_set, match_case
from .evalsets.matching import normalize_text
from .evaluators.base import BaseEvaluator, EvalContext
from .options import RunOptions
from .results import CaseResult, InputError, MetricResult, RunResult, SpanRef, Status, utc_now, verdict_for
from .results._transcript import transcript
from .traces._collect import convert_for_worker, convert_into, one_line
from .traces.convert._common import aggregate_metrics
from .traces.model import ConvertedTrace, Trace
from .traces.readers import (
    LogEvents,
    ReadPosition,
    _parallel,
    _stream,
    is_logs_file,
    read_traces,
)

__all__ = ["Case", "GivenResults", "Stored", "evaluate_cases", "group_traces", "iter_traces", "load_traces",
           "run_evaluation"]

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 300.0
"""Deadline for evaluators that declare none (builtin metrics, in-process evaluators)."""

TraceInput = Union[str, Path, Trace, ConvertedTrace]


@dataclass
class Case:
    """A unit of evaluation: one trace, or the traces of one conversation."""

    case_id: str
    traces: list[ConvertedTrace]
    eval_case: Optional[EvalCase] = None
    match_reason: Optional[str] = None
    warnings: list[str] = field(default_factory=list)

    @property
    def invocations(self) -> list:
        return [inv for t in self.traces for inv in t.invocations]

    @property
    def eval_id_hint(self) -> Optional[str]:
        return next((t.eval_id for t in self.traces if t.eval_id), None)


def load_traces(
    inputs: Iterable[TraceInput], *, trace_format: Optional[str] = None, keep_spans: bool = True
) -> tuple[list[ConvertedTrace], list[InputError]]:
    """Read and convert every input; files that cannot be read are returned as errors, not raised.

    Each trace is converted as soon as it is read (large files are streamed), and with
    ``keep_spans=False`` its raw spans are dropped (``ConvertedTrace.trace = None``): only evaluators
    with ``needs_spans`` read them. OTLP log exports (``{"resourceLogs": …}``) among the inputs are read
    first, so their records are attached to the spans before conversion. A file that fails to read
    contributes its error only, none of its traces. Errors: read errors in input order, then conversion errors.
    """
    inputs = list(inputs)
    logs_files = {i for i, item in enumerate(inputs) if isinstance(item, (str, Path)) and is_logs_file(item)}
    while True:
        outcome = _load(inputs, logs_files, trace_format, keep_spans)
        if isinstance(outcome, tuple):
            return outcome
        logs_files |= outcome  # a logs file the sniff missed: read it first and convert again


def _load(
    inputs: list[TraceInput], logs_files: set[int], trace_format: Optional[str], keep_spans: bool
) -> Union[tuple[list[ConvertedTrace], list[InputError]], set[int]]:
    """One pass of ``load_traces``; returns the indexes of unexpected logs files when a trace was converted
    before their records were known."""
    log_events: LogEvents = {}
    early, read_errors = _read_logs_first(inputs, logs_files, trace_format, log_events)
    done: dict[int, tuple[list[ConvertedTrace], list[InputError]]] = {}  # per input: traces, conversion errors
    in_memory: list[int] = []  # ``Trace`` inputs: converted once every logs file has been read
    late_logs: set[int] = set()
    for index, item in enumerate(inputs):
        out: list[ConvertedTrace] = []
        errors: list[InputError] = []
        if index in logs_files:
            for trace in early.get(index, ()):
                convert_into(trace, log_events, keep_spans, out, errors)
        elif isinstance(item, ConvertedTrace):
            out.append(item)
        elif isinstance(item, Trace):
            in_memory.append(index)
            continue
        else:
            known = sum(map(len, log_events.values()))
            try:
                for trace in read_traces(item, format=trace_format, log_events=log_events):
                    convert_into(trace, log_events, keep_spans, out, errors)
            except InputFileError as exc:
                read_errors[index] = InputError(source=str(item), error=str(exc))
                continue
            if sum(map(len, log_events.values())) != known:
                late_logs.add(index)
        done[index] = (out, errors)
    if late_logs:
        return late_logs
    for index in in_memory:
        done[index] = ([], [])
        convert_into(inputs[index], log_events, keep_spans, *done[index])
    order = sorted(done)
    return ([t for i in order for t in done[i][0]],
            [read_errors[i] for i in sorted(read_errors)] + [e for i in order for e in done[i][1]])


def _read_logs_first(inputs: Sequence[TraceInput], logs_files: set[int], trace_format: Optional[str],
                     log_events: LogEvents) -> tuple[dict[int, list[Trace]], dict[int, InputError]]:
    """Read the logs files before everything else, so that their records reach every trace converted
    after; returns the traces they hold (JSON lines can mix both) and their read errors, by input index."""
    early: dict[int, list[Trace]] = {}
    errors: dict[int, InputError] = {}
    for index in sorted(logs_files):
        try:
            early[index] = list(read_traces(inputs[index], format=trace_format, log_events=log_events))
        except InputFileError as exc:
            errors[index] = InputError(source=str(inputs[index]), error=str(exc))
    return early, errors


def group_traces(traces: Sequence[ConvertedTrace], group_by: str) -> list[Case]:
    """Cases in input order. ``conversation`` groups traces sharing a session id; ``auto`` does so only
    when some session id is shared by two or more traces; ``trace`` never groups."""
    if group_by == "auto":
        seen: dict[str, int] = {}
        for t in traces:
            if t.session_id:
                seen[t.session_id] = seen.get(t.session_id, 0) + 1
        group_by = "conversation" if any(n > 1 for n in seen.values()) else "trace"
    cases: dict[str, Case] = {}
    for t in traces:
        key = t.session_id if group_by == "conversation" and t.session_id else f"trace:{t.trace_id}:{len(cases)}"
        case_id = t.session_id if group_by == "conversation" and t.session_id else t.trace_id
        cases.setdefault(key, Case(case_id=case_id, traces=[])).traces.append(t)
    for case in cases.values():
        case.traces.sort(key=lambda t: t.start_ns)
    return list(cases.values())


async def run_evaluation(
    traces: Union[TraceInput, Iterable[TraceInput]],
    evaluators: Sequence[Union[LoadedEvaluator, BaseEvaluator]],
    *,
    eval_set: Union[EvalSet, str, Path, None] = None,
    options: Optional[RunOptions] = None,
    trace_format: Optional[str] = None,
    consumers: Sequence[RunConsumer] = (),
    reuse: Optional[ResultReuse] = None,
) -> RunResult:
    """Evaluate traces with evaluators (in the given order) against an optional eval set.

    The run is one stream: inputs are read and converted trace by trace (in a background thread), grouped
    into cases, and every (case × evaluator) pair is one work item under one pool of
    ``options.concurrency`` slots, across all cases. Each case's result goes to ``consumers`` as soon as it
    and every case before it are complete (input order, then config order; see ``agentevals.consumers``).
    ``reuse`` may supply stored results for a (case, evaluator) pair, which then does not run (under
    ``--executor ray`` too: the Ray pool looks them up before it sends a case).
    """
    options = options or RunOptions()
    if isinstance(traces, (str, Path, Trace, ConvertedTrace)):  # one input, not an iterable of characters
        traces = [traces]
    run = RunResult(agentevals_version=__version__, started_at=utc_now())
    run.notes.extend(options.notes)  # load-time notes (e.g. a config path found relative to the working directory)
    evs = [e.evaluator if isinstance(e, LoadedEvaluator) else e for e in evaluators]
    for ev in evs:
        ev.options = options
    if isinstance(eval_set, (str, Path)):
        eval_set = load_eval_set(eval_set)
    if not evs:
        run.notes.append("no evaluators configured (use -m METRIC or -c eval_config.yaml)")

    emit(consumers, "run_started", run)
    output = _Output(consumers, stop_on_error=options.fail_on_evaluation_error)
    pool = _pool_for(options.executor)(evs, options, output, eval_set)
    pool.reuse = reuse
    grouper = _Grouper(options.group_by)
    planner = _Planner(run, consumers)
    lone = _LoneCase(hold=eval_set is not None and len(eval_set.eval_cases) == 1 and not options.independent_cases,
                     independent=options.independent_cases)
    seen_traces = False
    try:
        async for item, fraction in pool.read(list(traces), trace_format, keep_spans=any(ev.needs_spans for ev in evs)):
            if isinstance(item, InputError):
                run.input_errors.append(item)
                continue
            seen_traces = True
            seq, ready = grouper.add(item)
            output.expect(seq)
            planner.read(fraction, grouper.count + grouper.pending())
            for case_seq, case, only_trace in lone.take(ready):
                await pool.room()
                pool.submit(case_seq, case, only_trace=only_trace)
        for seq in grouper.dropped():
            output.drop(seq)
        for case_seq, case, only_trace in [*lone.take(grouper.finish()), *lone.finish()]:
            await pool.room()
            pool.submit(case_seq, case, only_trace=only_trace)
        planner.exact(grouper.count)  # every case is known now
        await pool.join()
    finally:
        await pool.cancel()
        for ev in evs:
            try:
                await ev.aclose()
            except Exception:
                log.debug("closing %s failed", ev.display_name, exc_info=True)
    run.cases = output.emitted
    if output.stopped_by is not None:
        case, failed = output.stopped_by
        run.aborted = (f"fail_on_evaluation_error: evaluator '{failed.name}' failed on {case.case_id}: "
                       f"{failed.error}; {grouper.count - len(run.cases)} case(s) not evaluated")
    run.input_errors = sorted(run.input_errors, key=lambda e: e.error.startswith(f"{e.source}: trace "))
    if not seen_traces and not run.input_errors:
        run.notes.append("no traces were given")
    if eval_set is None and any(r.status == Status.NOT_EVALUATED and "eval case" in (r.reason or "")
                                for c in run.cases for r in c.metrics):
        run.notes.append("no eval set given (-e/--eval-set): metrics that compare against golden cases were not evaluated")
    elif eval_set is not None and run.cases and all(c.eval_id is None for c in run.cases):
        run.notes.append(f"no trace matched any eval case in {eval_set.source or eval_set.eval_set_id}")
    if run.cases and not any(r.status in (Status.PASSED, Status.FAILED, Status.INFORMATIONAL)
                             for c in run.cases for r in c.metrics):
        run.notes.append("nothing was evaluated: every result is NOT_EVALUATED or ERROR")
    from .results.repetitions import summarize_repetitions

    run.repetitions = summarize_repetitions(run.cases, k_values=options.pass_at_k, repeat_key=options.repeat_key)
    run.finished_at = utc_now()
    emit(consumers, "run_finished", run)
    return run


def run_sync(run: Awaitable[RunResult]) -> RunResult:
    """``asyncio.run(run)``, without the main task holding the result: Python 3.11's ``asyncio.run``
    formats the main task (and so its result, every case) once at exit."""
    holder: list[RunResult] = []

    async def main() -> None:
        holder.append(await run)

    asyncio.run(main())
    return holder[0]


def _pool_for(executor: str) -> type[_Pool]:
    """The pool of the run-level executor: ``local`` runs work in this process; another executor (e.g.
    ``ray``) gives its backend class a ``pool`` attribute that sends batches of cases elsewhere."""
    if executor == "local":
        return _Pool
    from .api import _check_executor
    from .execution.backends import EXECUTORS

    return EXECUTORS.get(_check_executor(executor)).pool  # type: ignore[attr-defined,no-any-return]


Stored = dict[int, list[MetricResult]]
"""Results that stand in for running some of a case's evaluators, by the evaluator's index in the run."""


async def evaluate_cases(cases: Sequence[Union[tuple[int, Case, bool], tuple[int, Case, bool, Optional[Stored]]]],
                         evaluators: Sequence[BaseEvaluator], options: RunOptions,
                         eval_set: Optional[EvalSet] = None) -> list[tuple[int, CaseResult]]:
    """Evaluate complete cases (``(seq, case, only_trace)``, see ``_Pool.submit``) in this process, exactly as
    ``run_evaluation`` does; return each case's result with its sequence number, in that order. What a
    worker of a remote executor runs.

    A fourth item, ``Stored``, gives results the caller's ``ResultReuse`` found for some evaluators: those
    do not run, and their rows take their place in the case (``CaseResult._evaluator_rows`` tells how
    many rows each evaluator has, for the caller's ``ResultReuse.produced``)."""
    output = _Output((), stop_on_error=False)
    pool = _Pool(evaluators, options, output, eval_set)
    ordered = sorted(cases, key=lambda item: item[0])
    given = {id(item[1]): item[3] for item in ordered if len(item) > 3 and item[3]}
    if given:
        pool.reuse = GivenResults(evaluators, given)
    for seq, *_ in ordered:
        output.expect(seq)
    try:
        for seq, case, only_trace, *_ in ordered:
            pool.submit(seq, case, only_trace=only_trace)
        await pool.join()
    finally:
        await pool.cancel()
    return [(seq, result) for (seq, *_), result in zip(ordered, output.emitted, strict=True)]


class GivenResults:
    """A ``ResultReuse`` over results looked up beforehand, by case (its ``id``) and evaluator index: what
    a remote worker applies for the driver's run store, and the driver for cases it need not send.
    ``produced`` goes to ``forward`` when given."""

    def __init__(self, evaluators: Sequence[BaseEvaluator], given: dict[int, Stored],
                 forward: Optional[ResultReuse] = None) -> None:
        self._index = {id(ev): i for i, ev in enumerate(evaluators)}
        self.given = given
        self.forward = forward

    def lookup(self, case: Case, evaluator: BaseEvaluator) -> Optional[list[MetricResult]]:
        return self.given.get(id(case), {}).get(self._index[id(evaluator)])

    def produced(self, case: Case, evaluator: BaseEvaluator, metrics: list[MetricResult]) -> None:
        if self.forward is not None:
            self.forward.produced(case, evaluator, metrics)


class _LoneCase:
    """agentevals-cli 0.11's rule: a single-case eval set pairs with the run's only case (or with every case
    when cases are independent). Whether a case is the only one is known when a second one comes or the
    input ends, so with such an eval set the first case waits until then (the others never wait)."""

    def __init__(self, *, hold: bool, independent: bool) -> None:
        self.hold = hold
        self.independent = independent
        self._first: Optional[tuple[int, Case]] = None
        self._seen = 0

    def take(self, ready: list[tuple[int, Case]]) -> list[tuple[int, Case, bool]]:
        """The cases that can start now, each with its ``only_trace`` flag."""
        out: list[tuple[int, Case, bool]] = []
        for seq, case in ready:
            self._seen += 1
            if not self.hold:
                out.append((seq, case, self.independent))
            elif self._seen == 1:
                self._first = (seq, case)
            else:
                if self._first is not None:
                    out.append((*self._first, False))
                    self._first = None
                out.append((seq, case, False))
        return out

    def finish(self) -> list[tuple[int, Case, bool]]:
        """At the end of the input: the first case, if it turned out to be the only one."""
        first, self._first = self._first, None
        return [(*first, True)] if first is not None else []


async def _read(inputs: list[TraceInput], trace_format: Optional[str], *, keep_spans: bool,
                workers: int) -> AsyncIterator[tuple[Union[ConvertedTrace, InputError], float]]:
    """``iter_traces`` in a background thread, so that evaluation runs while the input is read; each item
    comes with how far the reading had got when it was read (0 to 1, for the estimate of the run's size).

    Items come in batches through a bounded queue: the reader waits when the engine is behind.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[Union[list, BaseException, None]] = asyncio.Queue(maxsize=8)
    stop = threading.Event()

    def put(item: Union[list, BaseException, None]) -> None:
        future = asyncio.run_coroutine_threadsafe(queue.put(item), loop)
        while not stop.is_set():
            try:
                future.result(timeout=0.2)
                return
            except concurrent.futures.TimeoutError:
                continue

    def produce() -> None:
        batch: list = []
        last = time.monotonic()
        try:
            for item in _iter_positioned(inputs, trace_format=trace_format, keep_spans=keep_spans, workers=workers):
                if stop.is_set():
                    return
                batch.append(item)
                if len(batch) >= _BATCH or time.monotonic() - last > 0.05:
                    put(batch)
                    batch, last = [], time.monotonic()
            put(batch)
            put(None)
        except BaseException as exc:  # handed to the event loop, raised there
            put(exc)

    thread = threading.Thread(target=produce, name="agentevals-reader", daemon=True)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(min(switch, _SWITCH))  # the event loop gets the GIL back quickly after each I/O call
    thread.start()
    try:
        while True:
            got = await queue.get()
            if got is None:
                return
            if isinstance(got, BaseException):
                raise got
            for item in got:
                yield item
    finally:
        stop.set()
        sys.setswitchinterval(switch)
        while not queue.empty():
            queue.get_nowait()


_BATCH = 64
"""Converted traces handed from the reader thread to the engine at a time."""
_SWITCH = 0.0005
"""GIL switch interval while the reader thread runs (Python's default, 5 ms, would delay the event loop
by up to that much after every pipe write to an evaluator)."""


def iter_traces(inputs: Sequence[TraceInput], *, trace_format: Optional[str] = None, keep_spans: bool = True,
                workers: int = 1) -> Iterator[Union[ConvertedTrace, InputError]]:
    """Read and convert every input, yielding each converted trace (or an input's error) in input order.

    The streaming form of ``load_traces``, with one difference: traces are yielded as they are read, so
    OTLP log records reach only the traces read after them. Logs files that announce themselves
    (``{"resourceLogs": …`` first) are read before everything else, as in ``load_traces``; a logs file
    found only while reading still gets its own traces converted with its records. With ``workers`` > 1,
    large Jaeger files are converted by that many processes (see ``traces.readers._parallel``).
    """
    for item, _ in _iter_positioned(inputs, trace_format=trace_format, keep_spans=keep_spans, workers=workers):
        yield item


def _iter_positioned(inputs: Sequence[TraceInput], *, trace_format: Optional[str], keep_spans: bool,
                     workers: int) -> Iterator[tuple[Union[ConvertedTrace, InputError], float]]:
    """``iter_traces``, each item with how far the reading has got through all the inputs (0 to 1) when it
    was read: a file weighs its size in bytes, an in-memory trace one (see ``ReadPosition``)."""
    logs_files = {i for i, item in enumerate(inputs) if isinstance(item, (str, Path)) and is_logs_file(item)}
    weights = [_weight(item) for item in inputs]
    total = sum(weights) or 1
    log_events: LogEvents = {}
    early, failed = _read_logs_first(inputs, logs_files, trace_format, log_events)
    for error in failed.values():
        yield error, 0.0
    before = 0  # the weight of the inputs before this one
    for index, item in enumerate(inputs):
        out: list[ConvertedTrace] = []
        errors: list[InputError] = []
        weight = weights[index]
        if index in logs_files:
            for trace in early.pop(index, ()):
                convert_into(trace, log_events, keep_spans, out, errors)
        elif isinstance(item, ConvertedTrace):
            out.append(item)
        elif isinstance(item, Trace):
            convert_into(item, log_events, keep_spans, out, errors)
        else:
            position = ReadPosition()
            try:
                for converted in _iter_file(item, trace_format, log_events, keep_spans, workers, position):
                    yield converted, (before + position.fraction * weight) / total
            except InputFileError as exc:
                yield InputError(source=str(item), error=str(exc)), (before + weight) / total
            before += weight
            continue
        count = len(out) + len(errors)
        for i, done in enumerate([*out, *errors]):
            yield done, (before + weight * (i + 1) / count) / total
        before += weight


def _weight(item: TraceInput) -> int:
    """An input's share of the reading: a file's size (one byte at least: a pipe has none), else one."""
    if isinstance(item, (str, Path)):
        try:
            return max(1, os.stat(item).st_size)
        except (OSError, ValueError):
            return 1
    return 1


def _iter_file(path: Union[str, Path], trace_format: Optional[str], log_events: LogEvents,
               keep_spans: bool, workers: int, position: ReadPosition) -> Iterator[Union[ConvertedTrace, InputError]]:
    """One file's converted traces. A large Jaeger file is converted by ``workers`` processes; another
    streamed file yields trace by trace; a file read whole is converted once it has been read, so that
    log records it holds reach its own traces. ``position`` follows the reading (see ``ReadPosition``)."""
    plan = _stream.plan_stream(Path(path), trace_format)
    done = 0
    if (plan is not None and plan.format == "jaeger-json" and workers > 1 and not log_events
            and Path(path).stat().st_size >= _parallel.MIN_BYTES):
        try:
            for item in _parallel.parallel_items(Path(path), str(path), partial(convert_for_worker, keep_spans),
                                                 workers=workers, position=position):
                done += 1
                yield item
            return
        except _parallel.Fallback:
            log.debug("%s: not a plain Jaeger layout, read serially from trace %d", path, done)
    if plan is not None:
        for index, trace in enumerate(read_traces(path, format=trace_format, log_events=log_events,
                                                  position=position)):
            if index < done:
                continue
            out: list[ConvertedTrace] = []
            errors: list[InputError] = []
            convert_into(trace, log_events, keep_spans, out, errors)
            yield from out
            yield from errors
        return
    raw = list(read_traces(path, format=trace_format, log_events=log_events))
    out, errors = [], []
    for trace in raw:
        convert_into(trace, log_events, keep_spans, out, errors)
    for i, item in enumerate([*out, *errors]):
        position.fraction = (i + 1) / (len(out) + len(errors))
        yield item


class _Grouper:
    """Traces → cases, in input order. Each trace gets a sequence number; a case is known by the number
    of its first trace, which orders the output.

    A trace without a session id (or any trace with ``group_by: trace``) is a case at once. A trace with
    one waits for the end of the input under ``conversation`` and ``auto``: a later trace anywhere in the
    input may belong to the same conversation (and under ``auto`` a single shared session id groups every
    conversation). Waiting traces are converted ones: compact, their raw spans dropped unless an
    evaluator reads them.
    """

    def __init__(self, group_by: str) -> None:
        self.group_by = group_by
        self.count = 0
        """Cases formed so far."""
        self._seq = 0
        self._sessions: dict[str, list[tuple[int, ConvertedTrace]]] = {}
        self._waiting = 0
        self._shared = False
        """Some session id has two traces or more (``auto`` then groups conversations)."""

    def add(self, trace: ConvertedTrace) -> tuple[int, list[tuple[int, Case]]]:
        """The trace's sequence number and the cases it completes (itself, or none while it waits)."""
        seq, self._seq = self._seq, self._seq + 1
        if self.group_by == "trace" or not trace.session_id:
            self.count += 1
            return seq, [(seq, Case(case_id=trace.trace_id, traces=[trace]))]
        members = self._sessions.setdefault(trace.session_id, [])
        members.append((seq, trace))
        self._waiting += 1
        self._shared = self._shared or len(members) > 1
        return seq, []

    def pending(self) -> int:
        """The cases the waiting traces would make if the input ended now."""
        return len(self._sessions) if self._conversations() else self._waiting

    def dropped(self) -> list[int]:
        """At the end: numbers of waiting traces that join an earlier trace's case (no case of their own)."""
        if not self._conversations():
            return []
        return [seq for members in self._sessions.values() for seq, _ in members[1:]]

    def finish(self) -> list[tuple[int, Case]]:
        """The waiting traces as cases, once the input has ended."""
        cases = []
        if self._conversations():
            for session, members in self._sessions.items():
                traces = sorted((t for _, t in members), key=lambda t: t.start_ns)
                cases.append((members[0][0], Case(case_id=session, traces=traces)))
        else:
            cases = [(seq, Case(case_id=t.trace_id, traces=[t])) for members in self._sessions.values()
                     for seq, t in members]
        self._sessions, self._waiting = {}, 0
        self.count += len(cases)
        return sorted(cases, key=lambda item: item[0])

    def _conversations(self) -> bool:
        return self._shared if self.group_by == "auto" else self.group_by == "conversation"


class _Planner:
    """How many cases the run will have, for progress bars: estimated while the input is read, exact once
    it has been (``RunResult.planned``, ``RunConsumer.cases_planned``).

    The estimate extends the cases known so far (formed, plus those the waiting traces would make) over
    the unread input at the rate they came over the later half of what has been read. For traces without
    session ids that is ``known / fraction read``; for conversations spread through the whole input it
    levels off once no new session ids come. It costs a few operations per trace: no extra reading.
    """

    EVERY = 0.1
    """Seconds between two estimates sent to the consumers (the exact total is sent at once)."""
    FIRST = 16
    """Traces read before the first estimate, unless 5 % of the input is read (a conversation's first
    trace says nothing yet of how many traces the conversation has)."""

    def __init__(self, run: RunResult, consumers: Sequence[RunConsumer]) -> None:
        self.run = run
        self.consumers = consumers
        self._marks: list[tuple[float, int]] = [(0.0, 0)]  # (fraction read, cases known), ~10 % apart
        self._anchor = 0  # the latest mark at or before half the fraction read
        self._at = (0.0, 0)  # the last trace's (fraction read, cases known)
        self._traces = 0
        self._sent: Optional[int] = None
        self._when = 0.0

    def read(self, fraction: float, known: int) -> None:
        """A trace was read: ``fraction`` of the input is read and ``known`` cases are known.

        Readers report their position in steps (a streamed file by read buffer, a file converted in worker
        processes by batch: several traces share one value, which is where the step's last trace ends), so
        the estimate is made when the position moves, from the cases known at the end of the step before.
        """
        (last, before), self._at = self._at, (fraction, known)
        self._traces += 1
        if fraction == last or not 0.0 < last < 1.0:
            return
        marks = self._marks
        if last >= marks[-1][0] * 1.1:
            marks.append((last, before))
        while self._anchor + 1 < len(marks) and marks[self._anchor + 1][0] <= last / 2:
            self._anchor += 1
        start, then = marks[self._anchor]
        rate = (before - then) / (last - start) if last > start else 0.0
        estimate = max(known, round(before + rate * (1.0 - last)))
        if self._traces < self.FIRST and last < 0.05:
            return
        now = time.monotonic()
        if estimate != self._sent and (self._sent is None or now - self._when >= self.EVERY):
            self._when = now
            self._send(estimate, estimated=True)

    def exact(self, total: int) -> None:
        """The input has been read: ``total`` cases."""
        self._send(total, estimated=False)

    def _send(self, total: int, *, estimated: bool) -> None:
        self._sent = total
        self.run._planned, self.run._planned_estimated = total, estimated
        emit(self.consumers, "cases_planned", total, estimated)


def _match(case: Case, eval_set: Optional[EvalSet], *, only_trace: bool) -> None:
    if eval_set is None:
        case.match_reason = "no eval set given (-e/--eval-set)"
        return
    case.eval_case, case.match_reason = match_case(eval_set, case.invocations, eval_id=case.eval_id_hint,
                                                   only_trace=only_trace)


def _case_header(case: Case) -> CaseResult:
    """A case's result before any evaluator ran: what it is, where it came from, its figures."""
    invocations = case.invocations
    result = CaseResult(
        case_id=case.case_id,
        trace_ids=[t.trace_id for t in case.traces],
        sources=sorted({t.source for t in case.traces}),
        eval_id=case.eval_case.eval_id if case.eval_case else None,
        match_reason=case.match_reason,
        invocation_count=len(invocations),
        user_contents=[inv.user_content for inv in invocations],
        invocation_spans=[SpanRef(trace_id=inv.trace_id, span_id=inv.span_id) if inv.trace_id and inv.span_id
                          else None for inv in invocations],
        performance_metrics=_case_metrics(case.traces),
        warnings=[w for t in case.traces for w in t.warnings],
    )
    result._transcript = transcript(invocations, case.eval_case.conversation if case.eval_case else None)
    return result


@dataclass
class _Job:
    """One case in flight: its evaluators' outcomes fill ``metrics`` in config order."""

    seq: int
    result: CaseResult
    ctx: Optional[EvalContext]
    metrics: list[list[MetricResult]]
    remaining: int
    case: Optional[Case] = None
    """Kept until the case finishes, for the reuse hook (``ResultReuse.produced``)."""


class _Output:
    """Emits finished cases to the consumers in output order (by the sequence number of a case's first
    trace), each as soon as it and every case before it are complete."""

    def __init__(self, consumers: Sequence[RunConsumer], *, stop_on_error: bool) -> None:
        self.consumers = consumers
        self.stop_on_error = stop_on_error
        self.emitted: list[CaseResult] = []
        self.stopped_by: Optional[tuple[CaseResult, MetricResult]] = None
        """The case (and its failed metric) that stopped the run under ``fail_on_evaluation_error``."""
        self._open: list[int] = []  # heap: sequence numbers that are, or may still become, cases
        self._done: dict[int, CaseResult] = {}
        self._dropped: set[int] = set()

    def expect(self, seq: int) -> None:
        heapq.heappush(self._open, seq)

    def drop(self, seq: int) -> None:
        """``seq`` turned out to be no case of its own (it joined a conversation)."""
        self._dropped.add(seq)
        self._flush()

    def finished(self, seq: int, result: CaseResult) -> None:
        self._done[seq] = result
        self._flush()

    def _flush(self) -> None:
        while self._open and self.stopped_by is None:
            seq = self._open[0]
            if seq in self._dropped:
                heapq.heappop(self._open)
                self._dropped.discard(seq)
                continue
            result = self._done.pop(seq, None)
            if result is None:
                return
            heapq.heappop(self._open)
            self.emitted.append(result)
            emit(self.consumers, "case_finished", len(self.emitted) - 1, result)
            if self.stop_on_error and result.evaluation_status == "evaluation_failed":
                self.stopped_by = (result, next(m for m in result.metrics if m.status == Status.ERROR))


class _Pool:
    """Every (case × evaluator) pair is one work item; ``concurrency`` workers take them in output order,
    so a slow evaluation holds one slot and nothing else."""

    def __init__(self, evaluators: Sequence[BaseEvaluator], options: RunOptions, output: _Output,
                 eval_set: Optional[EvalSet] = None) -> None:
        self.evaluators = list(evaluators)
        self.options = options
        self.output = output
        self.eval_set = eval_set
        self.reuse: Optional[ResultReuse] = None
        """Stored results that stand in for running a pair (the run store's cache, resume, rerun-failed)."""
        self._queue: deque[tuple[_Job, int]] = deque()
        self._ready = asyncio.Event()
        self._idle = asyncio.Event()
        self._idle.set()
        self._jobs = 0
        self._size = max(1, options.concurrency)
        self._backlog = 4 * self._size + 64
        self._progress = asyncio.Event()
        self._workers: list[asyncio.Task[None]] = []
        self._failure: Optional[BaseException] = None

    def read(self, inputs: list[TraceInput], trace_format: Optional[str], *,
             keep_spans: bool) -> AsyncIterator[tuple[Union[ConvertedTrace, InputError], float]]:
        """The run's converted traces (and input errors), in input order, read in this process; each with
        the fraction of the input read so far (0 to 1)."""
        return _read(inputs, trace_format, keep_spans=keep_spans, workers=self.options.concurrency)

    def submit(self, seq: int, case: Case, *, only_trace: bool = False) -> None:
        """Match a complete case to its eval case (``only_trace``: it is the run's only case, see
        ``_LoneCase``) and queue its (case × evaluator) work."""
        if self.output.stopped_by is not None:
            return
        _match(case, self.eval_set, only_trace=only_trace)
        result = _case_header(case)
        invocations = case.invocations
        if case.traces and not invocations:
            why = "; ".join(case.traces[0].warnings) or "nothing recognised"
            result.metrics = [MetricResult.not_evaluated(ev.display_name, f"no agent turns in the trace: {why}",
                                                         type=ev.name) for ev in self.evaluators]
            self.output.finished(seq, result)
            return
        ctx = EvalContext(
            case_id=case.case_id,
            invocations=invocations,
            expected_invocations=case.eval_case.conversation if case.eval_case else None,
            eval_case=case.eval_case,
            traces=case.traces,
            options=self.options,
            performance_metrics=result.performance_metrics,
            match_reason=case.match_reason,
        )
        result.repeat_group = _repeat_group(case, self.options.repeat_key)
        job = _Job(seq, result, ctx, [[] for _ in self.evaluators], len(self.evaluators), case)
        todo = []
        for i, ev in enumerate(self.evaluators):
            stored = self.reuse.lookup(case, ev) if self.reuse is not None else None
            if stored is None:
                todo.append(i)
            else:
                job.metrics[i] = stored
                job.remaining -= 1
        if not todo:
            self._finish(job)
            return
        self._jobs += 1
        self._idle.clear()
        self._queue.extend((job, i) for i in todo)
        while len(self._workers) < min(self._size, len(self._queue) + len(self._workers)):
            self._workers.append(asyncio.create_task(self._work()))
        self._ready.set()

    async def _work(self) -> None:
        while self.output.stopped_by is None:
            while not self._queue:
                self._ready.clear()
                await self._ready.wait()
            job, index = self._queue.popleft()
            metrics, _ = await _run_one(self.evaluators[index], job.ctx)
            job.metrics[index] = metrics
            job.remaining -= 1
            if job.remaining == 0:
                try:
                    self._finish(job)
                except BaseException as exc:  # a consumer failed: the run stops with its error
                    self._failure = self._failure or exc
                    self._idle.set()
                    self._progress.set()
                    return
                self._jobs -= 1
                self._progress.set()
                if self._jobs == 0 or self.output.stopped_by is not None:
                    self._idle.set()

    def _finish(self, job: _Job) -> None:
        if self.reuse is not None and job.case is not None:
            for ev, metrics in zip(self.evaluators, job.metrics, strict=True):
                self.reuse.produced(job.case, ev, metrics)
        job.case = None
        result = job.result
        result.metrics = [m for metrics in job.metrics for m in metrics]
        result._evaluator_rows = [len(metrics) for metrics in job.metrics]
        job.ctx = None  # the traces are no longer needed
        if any(m.status == Status.ERROR for m in result.metrics):
            result.evaluation_status = "evaluation_failed"
        from .results.scoring import case_score

        result.score, result.verdict = case_score(result.metrics)
        self.output.finished(job.seq, result)

    async def room(self) -> None:
        """Wait while the backlog is full: cases queued or running are bounded (and with them memory),
        so a fast reader does not load the whole input ahead of slow evaluators."""
        while self._jobs >= self._backlog and self._failure is None and self.output.stopped_by is None:
            self._progress.clear()
            await self._progress.wait()
        if self._failure is not None:
            raise self._failure

    async def join(self) -> None:
        """Wait until every submitted case is finished (or the run was stopped); raise a consumer's error."""
        await self._idle.wait()
        if self._failure is not None:
            raise self._failure

    async def cancel(self) -> None:
        """Stop the workers (evaluations in flight are cancelled: their processes are killed)."""
        for task in self._workers:
            task.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []


async def _run_one(ev: BaseEvaluator, ctx: EvalContext) -> tuple[list[MetricResult], Optional[BaseException]]:
    """Run one evaluator on one case under its deadline; never raises (except cancellation)."""
    timeout = ev.timeout or DEFAULT_TIMEOUT
    start = time.monotonic()
    error: Optional[BaseException] = None
    try:
        # A small grace period lets an evaluator that enforces its own deadline report it first.
        outcome = await asyncio.wait_for(ev.evaluate(ctx), timeout + 2.0)
        metrics = outcome if isinstance(outcome, list) else [outcome]
    except asyncio.TimeoutError as exc:
        error = exc
        metrics = [MetricResult.errored(ev.display_name, f"timed out after {timeout:g}s", type=ev.name)]
    except AgentevalsError as exc:
        error = exc
        metrics = [MetricResult.errored(ev.display_name, one_line(exc), type=ev.name)]
    except Exception as exc:
        error = exc
        # The traceback is for developers (-vv); reports carry one line (they are shared, and a traceback
        # shows the machine's paths).
        log.debug("evaluator %s raised", ev.display_name, exc_info=True)
        metrics = [MetricResult.errored(ev.display_name, f"{type(exc).__name__}: {one_line(exc)}", type=ev.name)]
    elapsed = (time.monotonic() - start) * 1000
    config = ev.config
    for metric in metrics:
        metric.type = metric.type if metric.type != "builtin" or ev.name == "builtin" else ev.name
        metric.weight = config.weight
        metric.required = config.gate
        metric.duration_ms = round(elapsed, 3)
        if metric.verdict is None and metric.score is not None and metric.status in (Status.PASSED, Status.FAILED):
            metric.verdict = verdict_for(metric.score)
    return metrics, error


def _repeat_group(case: Case, repeat_key: Optional[str]) -> str:
    """Which task this case is a repetition of.

    Default: the matched eval case, else the first user message. ``repeat_key`` may be ``eval_id``,
    ``user_content``, ``session`` or the name of a trace attribute (root/resource attributes).
    """
    first_user = normalize_text(case.invocations[0].user_content if case.invocations else "")
    if repeat_key in (None, "eval_id"):
        return f"eval:{case.eval_case.eval_id}" if case.eval_case else f"input:{first_user}"
    if repeat_key == "user_content":
        return f"input:{first_user}"
    if repeat_key == "session":
        return f"session:{case.traces[0].session_id or case.case_id}"
    for t in case.traces:
        for attrs in (t.attributes, t.resource):
            if repeat_key in attrs:
                return f"{repeat_key}:{attrs[repeat_key]}"
    return f"input:{first_user}"


def _case_metrics(traces: list[ConvertedTrace]) -> Optional[dict]:
    """A case's figures: its trace's own, or for a conversation, recomputed from every trace's raw
    measurements (a trace given without them, e.g. built in memory, contributes its figures only alone)."""
    with_figures = [t for t in traces if t.performance_metrics]
    if len(with_figures) <= 1:
        return with_figures[0].performance_metrics if with_figures else None
    measures = [t.measure for t in with_figures if t.measure is not None]
    return aggregate_metrics(measures) if measures else None
