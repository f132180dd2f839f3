"""The pipeline: load → convert → group → match → evaluate → aggregate. ``agentevals run`` and the Python
API both call ``run_evaluation``, so they cannot disagree.

Every (case, evaluator) pair runs under its own deadline; a failure becomes that pair's ERROR row with a
one-line cause and never affects the other rows. Unreadable files become ``input_errors`` and the other
files are still evaluated.
"""

from __future__ import annotations

import asyncio
import logging
import time
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, Union

from .__about__ import __version__
from .config import LoadedEvaluator
from .consumers import RunConsumer, emit
from .errors import AgentevalsError, InputFileError
from .evalsets import EvalCase, EvalSet, load_eval_set, match_case
from .evalsets.matching import normalize_text
from .evaluators.base import BaseEvaluator, EvalContext
from .options import RunOptions
from .results import CaseResult, InputError, MetricResult, RunResult, SpanRef, Status, verdict_for
from .traces.convert import convert_trace
from .traces.convert._common import aggregate_metrics
from .traces.model import ConvertedTrace, Trace
from .traces.readers import LogEvents, attach_log_events, is_logs_file, read_traces

__all__ = ["Case", "group_traces", "load_traces", "run_evaluation"]

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
    read_errors: dict[int, InputError] = {}
    log_events: LogEvents = {}
    early: dict[int, list[Trace]] = {}  # traces of a logs file (JSON lines can mix both), converted in place
    for index in sorted(logs_files):
        try:
            early[index] = list(read_traces(inputs[index], format=trace_format, log_events=log_events))
        except InputFileError as exc:
            read_errors[index] = InputError(source=str(inputs[index]), error=str(exc))
    done: dict[int, tuple[list[ConvertedTrace], list[InputError]]] = {}  # per input: traces, conversion errors
    in_memory: list[int] = []  # ``Trace`` inputs: converted once every logs file has been read
    late_logs: set[int] = set()
    for index, item in enumerate(inputs):
        out: list[ConvertedTrace] = []
        errors: list[InputError] = []
        if index in logs_files:
            for trace in early.get(index, ()):
                _convert(trace, log_events, keep_spans, out, errors)
        elif isinstance(item, ConvertedTrace):
            out.append(item)
        elif isinstance(item, Trace):
            in_memory.append(index)
            continue
        else:
            known = sum(map(len, log_events.values()))
            try:
                for trace in read_traces(item, format=trace_format, log_events=log_events):
                    _convert(trace, log_events, keep_spans, out, errors)
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
        _convert(inputs[index], log_events, keep_spans, *done[index])
    order = sorted(done)
    return ([t for i in order for t in done[i][0]],
            [read_errors[i] for i in sorted(read_errors)] + [e for i in order for e in done[i][1]])


def _convert(trace: Trace, log_events: LogEvents, keep_spans: bool, out: list[ConvertedTrace],
             errors: list[InputError]) -> None:
    if log_events:  # OTLP log exports given beside the traces carry GenAI message content
        attach_log_events(trace, log_events)
    try:
        item = convert_trace(trace)
    except Exception as exc:
        log.debug("converting trace %s of %s failed", trace.trace_id, trace.source, exc_info=True)
        errors.append(InputError(source=trace.source, error=(
            f"{trace.source}: trace {trace.trace_id} could not be converted: "
            f"{type(exc).__name__}: {_one_line(exc)}")))
        return
    if not keep_spans:
        item.trace = None
    out.append(item)


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
) -> RunResult:
    """Evaluate traces with evaluators (in the given order) against an optional eval set.

    Each case's result goes to ``consumers`` as soon as it is complete (see ``agentevals.consumers``).
    """
    options = options or RunOptions()
    if isinstance(traces, (str, Path, Trace, ConvertedTrace)):  # one input, not an iterable of characters
        traces = [traces]
    run = RunResult(agentevals_version=__version__)
    run.notes.extend(options.notes)  # load-time notes (e.g. a config path found relative to the working directory)
    evs = [e.evaluator if isinstance(e, LoadedEvaluator) else e for e in evaluators]
    for ev in evs:
        ev.options = options
    if isinstance(eval_set, (str, Path)):
        eval_set = load_eval_set(eval_set)

    converted, run.input_errors = load_traces(
        traces, trace_format=trace_format, keep_spans=any(ev.needs_spans for ev in evs))
    cases = group_traces(converted, options.group_by)
    for case in cases:
        _match(case, eval_set, only_trace=len(cases) == 1 or options.independent_cases)
    if not evs:
        run.notes.append("no evaluators configured (use -m METRIC or -c eval_config.yaml)")
    if not converted and not run.input_errors:
        run.notes.append("no traces were given")

    semaphore = asyncio.Semaphore(max(1, options.concurrency))
    results: list[CaseResult] = []
    emit(consumers, "run_started", run)
    try:
        for case in cases:
            result = await _evaluate_case(case, evs, options, semaphore)
            results.append(result)
            emit(consumers, "case_finished", len(results) - 1, result)
            if result.evaluation_status == "evaluation_failed" and options.fail_on_evaluation_error:
                failed = next(m for m in result.metrics if m.status == Status.ERROR)
                run.aborted = (f"fail_on_evaluation_error: evaluator '{failed.name}' failed on {case.case_id}: "
                               f"{failed.error}; {len(cases) - len(results)} case(s) not evaluated")
                break
    finally:
        run.cases = results
        for ev in evs:
            try:
                await ev.aclose()
            except Exception:
                log.debug("closing %s failed", ev.display_name, exc_info=True)

    if eval_set is None and any(r.status == Status.NOT_EVALUATED and "eval case" in (r.reason or "")
                                for c in run.cases for r in c.metrics):
        run.notes.append("no eval set given (-e/--eval-set): metrics that compare against golden cases were not evaluated")
    elif eval_set is not None and run.cases and all(c.eval_id is None for c in run.cases):
        run.notes.append(f"no trace matched any eval case in {eval_set.source or eval_set.eval_set_id}")
    if run.cases and not any(r.status in (Status.PASSED, Status.FAILED, Status.INFORMATIONAL)
                             for c in run.cases for r in c.metrics):
        run.notes.append("nothing was evaluated: every result is NOT_EVALUATED or ERROR")
    from .repetitions import summarize_repetitions

    run.repetitions = summarize_repetitions(run.cases, k_values=options.pass_at_k, repeat_key=options.repeat_key)
    emit(consumers, "run_finished", run)
    return run


def _match(case: Case, eval_set: Optional[EvalSet], *, only_trace: bool) -> None:
    if eval_set is None:
        case.match_reason = "no eval set given (-e/--eval-set)"
        return
    case.eval_case, case.match_reason = match_case(eval_set, case.invocations, eval_id=case.eval_id_hint,
                                                   only_trace=only_trace)


async def _evaluate_case(
    case: Case, evaluators: Sequence[BaseEvaluator], options: RunOptions, semaphore: asyncio.Semaphore
) -> CaseResult:
    first = case.traces[0] if case.traces else None
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
    ctx = EvalContext(
        case_id=case.case_id,
        invocations=invocations,
        expected_invocations=case.eval_case.conversation if case.eval_case else None,
        eval_case=case.eval_case,
        traces=case.traces,
        options=options,
        performance_metrics=result.performance_metrics,
        match_reason=case.match_reason,
    )
    if first is not None and not invocations:
        result.metrics = [
            MetricResult.not_evaluated(ev.display_name, f"no agent turns in the trace: {'; '.join(first.warnings) or 'nothing recognised'}",
                                       type=ev.name)
            for ev in evaluators
        ]
        return result
    tasks = [asyncio.create_task(_run_one(ev, ctx, semaphore)) for ev in evaluators]
    try:
        outcomes = await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    for metrics, _ in outcomes:
        result.metrics.extend(metrics)
    result.repeat_group = _repeat_group(case, options.repeat_key)
    if any(m.status == Status.ERROR for m in result.metrics):
        result.evaluation_status = "evaluation_failed"
    from .scoring import case_score

    result.score, result.verdict = case_score(result.metrics)
    return result


async def _run_one(
    ev: BaseEvaluator, ctx: EvalContext, semaphore: asyncio.Semaphore
) -> tuple[list[MetricResult], Optional[BaseException]]:
    """Run one evaluator on one case under its deadline; never raises (except cancellation)."""
    timeout = ev.timeout or DEFAULT_TIMEOUT
    start = time.monotonic()
    error: Optional[BaseException] = None
    async with semaphore:
        try:
            # A small grace period lets an evaluator that enforces its own deadline report it first.
            outcome = await asyncio.wait_for(ev.evaluate(ctx), timeout + 2.0)
            metrics = outcome if isinstance(outcome, list) else [outcome]
        except asyncio.TimeoutError as exc:
            error = exc
            metrics = [MetricResult.errored(ev.display_name, f"timed out after {timeout:g}s", type=ev.name)]
        except AgentevalsError as exc:
            error = exc
            metrics = [MetricResult.errored(ev.display_name, _one_line(exc), type=ev.name)]
        except Exception as exc:
            error = exc
            log.debug("evaluator %s raised", ev.display_name, exc_info=True)
            metrics = [MetricResult.errored(ev.display_name, f"{type(exc).__name__}: {_one_line(exc)}", type=ev.name,
                                            details={"traceback": traceback.format_exc(limit=5)})]
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


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return " | ".join(line.strip() for line in text.splitlines() if line.strip())


def _case_metrics(traces: list[ConvertedTrace]) -> Optional[dict]:
    """A case's figures: its trace's own, or for a conversation, recomputed from every trace's raw
    measurements (a trace given without them, e.g. built in memory, contributes its figures only alone)."""
    with_figures = [t for t in traces if t.performance_metrics]
    if len(with_figures) <= 1:
        return with_figures[0].performance_metrics if with_figures else None
    measures = [t.measure for t in with_figures if t.measure is not None]
    return aggregate_metrics(measures) if measures else None
