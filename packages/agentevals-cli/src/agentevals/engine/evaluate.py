"""One (case × evaluator) evaluation: pair the case with its eval case, build its header, run the evaluator
under its deadline. Shared by every pool (the local one, and the Ray workers through ``evaluate_cases``)."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import types
from collections.abc import Coroutine, Generator
from dataclasses import dataclass
from typing import Any, Optional, TypeVar, cast

from ..core.limits import EVALUATOR_TIMEOUT
from ..errors import AgentevalsError, EvaluatorFailure
from ..evalsets import EvalSet, match_case
from ..evalsets.matching import normalize_text
from ..evaluators.base import BaseEvaluator, EvalContext
from ..evaluators.pricing import Prices
from ..evaluators.usage import UsageMeter, metering
from ..execution.deadline import Deadline, set_current
from ..results import CaseResult, MetricResult, SpanRef, Status, verdict_for
from ..results._transcript import transcript
from ..traces._collect import one_line
from ..traces.convert._common import aggregate_metrics
from ..traces.model import ConvertedTrace
from .admission import begin_evaluation, end_evaluation, skipped_metric
from .budget import usage_details
from .grouping import Case
from .options import RunOptions

__all__ = ["DEFAULT_TIMEOUT", "REPETITION_MARK", "Job", "case_header", "case_metrics", "pair_with_eval_case", "repeat_group",
           "run_one"]

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_TIMEOUT = EVALUATOR_TIMEOUT
"""Deadline for evaluators that declare none (builtin metrics, in-process evaluators): ``limits``' one value."""


def pair_with_eval_case(case: Case, eval_set: Optional[EvalSet], *, only_trace: bool) -> None:
    """Set ``case.eval_case`` and ``case.match_reason`` (``only_trace``: the case is the run's only one)."""
    if eval_set is None:
        case.match_reason = "no eval set given (-e/--eval-set)"
        return
    case.eval_case, case.match_reason = match_case(eval_set, case.invocations, eval_id=case.eval_id_hint,
                                                   only_trace=only_trace)


def case_header(case: Case) -> CaseResult:
    """A case's result before any evaluator ran: what it is, where it came from, its figures."""
    invocations = case.invocations
    responses = {span: rid for t in case.traces for span, rid in getattr(t, "response_ids", {}).items()}
    result = CaseResult(
        case_id=case.case_id,
        trace_ids=[t.trace_id for t in case.traces],
        sources=sorted({t.source for t in case.traces}),
        trace_sources=[t.source for t in case.traces],
        eval_id=case.eval_case.eval_id if case.eval_case else None,
        provenance=case.eval_case.provenance if case.eval_case else None,
        match_reason=case.match_reason,
        invocation_count=len(invocations),
        user_contents=[inv.user_content for inv in invocations],
        invocation_spans=[SpanRef(trace_id=inv.trace_id, span_id=inv.span_id, response_id=responses.get(inv.span_id))
                          if inv.trace_id and inv.span_id else None for inv in invocations],
        performance_metrics=case_metrics(case.traces),
        warnings=[w for t in case.traces for w in t.warnings],
    )
    result._transcript = transcript(invocations, case.eval_case.conversation if case.eval_case else None)
    if case.eval_case is not None:  # labels that travel with the golden set: the matched case's human verdicts
        result.labels, problems = case.eval_case.human_labels()
        result.warnings += problems
    return result


@dataclass
class Job:
    """One case in flight: its evaluators' outcomes fill ``metrics`` in config order."""

    seq: int
    result: CaseResult
    ctx: Optional[EvalContext]
    metrics: list[list[MetricResult]]
    remaining: int
    case: Optional[Case] = None
    """Kept until the case finishes, for the reuse hook (``ResultReuse.produced``)."""


async def run_one(ev: BaseEvaluator, ctx: EvalContext) -> tuple[list[MetricResult], Optional[BaseException]]:
    """Run one evaluator on one case under its deadline; never raises (except cancellation)."""
    admissions = ctx.options.admissions
    key = f"{ctx.case_id}#{id(ctx):x}"  # one case's context: its id alone may repeat in a run (repetitions)
    skip = begin_evaluation(admissions, key, ev) if admissions else None
    if skip is not None:  # e.g. a judge budget spent while the pair waited in the queue
        return [skipped_metric(ev, skip)], None
    timeout = ev.timeout or DEFAULT_TIMEOUT
    start = time.monotonic()
    error: Optional[BaseException] = None
    usage: Optional[dict[str, Any]] = None
    try:
        # A small grace period lets an evaluator that enforces its own deadline report it first.
        with metering() as meter:  # the judge calls' tokens (evaluators.usage), whatever the outcome
            try:
                outcome = await eager_wait_for(ev.evaluate(ctx), timeout + 2.0)
            finally:
                usage = _priced(meter, ctx.options)
                if admissions:
                    end_evaluation(admissions, key, ev, usage)
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
    if usage is not None and metrics:  # once per evaluation: on its first row
        metrics[0].details = {**(metrics[0].details or {}), "judge_usage": usage}
    return metrics, error


async def eager_wait_for(coro: Coroutine[Any, Any, T], timeout: float) -> T:
    """``asyncio.wait_for(coro, timeout)``, with the coroutine's first step run at once: one that finishes
    without waiting for anything (a builtin metric's computation) needs no task and no timer (~20 µs each,
    per evaluation). A deadline can only fire at an ``await`` anyway: the rest of one that does wait runs
    as a task under the deadline, from where its first step left off. The whole of it runs in one copy of the
    caller's context, as in a task of its own (a context variable set in one step is reset in another)."""
    context = contextvars.copy_context()
    # The limit is a Deadline current in that context, so the evaluator's own deadline, made current within
    # it, pauses it too while a set-up runs (a venv, Ray actors) under the set-up deadline: that set-up
    # depends on the machine's load, not on the evaluator, and must not turn into "timed out".
    guard = Deadline(timeout)
    context.run(set_current, guard)
    try:
        pending = context.run(coro.send, None)
    except StopIteration as done:
        return cast(T, done.value)
    except BaseException:
        coro.close()
        raise
    task = asyncio.ensure_future(_finish(coro, pending, context))
    try:
        return await guard.wait(task)
    except EvaluatorFailure as exc:
        if task.cancelled() or task.exception() is not exc:  # the guard's deadline passed, not the evaluation's
            raise asyncio.TimeoutError from None
        raise


async def _finish(coro: Coroutine[Any, Any, T], pending: Any, context: contextvars.Context) -> T:
    return await _resumed(coro, pending, context)  # a coroutine (a task cannot wrap a generator on 3.12+)


@types.coroutine
def _resumed(coro: Coroutine[Any, Any, T], pending: Any, context: contextvars.Context) -> Generator[Any, Any, T]:
    """The rest of ``coro``, whose first step yielded ``pending`` (what ``yield from coro`` would do next), each
    step in ``context``, where the first one ran."""
    while True:
        try:
            sent = yield pending
        except GeneratorExit:
            coro.close()
            raise
        except BaseException as exc:  # cancelled, or the future it waited for failed
            try:
                pending = context.run(coro.throw, exc)
            except StopIteration as done:
                return cast(T, done.value)
        else:
            try:
                pending = context.run(coro.send, sent)
            except StopIteration as done:
                return cast(T, done.value)


def _priced(meter: UsageMeter, options: RunOptions) -> Optional[dict[str, Any]]:
    if not meter.by_model:
        return None
    try:
        prices = Prices(options.judge_prices)
    except ValueError:  # checked by the config loader; a bad table from the Python API prices nothing
        log.debug("judge_prices ignored", exc_info=True)
        prices = Prices()
    return usage_details(meter, prices)


REPETITION_MARK = "agentevals.repeat_index"
"""The trace attribute (on a root span or the resource) that makes a case a repetition of its task
without ``--repeat-key``/``--pass-at-k``: an agent run several times on one task sets it to the run's
number (MASEval's ``repeat_idx``)."""


def repeat_group(case: Case, repeat_key: Optional[str], *, asked: bool = True) -> Optional[str]:
    """Which task this case is a repetition of; None when it is not a repetition.

    A case is a repetition when the run asks for them (``asked``: ``--repeat-key`` or ``--pass-at-k``, or
    ``repeat_key``/``pass_at_k`` in the config) or when one of its traces carries ``REPETITION_MARK``;
    two different traces that merely match one eval case are not. The task is, by default, the matched
    eval case, else the first user message. ``repeat_key`` may be ``eval_id``, ``user_content``,
    ``session`` or the name of a trace attribute (root/resource attributes).
    """
    if not asked and not any(REPETITION_MARK in attrs for t in case.traces for attrs in (t.attributes, t.resource)):
        return None
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


def case_metrics(traces: list[ConvertedTrace]) -> Optional[dict]:
    """A case's figures: its trace's own, or for a conversation, recomputed from every trace's raw
    measurements (a trace given without them, e.g. built in memory, contributes its figures only alone)."""
    with_figures = [t for t in traces if t.performance_metrics]
    if len(with_figures) <= 1:
        return with_figures[0].performance_metrics if with_figures else None
    measures = [t.measure for t in with_figures if t.measure is not None]
    return aggregate_metrics(measures) if measures else None
