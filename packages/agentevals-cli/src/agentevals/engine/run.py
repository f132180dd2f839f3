"""The pipeline, one stream: read → convert → group → evaluate → emit. ``agentevals run``, ``serve``, MCP and
the Python API all call ``run_evaluation``, so they cannot disagree.

Read from top to bottom: the run's pool (``pool_for(options.executor)``: ``LocalPool``, or the Ray pool)
reads and converts the inputs trace by trace through ``agentevals.trace_sources.resolve``; ``Grouper`` turns
traces into cases (``LoneCase`` holds the first one back under a single-case eval set); the pool runs every
(case × evaluator) pair under one bound; ``Output`` hands each finished case to the consumers in the
deterministic output order (input order, then config order), whatever the concurrency; ``Planner`` tells
them how many cases to expect.

Every (case, evaluator) pair runs under its own deadline; a failure becomes that pair's ERROR row with a
one-line cause and never affects the other rows. Unreadable files become ``input_errors`` and the other
files are still evaluated. The run's options reach evaluators through their ``EvalContext`` only: one
evaluator object may serve several runs at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Collection, Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Optional, Union, cast

from ..__about__ import __version__
from ..config import LoadedEvaluator
from ..core.secrets import resolve_credential_refs
from ..evalsets import EvalSet, load_eval_set
from ..evaluators.base import BaseEvaluator
from ..results import CaseResult, InputError, RunResult, utc_now
from ..trace_sources import TraceInput, TraceSource, is_conversion_error
from ..trace_sources.stored import StoredCases
from ..traces.model import ConvertedTrace, Trace
from .admission import admissions_for
from .consumers import ResultReuse, RunConsumer, emit
from .executors import pool_for
from .grouping import Grouper, LoneCase
from .options import RunOptions
from .output import Output
from .planning import Planner

__all__ = ["run_evaluation", "run_sync"]

log = logging.getLogger("agentevals.engine")  # one logger for the whole engine


def _filter_needs_spans(text: Optional[str]) -> bool:
    """``filters.filter_needs_spans``, importing the filter language only for a run that has a filter (start-up)."""
    if not text:
        return False
    from .filters import filter_needs_spans

    return filter_needs_spans(text)


async def run_evaluation(
    traces: Union[TraceInput, Iterable[TraceInput]],
    evaluators: Sequence[Union[LoadedEvaluator, BaseEvaluator]],
    *,
    eval_set: Union[EvalSet, str, Path, None] = None,
    options: Optional[RunOptions] = None,
    trace_format: Optional[str] = None,
    consumers: Sequence[RunConsumer] = (),
    reuse: Optional[ResultReuse] = None,
    carried: Collection[tuple[int, CaseResult]] = (),
) -> RunResult:
    """Evaluate traces with evaluators (in the given order) against an optional eval set.

    The run is one stream: inputs are read and converted trace by trace (in a background thread), grouped
    into cases, and every (case × evaluator) pair is one work item under one pool of
    ``options.concurrency`` slots, across all cases. Each case's result goes to ``consumers`` as soon as it
    and every case before it are complete (input order, then config order; see ``agentevals.engine.consumers``).
    ``reuse`` may supply stored results for a (case, evaluator) pair, which then does not run (under
    ``--executor ray`` too: the Ray pool looks them up before it sends a case). ``carried``: finished cases
    of a stored run as ``(position, case)`` in position order, whose traces the read leaves out (``--resume``,
    ``--rerun-failed``: the caller's ``ReadContext.skip_trace``); this run's cases fill the other positions.
    An input given as ``trace_sources.stored.StoredFile`` (an unchanged file, ``store._perfile``) is its stored
    cases, placed where the file's own cases would come.
    """
    options = options or RunOptions()
    if isinstance(traces, (str, Path, Trace, ConvertedTrace, TraceSource)):  # one input, not an iterable of characters
        traces = [traces]
    run = RunResult(agentevals_version=__version__, started_at=utc_now())
    run.notes.extend(options.notes)  # load-time notes (e.g. a config path found relative to the working directory)
    evs = [e.evaluator if isinstance(e, LoadedEvaluator) else e for e in evaluators]  # options reach them by EvalContext
    if isinstance(eval_set, (str, Path)):
        eval_set = load_eval_set(eval_set)
    if not evs:
        run.notes.append("no evaluators configured (use -m METRIC or -c eval_config.yaml)")

    if options.credential_refs is not None and options.credentials is None:  # once per run, before any work
        options = replace(options, credentials=await resolve_credential_refs(options.credential_refs))
    checks = admissions_for(evs, options)
    if checks != options.admissions:
        options = replace(options, admissions=checks)
    output = Output(consumers, stop_on_error=options.fail_on_evaluation_error)
    run.cases = output.emitted  # grows as cases finish: an interrupted run's report reads it (one copy of each case)
    emit(consumers, "run_started", run)
    pool = pool_for(options.executor)(evs, options, output, eval_set)
    pool.reuse = reuse
    grouper = Grouper(options.group_by)
    planner = Planner(run, consumers)
    lone = LoneCase(hold=eval_set is not None and len(eval_set.eval_cases) == 1 and not options.independent_cases,
                     independent=options.independent_cases)
    carried_count = len(carried)
    output.carry(carried)
    seen_traces = carried_count > 0
    try:
        async for item, fraction in pool.read(list(traces), trace_format, keep_spans=any(ev.needs_spans for ev in evs) or _filter_needs_spans(options.filter)):
            if isinstance(item, InputError):
                run.input_errors.append(item)
                continue
            if isinstance(item, StoredCases):  # an unchanged file's stored cases, in its place (store._perfile)
                seq = grouper.reserve(shares=item.shares)
                output.expect(seq)
                output.stored(seq, item.cases)
                carried_count += item.count
                seen_traces = seen_traces or item.count > 0
                continue
            seen_traces = True
            # A pool may hand a stand-in for the trace (RayPool's TraceRef, see TraceHandle): grouping reads
            # only the fields both have, and the pool resolves stand-ins before evaluation.
            seq, ready = grouper.add(cast(ConvertedTrace, item))
            output.expect(seq)
            held = grouper.pending()  # cases waiting for the end of the input
            planner.read(fraction, carried_count + grouper.count + held, waiting=held)
            for case_seq, case, only_trace in lone.take(ready):
                await pool.room()
                pool.submit(case_seq, case, only_trace=only_trace)
        for seq in grouper.dropped():
            output.drop(seq)
        for waiting in grouper.finish():  # lazily: a spilled trace is read back when there is room for it
            for case_seq, case, only_trace in lone.take([waiting]):
                await pool.room()
                pool.submit(case_seq, case, only_trace=only_trace)
        for case_seq, case, only_trace in lone.finish():
            await pool.room()
            pool.submit(case_seq, case, only_trace=only_trace)
        planner.exact(carried_count + grouper.count)  # every case is known now
        await pool.join()
        output.release()
    finally:
        await pool.cancel()
        for ev in evs:
            try:
                await ev.aclose()
            except Exception:
                log.debug("closing %s failed", ev.display_name, exc_info=True)
    run.cases = output.emitted.settled()  # a list, or past the spill threshold a CaseList (results.cases)
    if output.stopped_by is not None:
        stopped, failed = output.stopped_by
        run.aborted = (f"fail_on_evaluation_error: evaluator '{failed.name}' failed on {stopped.case_id}: "
                       f"{failed.error}; {carried_count + grouper.count - len(run.cases)} case(s) not evaluated")
    run.input_errors = sorted(run.input_errors, key=is_conversion_error)
    if not seen_traces and not run.input_errors:
        run.notes.append("no traces were given")
    facts = output.facts
    if eval_set is None and facts.missing_eval_case:
        run.notes.append("no eval set given (-e/--eval-set): metrics that compare against golden cases were not evaluated")
    elif eval_set is not None and run.cases and not facts.matched:
        run.notes.append(f"no trace matched any eval case in {eval_set.source or eval_set.eval_set_id}")
    if run.cases and not facts.evaluated:
        run.notes.append("nothing was evaluated: every session was sampled or filtered out (sample, filter)"
                         if facts.only_skipped else "nothing was evaluated: every result is NOT_EVALUATED or ERROR")
    if (judged := facts.usage.note()) is not None:
        run.notes.append(judged)
    run.repetitions = facts.repetitions.finish(run.cases, k_values=options.pass_at_k)
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
