"""``agentevals run --executor ray``: the engine's ``RunPool`` over a Ray cluster (the ``ray`` extra).

A reader actor on the cluster reads and converts the inputs through ``trace_sources.resolve`` (files it
can open, http(s) URLs it downloads) and keeps the converted traces in Ray's object store; the driver sees
only each trace's ids (``TraceRef``, a ``TraceHandle``), forms the cases as a local run does (same grouping,
same sequence numbers) and sends them out in batches of ``BATCH_CASES`` to long-lived ``EvalWorker``
actors, one per CPU of the cluster. Each actor holds its own copy of the run's evaluators for the whole
run (builtin metrics, AgentV checks, ``type: python`` and code evaluators alike, so their worker processes
live as long as the actor) and evaluates a batch with ``evaluate_cases``, the local pool's own code: same
deadlines, limits and error rows. Results go back to the driver's ``Output`` in the run's order. Batches
are sized to the run and the cluster (``batch_cases``: about four per actor), so a thousand cases on two CPUs
travel as eight batches, not hundreds. Ray is started (or joined) once per process (``connect``).

Why this module is part of the engine and not of ``agentevals.execution``: the pool forms cases, pairs
them with eval cases, applies stored results and orders output, which are the engine's business; what is
Ray-specific and engine-free (connecting, shipping evaluators and their files, ``executor: ray`` on one
evaluator) stays in ``agentevals.execution.ray_executor``, which this module uses and which imports
nothing from the engine. The pool uses only names the engine exports (``agentevals.engine``'s modules'
``__all__``).

Stored results (the run store's cache, ``--resume``, ``--rerun-failed``: ``RayPool.reuse``) are looked up
on the driver before a case is sent, with the case's traces fetched from the object store and matched
as the worker will: a case whose every result is stored is assembled on the driver, the others travel
with their stored rows, which the worker uses instead of running those evaluators.

Faults: a batch whose actor died (a killed worker process, a lost node) is sent again, up to
``MAX_ATTEMPTS`` times, to the restarted actor; the driver accepts each case once, so no row is
duplicated, and a batch that cannot be run becomes ERROR rows naming the cause, so no row is dropped.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import os
import secrets
import shutil
from collections import deque
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Optional, Union

from ..errors import AgentevalsError, EvaluatorFailure, first_line
from ..evalsets import EvalSet
from ..evaluators.base import BaseEvaluator
from ..execution.ray_executor import (
    CLOSE_TIMEOUT,
    MAX_ATTEMPTS,
    NAMESPACE,
    connect,
    idle_key,
    keep_idle,
    require,
    ship_evaluators,
    take_idle,
    unpack_bundle,
)
from ..results import CaseResult, InputError, MetricResult
from ..trace_sources import ReadContext, TraceInput, resolve
from ..traces.model import ConvertedTrace
from .admission import skip_kind
from .consumers import ResultReuse
from .evaluate import pair_with_eval_case
from .grouping import Case, Stored
from .options import RunOptions
from .output import Output
from .pool import GivenResults, LocalPool, evaluate_cases

__all__ = ["BATCH_CASES", "MAX_ATTEMPTS", "MAX_BATCH", "EvalWorker", "RayExecutor", "RayPool", "TraceReader",
           "TraceRef", "batch_cases"]

log = logging.getLogger("agentevals.execution.ray_executor")  # the name -vv users filter on, as before the move

BATCH_CASES = 32
"""Cases per batch until the run's size is known (the first chunk of the input read). A round trip to an actor
costs ~1 ms (0.5–0.7 ms pipelined; tools/bench/ray_bench.py) and the cheapest case (one builtin metric) ~5 ms."""
MIN_BATCH = 4
"""Cases sent at once to an actor that has nothing to do (the start of a run, a large cluster), and the
smallest batch ``batch_cases`` gives."""
MAX_BATCH = 256
"""The largest batch: a lost worker re-runs at most this many cases, and results come back steadily."""
BATCHES_PER_ACTOR = 4
"""Batches each actor gets over a run (``batch_cases``): enough to even out the actors' ends of the run."""


def batch_cases(cases: int, actors: int) -> int:
    """Cases per batch for a run of about ``cases`` cases on ``actors`` actors (one per CPU of the cluster):
    ``ceil(cases / (BATCHES_PER_ACTOR * actors))``, within ``MIN_BATCH``..``MAX_BATCH``.

        batch_cases(1000, 2)     # 125: eight batches, four per actor
        batch_cases(20, 2)       # 4
        batch_cases(100_000, 8)  # 256
    """
    return max(MIN_BATCH, min(MAX_BATCH, math.ceil(cases / (BATCHES_PER_ACTOR * max(1, actors)))))
IN_FLIGHT = 2
"""Batches sent to one actor at a time: the next is there when the current one finishes."""
READ_CHUNK = 64
"""Converted traces the reader puts in the object store as one object."""
REVIVE_TIMEOUT = 120.0
"""Seconds a lost actor gets to come back before the run goes on without it."""
FETCH_TIMEOUT = 60.0
"""Seconds the driver waits for a chunk of traces from the object store (to look up stored results)."""



# --- the driver's side of ``--executor ray`` -----------------------------------------------------------


@dataclass
class TraceRef:
    """What the driver knows of a trace read on the cluster: enough to form cases, and where it lives."""

    trace_id: str
    session_id: Optional[str]
    start_ns: int
    source: str
    chunk: Any
    """``ObjectRef`` of the reader's chunk (a list of ``ConvertedTrace``)."""
    index: int


_Item = tuple[int, "Case", bool, Optional["Stored"]]
"""One case of a batch: ``(seq, case, only_trace, results stored for some of its evaluators)``."""


@dataclass
class _Batch:
    items: list[_Item]
    """``(seq, case, only_trace, stored)`` as ``evaluate_cases`` takes them."""
    attempts: int = 0
    errors: list[str] = field(default_factory=list)


class RayPool:
    """The run's pool under ``--executor ray``: the engine's ``RunPool`` interface (``read``, ``room``,
    ``submit``, ``join``, ``cancel``) over batches sent to ``EvalWorker`` actors."""

    def __init__(self, evaluators: Sequence[BaseEvaluator], options: RunOptions, output: Output,
                 eval_set: Optional[EvalSet] = None) -> None:
        self.evaluators = list(evaluators)
        self.options = options
        self.output = output
        self.batch_size = BATCH_CASES
        self._ray, _ = connect(options.ray_address)  # once per process: later runs use the same instance
        shipped, staged, runtime_env, bundle = ship_evaluators(self.evaluators)
        actors = max(1, int(self._ray.cluster_resources().get("CPU", 1)))
        state = (shipped, options, eval_set, staged, bundle)  # small states travel inline with each actor
        worker = self._ray.remote(EvalWorker)
        run = secrets.token_hex(4)
        # Actors an earlier run of this process kept (a local instance it started: ``keep_idle``) take this
        # run's state with their first batch; new ones get it now.
        self._key = idle_key(self._ray, runtime_env)
        key = idle_key(self._ray, {})
        self._reader_key = None if key is None else f"{key}#reader"
        kept = take_idle(self._key, actors)
        self.actors = [*kept, *(worker.options(num_cpus=1, max_restarts=-1, max_task_retries=0,
                                               runtime_env=runtime_env or None, name=f"agentevals-eval-{run}-{i}",
                                               namespace=NAMESPACE).remote(state, run)
                                for i in range(len(kept), actors))]
        self._run = (run, [self._ray.put(state)] if kept else [None])
        """What each batch carries: the run's token and (in a list: a reference, not its value) its state, which
        an actor that serves another run, or came back from a crash with another run's, sets itself up from."""
        self._in_flight = [0] * actors
        self._down: set[int] = set()
        """Actors lost and not yet answering again (restarting): nothing is sent to them."""
        self._waiting: deque[_Batch] = deque()
        self._pending: list[_Item] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._idle = asyncio.Event()
        self._idle.set()
        self._progress = asyncio.Event()
        self._failure: Optional[BaseException] = None
        self._reader: Any = None
        self._read_all = False
        self.eval_set = eval_set
        self.reuse: Optional[ResultReuse] = None
        """Stored results that stand in for running a pair (the run store's cache, resume, rerun-failed):
        looked up here, before a case is sent; a case whose every result is stored is not sent at all."""
        self._chunks: dict[Any, list[ConvertedTrace]] = {}
        """The last few trace chunks fetched for lookups (a case's traces usually sit in the latest)."""
        self._looked_up: dict[int, Case] = {}
        """Cases in flight whose results are looked up here, with their traces, until their results
        come back (``ResultReuse.produced`` needs them)."""
        self._here: Optional[LocalPool] = None

    async def read(self, inputs: list[TraceInput], trace_format: Optional[str], *,
                   keep_spans: bool) -> AsyncIterator[tuple[Union[TraceRef, Any], float]]:
        """Traces as ``TraceRef``s (and input errors), in input order, each with the fraction of the input
        read (as ``RunPool.read``); the files are opened by the reader actor, where they live (paths relative
        to this directory, or absolute on a shared filesystem)."""
        reader_cls = self._ray.remote(TraceReader).options(num_cpus=0, max_restarts=0, namespace=NAMESPACE)
        given = self.options.read_context  # how pull sources read; the windows they read stay on the cluster
        context = None if given is None else ReadContext(since=given.since, watermarks=given.watermarks,
                                                         pinned=given.pinned)
        kept = take_idle(self._reader_key, 1)  # the reader of an earlier run of this process, if kept
        if kept:
            self._reader = kept[0]
            self._reader.begin.remote(inputs, trace_format, keep_spans, os.getcwd(), context)  # before ``next``
        else:
            self._reader = reader_cls.remote(inputs, trace_format, keep_spans, os.getcwd(), context)
        pending = self._reader.next.remote()
        traces = 0
        while True:
            try:
                index, chunks, done = await pending
            except self._ray.exceptions.RayTaskError as exc:
                raise exc.as_instanceof_cause() from None
            except self._ray.exceptions.RayError as exc:
                raise EvaluatorFailure(f"ray: the trace reader was lost: {first_line(exc)}") from None
            if not done:
                pending = self._reader.next.remote()  # read ahead while this chunk is grouped
            for entry in index:
                if len(entry) == 2:  # an input error and the fraction read
                    yield entry
                else:
                    trace_id, session_id, start_ns, source, position, fraction = entry
                    traces += 1
                    yield TraceRef(trace_id, session_id, start_ns, source, chunks[0], position), fraction
            if index and index[-1][-1] > 0:  # the run's size, from how far this chunk got into the input
                self.batch_size = batch_cases(math.ceil(traces / index[-1][-1]), len(self.actors))
            if done:
                self._read_all = True
                return

    def submit(self, seq: int, case: Case, *, only_trace: bool = False) -> None:
        if self.output.stopped_by is not None:
            return
        stored: Optional[Stored] = None
        if self.reuse is not None:
            looked_up = self._look_up(case, only_trace)
            if looked_up is not None:
                full, stored = looked_up
                if len(stored) == len(self.evaluators):  # nothing to run: the case is finished here
                    self._finish_here(seq, full, only_trace, stored)
                    return
                self._looked_up[seq] = full
        self._pending.append((seq, case, only_trace, stored or None))
        idle = not self._waiting and any(self._in_flight[i] == 0 for i in range(len(self.actors))
                                         if i not in self._down)
        if len(self._pending) >= (MIN_BATCH if idle else self.batch_size):  # idle actors get work at once
            self._queue([self._pending])
            self._pending = []

    async def room(self) -> None:
        """Wait while every actor has a batch waiting: the reader (and the cases the driver holds) stay
        a few batches ahead of the actors, whatever the input's size."""
        while len(self._waiting) >= len(self.actors) and self._failure is None and self.output.stopped_by is None:
            self._progress.clear()
            await self._progress.wait()
        if self._failure is not None:
            raise self._failure

    async def join(self) -> None:
        """Send what is left (spread over the actors), wait for every batch, raise a consumer's error."""
        if self._pending:
            size = max(1, min(self.batch_size, math.ceil(len(self._pending) / len(self.actors))))
            self._queue([self._pending[i:i + size] for i in range(0, len(self._pending), size)])
            self._pending = []
        await self._idle.wait()
        if self._failure is not None:
            raise self._failure

    async def cancel(self) -> None:
        """Stop: cancel what is in flight, let the actors stop their evaluator processes, end them."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        ray = self._ray
        ending = []
        if self._reader is not None and not (self._read_all and keep_idle(self._reader_key, [self._reader])):
            ending.append(self._reader)  # (a reader that failed or was stopped mid-read is not kept)
        try:
            closing = [actor.close.remote() for actor in self.actors]
            closed = await asyncio.wait_for(asyncio.gather(*closing, return_exceptions=True), CLOSE_TIMEOUT)
            healthy = {i for i, result in enumerate(closed) if result is None and i not in self._down}
            if keep_idle(self._key, [self.actors[i] for i in sorted(healthy)]):  # a local instance it started
                ending += [actor for i, actor in enumerate(self.actors) if i not in healthy]
            else:
                ending += self.actors
        except Exception:  # a timeout, a lost cluster: the actors are ended below all the same
            log.debug("closing the Ray actors failed", exc_info=True)
            ending += self.actors
        for actor in ending:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:
                log.debug("ending a Ray actor failed", exc_info=True)
        self.actors = []

    def _look_up(self, case: Case, only_trace: bool) -> Optional[tuple[Case, Stored]]:
        """The case with its traces (fetched from the object store) matched to its eval case, as the
        worker will, and what ``reuse`` has stored for it by evaluator index; None when nothing is to be
        looked up (a case with no agent turns, which is NOT_EVALUATED; a chunk that cannot be fetched:
        the case then runs)."""
        assert self.reuse is not None
        try:
            full = Case(case_id=case.case_id, traces=[self._trace(t) for t in case.traces])
        except self._ray.exceptions.RayError:
            log.debug("ray: fetching a case's traces for the result cache failed; it runs", exc_info=True)
            return None
        pair_with_eval_case(full, self.eval_set, only_trace=only_trace)
        if full.traces and not full.invocations:
            return None
        stored = {}
        for index, ev in enumerate(self.evaluators):
            found = self.reuse.lookup(full, ev)
            if found is not None:
                stored[index] = found
        return full, stored

    def _trace(self, ref: Union[TraceRef, ConvertedTrace]) -> ConvertedTrace:
        if not isinstance(ref, TraceRef):
            return ref
        chunk = self._chunks.get(ref.chunk)
        if chunk is None:
            chunk = self._chunks[ref.chunk] = self._ray.get(ref.chunk, timeout=FETCH_TIMEOUT)
            while len(self._chunks) > 4:
                del self._chunks[next(iter(self._chunks))]
        return chunk[ref.index]

    def _finish_here(self, seq: int, case: Case, only_trace: bool, stored: Stored) -> None:
        """A case whose every result is stored: assembled in this process, exactly as a local run does."""
        if self._here is None:
            self._here = LocalPool(self.evaluators, self.options, self.output, self.eval_set)
        self._here.reuse = GivenResults(self.evaluators, {id(case): stored}, forward=self.reuse)
        self._here.submit(seq, case, only_trace=only_trace)

    def _produced(self, seq: int, result: CaseResult) -> None:
        """Tell ``reuse`` what each evaluator of a case that ran on the cluster ended up with."""
        case = self._looked_up.pop(seq, None)
        rows = result._evaluator_rows
        if case is None or self.reuse is None or rows is None:
            return
        start = 0
        for ev, count in zip(self.evaluators, rows, strict=True):
            metrics = result.metrics[start:start + count]
            if not any(skip_kind(m) for m in metrics):  # sampled or filtered out on the cluster: not a result
                self.reuse.produced(case, ev, metrics)
            start += count

    def _queue(self, batches: list[list[_Item]]) -> None:
        self._waiting.extend(_Batch(items) for items in batches if items)
        self._pump()

    def _pump(self) -> None:
        """Send waiting batches to the least busy actors that have room."""
        while self._waiting and self.output.stopped_by is None:
            alive = [i for i in range(len(self.actors)) if i not in self._down]
            if not alive:
                break
            slot = min(alive, key=self._in_flight.__getitem__)
            if self._in_flight[slot] >= IN_FLIGHT:
                break
            batch = self._waiting.popleft()
            batch.attempts += 1
            self._in_flight[slot] += 1
            self._idle.clear()
            ref = self.actors[slot].run_batch.remote(batch.items, self._run)
            self._track(self._collect(batch, slot, ref))
        if not any(self._in_flight) and (not self._waiting or self.output.stopped_by is not None):
            self._idle.set()

    async def _collect(self, batch: _Batch, slot: int, ref: Any) -> None:
        exceptions = self._ray.exceptions
        results: Optional[list[tuple[int, CaseResult]]] = None
        try:
            results = await ref
        except exceptions.RayTaskError as exc:  # the batch itself failed: not worth re-sending
            cause = exc.cause if isinstance(getattr(exc, "cause", None), BaseException) else exc
            if isinstance(cause, exceptions.RayError):  # e.g. the reader's chunk was lost: re-send
                batch.errors.append(first_line(cause))
            else:
                batch.attempts = MAX_ATTEMPTS
                batch.errors.append(first_line(cause))
        except exceptions.RayError as exc:  # the actor (its process or node) was lost: re-send
            log.debug("a Ray batch was lost", exc_info=True)
            batch.errors.append(first_line(exc))
            if isinstance(exc, exceptions.RayActorError) and slot not in self._down:
                self._down.add(slot)
                self._track(self._revive(slot))
        self._in_flight[slot] -= 1
        try:
            if results is not None:
                for seq, result in results:
                    self._produced(seq, result)
                    self.output.finished(seq, result)
            elif batch.attempts < MAX_ATTEMPTS:
                log.warning("ray: a batch of %d case(s) was lost (%s); sending it again", len(batch.items),
                            batch.errors[-1])
                self._waiting.appendleft(batch)
            else:
                why = batch.errors[-1] if batch.errors else "unknown error"
                for seq, case, *_ in batch.items:
                    self._looked_up.pop(seq, None)  # nothing produced: the pairs run again next time
                    self.output.finished(seq, _errored_case(case, self.evaluators, batch.attempts, why))
        except BaseException as exc:  # a consumer failed: the run stops with its error
            self._failure = self._failure or exc
            self._waiting.clear()
        self._pump()
        self._progress.set()


    def _track(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _revive(self, slot: int) -> None:
        """Wait until a lost actor answers again (Ray restarts it), then use it again; one that does not
        within ``REVIVE_TIMEOUT`` stays out of the run (its batches go to the others)."""
        deadline = asyncio.get_running_loop().time() + REVIVE_TIMEOUT
        while asyncio.get_running_loop().time() < deadline:
            try:
                await asyncio.wait_for(self.actors[slot].pid.remote(), 10)
                self._down.discard(slot)
                break
            except (asyncio.TimeoutError, self._ray.exceptions.RayError):
                await asyncio.sleep(0.5)
        else:
            log.warning("ray: an evaluation actor did not come back within %gs; going on without it",
                        REVIVE_TIMEOUT)
            if len(self._down) == len(self.actors):  # nobody left: the waiting batches cannot run
                while self._waiting:
                    batch = self._waiting.popleft()
                    for seq, case, *_ in batch.items:
                        self._looked_up.pop(seq, None)
                        self.output.finished(seq, _errored_case(case, self.evaluators, batch.attempts,
                                                                "no Ray actor is left to run it"))
                self._down.clear()
        self._pump()
        self._progress.set()


def _errored_case(case: Case, evaluators: Sequence[BaseEvaluator], attempts: int, why: str) -> CaseResult:
    """The rows of a case whose batch could not be run: one ERROR per evaluator, none lost."""
    from ..results.scoring import case_score

    text = f"ray: batch failed after {attempts} attempt(s): {why}"
    result = CaseResult(case_id=case.case_id, trace_ids=[t.trace_id for t in case.traces],
                        sources=sorted({t.source for t in case.traces}),
                        trace_sources=[t.source for t in case.traces],
                        metrics=[MetricResult.errored(ev.display_name, text, type=ev.name) for ev in evaluators],
                        evaluation_status="evaluation_failed")
    result.score, result.verdict = case_score(result.metrics)
    return result


# --- what runs on the cluster --------------------------------------------------------------------------


class TraceReader:
    """Reads and converts the run's inputs on the cluster through ``trace_sources.resolve`` (the local
    reader's own path: files it can open, http(s) URLs it downloads, logs files wherever they are), a chunk
    at a time; the chunks stay in the object store, the driver gets their references."""

    def __init__(self, inputs: list[Any], trace_format: Optional[str], keep_spans: bool, cwd: str,
                 context: Optional[ReadContext] = None) -> None:
        self._items: Any = None
        self._failed: Optional[BaseException] = None
        self.start(inputs, trace_format, keep_spans, cwd, context)

    def start(self, inputs: list[Any], trace_format: Optional[str], keep_spans: bool, cwd: str,
              context: Optional[ReadContext] = None) -> None:
        """Read these inputs from now on (a reader kept from an earlier run of the process: ``keep_idle``)."""
        if self._items is not None:
            self._items.close()  # what the last run left unread (a stopped run)
        self._items = iter(())
        if os.path.isdir(cwd):  # the driver's folder, when this node sees it: relative paths read as there
            os.chdir(cwd)
        if context is not None:
            context.trace_format, context.keep_spans, context.workers = trace_format, keep_spans, 1
        self._items = resolve(inputs, trace_format=trace_format, keep_spans=keep_spans, workers=1, context=context)

    def begin(self, *args: Any) -> Optional[BaseException]:
        """``start``, its error returned rather than raised: the driver's ``next`` raises it (what a new reader's
        constructor raising would have done)."""
        try:
            self.start(*args)
        except Exception as exc:
            self._failed = exc
        return self._failed

    def next(self) -> tuple[list[Any], list[Any], bool]:
        """The next chunk: index entries (a trace's ``(trace_id, session_id, start_ns, source, position in
        the chunk, fraction of the input read)``, or ``(InputError, fraction read)``), ``[ObjectRef]`` of the
        chunk's traces (``[]`` when none), and whether it is the last."""
        import ray

        failed, self._failed = self._failed, None
        if failed is not None:  # ``begin`` could not start this run's reading
            raise failed
        index: list[Any] = []
        chunk: list[ConvertedTrace] = []
        for item, fraction in itertools.islice(self._items, READ_CHUNK):
            if isinstance(item, InputError):
                index.append((item, fraction))
            else:
                index.append((item.trace_id, item.session_id, item.start_ns, item.source, len(chunk), fraction))
                chunk.append(item)
        return index, [ray.put(chunk)] if chunk else [], len(index) < READ_CHUNK


_State = tuple[list[Any], RunOptions, Optional[EvalSet], dict[int, str], Optional[bytes]]
"""A run's evaluators (shipped copies), options, eval set, staged folders and their bundle."""


class EvalWorker:
    """A long-lived actor: the run's evaluators, built once, evaluate batch after batch. Kept for the next run
    of the same process (``keep_idle``), it sets itself up from the state that run's batches carry."""

    def __init__(self, state: Optional[_State] = None, token: Optional[str] = None) -> None:
        self.evaluators: list[Any] = []
        self.folder: Optional[Any] = None
        self.setup_error: Optional[str] = None
        self.token: Optional[str] = None
        self._lock: Optional[asyncio.Lock] = None
        if state is not None:
            self._set_up(state, token)

    def _set_up(self, state: _State, token: Optional[str]) -> None:
        self.evaluators, self.options, self.eval_set, staged, bundle = state
        self.setup_error = None
        self.folder = unpack_bundle(bundle)
        for index, folder in staged.items():
            ev = self.evaluators[index]
            ev.base_dir = self.folder / folder  # type: ignore[operator]  # staged files come with their bundle
            try:
                ev.check()  # loads a ``type: python`` class again, from the staged file
            except AgentevalsError as exc:
                self.setup_error = f"evaluator '{ev.display_name}': {exc}"
        self.token = token

    async def run_batch(self, items: list[_Item], run: Optional[tuple[str, list[Any]]] = None
                        ) -> list[tuple[int, CaseResult]]:
        if run is not None and run[0] != self.token:  # another run's actor (kept, or restarted with its state)
            self._lock = self._lock or asyncio.Lock()
            async with self._lock:  # the run's first batches arrive together: one sets up
                if run[0] != self.token:
                    await self.close()
                    self._set_up(await run[1][0], run[0])
        if self.setup_error is not None:
            raise EvaluatorFailure(self.setup_error)
        return await evaluate_cases(await _resolve(items), self.evaluators, self.options, self.eval_set)

    async def close(self) -> None:
        """Stop the run's evaluators (their processes) and remove its staged files; the actor may serve another run."""
        for ev in self.evaluators:
            try:
                await ev.aclose()
            except Exception:
                log.debug("closing %s failed", ev.display_name, exc_info=True)
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
        self.evaluators, self.folder, self.token = [], None, None

    def pid(self) -> int:
        """This actor's process id (what a test kills to lose a worker)."""
        return os.getpid()


async def _resolve(items: list[_Item]) -> list[_Item]:
    """Replace each case's ``TraceRef``s by the converted traces, fetching each chunk once."""
    refs = list({t.chunk: None for _, case, *_ in items for t in case.traces if isinstance(t, TraceRef)})
    chunks = dict(zip(refs, await asyncio.gather(*refs), strict=True)) if refs else {}
    for _, case, *_ in items:
        case.traces = [chunks[t.chunk][t.index] if isinstance(t, TraceRef) else t for t in case.traces]
    return items



class RayExecutor:
    """``--executor ray``: the run's cases in batches across a Ray cluster (``RayPool``)."""

    name: ClassVar[str] = "ray"
    aliases: ClassVar[tuple[str, ...]] = ()
    pool: ClassVar[type[RayPool]] = RayPool

    @staticmethod
    def require() -> None:
        """``MissingDependencyError`` with the install command when the ``ray`` extra is missing."""
        require()
