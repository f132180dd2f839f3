"""Pools run a run's work: the declared ``RunPool`` interface, and ``LocalPool``, which runs every
(case × evaluator) pair in this process under one bound.

``run_evaluation`` drives any pool the same way::

    async for item, fraction in pool.read(inputs, trace_format, keep_spans=...):   # traces in input order
        ...group into cases...
        await pool.room()                        # back-pressure: wait while the pool is full
        pool.submit(seq, case, only_trace=...)   # the pool matches, evaluates and calls output.finished
    await pool.join()                            # every submitted case finished
    await pool.cancel()                          # always, in ``finally``: stop what is still running

A pool is made by its run executor (``agentevals.engine.executors``) as
``pool(evaluators, options, output, eval_set)`` and reports each finished case to ``output`` (an
``Output``) under the case's sequence number; ``Output`` emits them in order. The Ray pool
(``agentevals.engine.ray_pool``) implements the same interface over batches sent to a cluster, and its
workers run ``evaluate_cases``, this module's own code.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Sequence
from typing import Optional, Protocol, Union, runtime_checkable

from ..evalsets import EvalSet
from ..evaluators.base import BaseEvaluator, EvalContext
from ..results import CaseResult, InputError, MetricResult, Status
from ..trace_sources import TraceInput
from ..traces._collect import PackedTrace
from ..traces.model import ConvertedTrace
from .admission import first_skip, skip_kind, skipped_metric
from .consumers import ResultReuse
from .evaluate import Job, case_header, pair_with_eval_case, repeat_group, run_one
from .grouping import Case, Stored
from .options import RunOptions
from .output import Output
from .read import read_in_background

__all__ = ["GivenResults", "LocalPool", "PoolFactory", "RunPool", "TraceHandle", "evaluate_cases"]


@runtime_checkable
class TraceHandle(Protocol):
    """What the engine needs of a trace to group it into cases: a ``ConvertedTrace``, or a pool's handle
    to a trace kept elsewhere (the Ray pool's ``TraceRef``: the trace stays in the cluster's object store)."""

    @property
    def trace_id(self) -> str: ...

    @property
    def session_id(self) -> Optional[str]: ...

    @property
    def start_ns(self) -> int: ...

    @property
    def source(self) -> str: ...


class RunPool(Protocol):
    """Where a run's (case × evaluator) work runs. Implemented by ``LocalPool`` and the Ray pool.

    Every method is called from the run's event loop, in this order: ``read`` once (iterated to the end
    while cases are submitted), ``room`` before each ``submit``, ``join`` once, ``cancel`` once (always).
    """

    reuse: Optional[ResultReuse]
    """Stored results that stand in for running a pair (the run store's cache, ``--resume``,
    ``--rerun-failed``); set by the engine before ``read``."""

    def read(self, inputs: list[TraceInput], trace_format: Optional[str], *,
             keep_spans: bool) -> AsyncIterator[tuple[Union[TraceHandle, InputError], float]]:
        """The run's traces (or an input's error) in input order, each with the fraction of the input read
        so far (0 to 1), read through ``agentevals.trace_sources.resolve`` wherever the pool reads."""
        ...

    def submit(self, seq: int, case: Case, *, only_trace: bool = False) -> None:
        """Queue a complete case (its traces are what ``read`` yielded); when it is finished, call
        ``output.finished(seq, result)``. Does nothing once ``output.stopped_by`` is set."""
        ...

    async def room(self) -> None:
        """Wait while the pool holds as much as it should (memory stays bounded); raise a consumer's error."""
        ...

    async def join(self) -> None:
        """Wait until every submitted case is finished (or the run was stopped); raise a consumer's error."""
        ...

    async def cancel(self) -> None:
        """Stop everything still running and release the pool's resources (processes, actors)."""
        ...


class PoolFactory(Protocol):
    """What a run executor gives the engine: ``pool(evaluators, options, output, eval_set)``."""

    def __call__(self, evaluators: Sequence[BaseEvaluator], options: RunOptions, output: Output,
                 eval_set: Optional[EvalSet] = None) -> RunPool: ...


class LocalPool:
    """Every (case × evaluator) pair is one work item; ``concurrency`` workers take them in output order,
    so a slow evaluation holds one slot and nothing else."""

    def __init__(self, evaluators: Sequence[BaseEvaluator], options: RunOptions, output: Output,
                 eval_set: Optional[EvalSet] = None) -> None:
        self.evaluators = list(evaluators)
        self.options = options
        self.output = output
        self.eval_set = eval_set
        self.reuse: Optional[ResultReuse] = None
        """Stored results that stand in for running a pair (the run store's cache, resume, rerun-failed)."""
        self._queue: deque[tuple[Job, int]] = deque()
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
             keep_spans: bool) -> AsyncIterator[tuple[Union[ConvertedTrace, PackedTrace, InputError], float]]:
        """The run's converted traces (and input errors), in input order, read in this process; each with
        the fraction of the input read so far (0 to 1). Reader processes hand ``PackedTrace`` items: the
        grouper unpacks them when their case is formed."""
        return read_in_background(inputs, trace_format, keep_spans=keep_spans, workers=self.options.concurrency,
                                  context=self.options.read_context, packed=True)  # run_evaluation's grouper unpacks

    def submit(self, seq: int, case: Case, *, only_trace: bool = False) -> None:
        """Match a complete case to its eval case (``only_trace``: it is the run's only case, see
        ``LoneCase``) and queue its (case × evaluator) work."""
        if self.output.stopped_by is not None:
            return
        pair_with_eval_case(case, self.eval_set, only_trace=only_trace)
        result = case_header(case)
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
        result.repeat_group = repeat_group(case, self.options.repeat_key,
                                           asked=bool(self.options.repeat_key or self.options.pass_at_k))
        job = Job(seq, result, ctx, [[] for _ in self.evaluators], len(self.evaluators), case)
        todo = []
        admissions = self.options.admissions
        for i, ev in enumerate(self.evaluators):
            skip = first_skip(admissions, case, ev) if admissions else None
            stored = [skipped_metric(ev, skip)] if skip is not None else (
                self.reuse.lookup(case, ev) if self.reuse is not None else None)
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
            if job.ctx is None:  # cleared when the job finishes, which needs this item: cannot happen
                raise RuntimeError(f"case {job.result.case_id}: evaluation queued after it finished")
            metrics, _ = await run_one(self.evaluators[index], job.ctx)
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

    def _finish(self, job: Job) -> None:
        if self.reuse is not None and job.case is not None:
            for ev, metrics in zip(self.evaluators, job.metrics, strict=True):
                if not any(skip_kind(m) for m in metrics):  # a skip is this run's choice, not a result to reuse
                    self.reuse.produced(job.case, ev, metrics)
        job.case = None
        result = job.result
        result.metrics = [m for metrics in job.metrics for m in metrics]
        result._evaluator_rows = [len(metrics) for metrics in job.metrics]
        job.ctx = None  # the traces are no longer needed
        if any(m.status == Status.ERROR for m in result.metrics):
            result.evaluation_status = "evaluation_failed"
        from ..results.scoring import case_score

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


async def evaluate_cases(cases: Sequence[Union[tuple[int, Case, bool], tuple[int, Case, bool, Optional[Stored]]]],
                         evaluators: Sequence[BaseEvaluator], options: RunOptions,
                         eval_set: Optional[EvalSet] = None) -> list[tuple[int, CaseResult]]:
    """Evaluate complete cases (``(seq, case, only_trace)``, see ``RunPool.submit``) in this process, exactly as
    ``run_evaluation`` does; return each case's result with its sequence number, in that order. What a
    worker of a remote executor runs.

    A fourth item, ``Stored``, gives results the caller's ``ResultReuse`` found for some evaluators: those
    do not run, and their rows take their place in the case (``CaseResult._evaluator_rows`` tells how
    many rows each evaluator has, for the caller's ``ResultReuse.produced``)."""
    output = Output((), stop_on_error=False)
    pool = LocalPool(evaluators, options, output, eval_set)
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
