"""Evaluation from Python. ``agentevals run`` goes through the same functions, so CLI and API agree.

Example:
    ```python
    import agentevals

    run = agentevals.evaluate(
        ["traces/helm.json"],
        eval_set="evalsets/eval_set_helm.json",
        metrics=["tool_trajectory_avg_score", "response_match_score"],
    )
    for case in run.cases:
        for metric in case.metrics:
            print(case.case_id, metric.name, metric.status.value, metric.score)
    assert run.exit_code() == 0
    ```
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Optional, Union, get_args

from .config import EvalConfig, LoadedEvaluator, build_evaluators, load_config
from .core._files import resolve_config_path
from .core.secrets import check_credential_refs
from .engine.executors import check_executor
from .engine.options import GroupBy, RunOptions, TrajectoryMatchType
from .engine.run import run_evaluation, run_sync
from .errors import ConfigError, InputFileError
from .evalsets import EvalSet, load_eval_set
from .evaluators.base import BaseEvaluator
from .results import RunResult
from .trace_sources import ReadContext, TraceInput

__all__ = ["DEFAULT_METRIC", "evaluate", "evaluate_async", "prepare_run"]

DEFAULT_METRIC = "tool_trajectory_avg_score"


def prepare_run(
    *,
    eval_set: Union[EvalSet, str, Path, None] = None,
    metrics: Sequence[str] = (),
    config: Union[EvalConfig, str, Path, None] = None,
    evaluators: Sequence[Union[BaseEvaluator, LoadedEvaluator]] = (),
    judge_model: Optional[str] = None,
    threshold: Optional[float] = None,
    trajectory_match_type: Optional[str] = None,
    group_by: str = "auto",
    strict: bool = False,
    repeat_key: Optional[str] = None,
    pass_at_k: Sequence[int] = (),
    fail_on_evaluation_error: Optional[bool] = None,
    concurrency: Optional[int] = None,
    executor: str = "local",
    ray_address: Optional[str] = None,
    write_back: Optional[bool] = None,
    sample: Optional[float] = None,
    filter: Optional[str] = None,
    credential_refs: Optional[Mapping[str, Mapping[str, Any]]] = None,
) -> tuple[list[LoadedEvaluator], RunOptions, Optional[EvalSet]]:
    """Validate everything before anything runs: config, metric names, evaluator files, eval set.

    Order of evaluators: config order, then ``metrics`` order, then ``evaluators``. With neither a
    config, metrics nor evaluators, ``tool_trajectory_avg_score`` runs. Raises ``ConfigError`` (exit 2).

    ``write_back=True`` (or ``write_back: true`` in the config; ``evaluate`` takes it too): after the run,
    each result goes back to the backend its trace came from (source URIs such as ``phoenix+http://…``;
    files are skipped), as ``run --write-back`` does; the run's ``notes`` say how many were written to each
    source, or the one line why a source could not be written.

    ``sample=0.1`` / ``filter='service == "checkout"'`` (or ``sample:`` / ``filter:`` in the config, which
    they override): evaluate a deterministic share of the sessions / only those matching; the others are
    NOT_EVALUATED rows counted as sampled or filtered out (docs/continuous.md).

    ``credential_refs={"judge": {"kind": "env", "name": "OPENAI_API_KEY"}}``: secret references, resolved once
    when the run starts (``agentevals.core.secrets``; kinds ``env`` and the ``agentevals.secret_resolvers``
    plugins); a builtin LLM-judged metric with ``credential_ref: judge`` (and ``judge_base_url``) calls its
    judge with that key. A reference that cannot be resolved makes the rows of the metrics naming it errors.
    """
    if isinstance(trajectory_match_type, str):
        trajectory_match_type = trajectory_match_type.lower()
    _check_arguments(metrics=metrics, threshold=threshold, trajectory_match_type=trajectory_match_type,
                     group_by=group_by, pass_at_k=pass_at_k, concurrency=concurrency)
    loaded = load_config(config) if isinstance(config, (str, Path)) else config
    settings = loaded.settings if loaded else None
    options = RunOptions(
        judge_model=judge_model or (settings.judge_model if settings else None),
        threshold=threshold,
        # both checked against their choices by _check_arguments above
        trajectory_match_type=trajectory_match_type or (settings.trajectory_match_type if settings else None),  # type: ignore[arg-type]
        group_by=group_by,  # type: ignore[arg-type]
        strict=strict,
        fail_on_evaluation_error=bool(fail_on_evaluation_error if fail_on_evaluation_error is not None
                                      else settings.fail_on_evaluation_error if settings else False),
        repeat_key=repeat_key or (settings.repeat_key if settings else None),
        pass_at_k=list(pass_at_k or (settings.pass_at_k if settings else [])),
        builtin_thresholds=settings.builtin_thresholds if settings else "uniform",
        trace_format=settings.trace_format if settings else None,
        output=(settings.output or settings.output_format) if settings else None,
        notes=list(loaded.notes) if loaded else [],
        write_back=bool(write_back if write_back is not None else settings.write_back if settings else False),
        sample=sample if sample is not None else settings.sample if settings else None,
        filter=filter if filter is not None else settings.filter if settings else None,
        judge_prices=dict(settings.judge_prices) if settings else {},
    )
    if credential_refs is not None:
        options.credential_refs = check_credential_refs(credential_refs, label="credential_refs")
    if sample is not None and not 0.0 < sample <= 1.0:
        raise ConfigError(f"sample={sample!r}: expected a share of sessions in (0, 1], e.g. 0.1")
    if filter is not None:
        from .engine.filters import parse_filter

        parse_filter(filter, label="filter=")
    if eval_set is None and loaded is not None and loaded.settings.eval_set:
        eval_set, note = resolve_config_path(loaded.settings.eval_set, loaded.base_dir or Path.cwd())
        if note:
            options.notes.append(f"{loaded.source or 'config'}: eval_set {note}")
    if ray_address and executor == "local":
        raise ConfigError("--ray-address goes with --executor ray (an evaluator's 'executor: ray' uses $RAY_ADDRESS)")
    options.executor, options.ray_address = check_executor(executor), ray_address
    workers = concurrency or (settings.concurrency if settings else None)
    if workers:
        options.concurrency = int(workers)
    elif executor != "local":  # one evaluation at a time per remote worker, one worker per CPU
        options.concurrency = 1
    chosen: list[LoadedEvaluator] = list(loaded.evaluators) if loaded else []
    given = loaded.settings.model_fields_set if loaded is not None else set()
    if loaded is not None and not chosen and not metrics and not evaluators and (not given or "evaluators" in given):
        # An empty file or an explicit `evaluators: []` is a mistake, not a request for the default metric
        # (a config of run settings only, such as `eval_set:`, runs it as agentevals-cli 0.11 did).
        where = loaded.source or "the config"
        raise ConfigError(f"{where}: no evaluators configured (the file is empty or 'evaluators' is an empty "
                          f"list); add entries, or drop -c to run the default metric {DEFAULT_METRIC}")
    names = [e.evaluator.config.name for e in chosen]
    wanted = list(metrics) or ([] if chosen or evaluators else [DEFAULT_METRIC])
    chosen += build_evaluators(wanted, options=options, existing=names)
    for ev in evaluators:
        item = ev if isinstance(ev, LoadedEvaluator) else LoadedEvaluator(ev, f"evaluators[{len(chosen)}]")
        item.evaluator.check()
        chosen.append(item)
    seen: set[str] = set()
    for item in chosen:
        name = item.evaluator.config.name
        if name in seen:
            raise ConfigError(f"{item.where}: duplicate evaluator name '{name}'")
        seen.add(name)
        judge_key_note = getattr(item.evaluator, "judge_key_note", None)  # builtin metrics (0.11's judge keys)
        if judge_key_note is not None:
            note = judge_key_note(options.credential_refs)
            if note:
                options.notes.append(f"{item.where}: evaluator '{name}': {note}")
    eval_set_obj: Optional[EvalSet] = None
    if isinstance(eval_set, EvalSet):
        eval_set_obj = eval_set
    elif eval_set is not None:
        try:
            eval_set_obj = load_eval_set(eval_set)
        except InputFileError as exc:
            raise ConfigError(str(exc)) from None
    return chosen, options, eval_set_obj


async def _run(traces: Union[TraceInput, Sequence[TraceInput]], evaluators: list[LoadedEvaluator], *,
               options: RunOptions, **kwargs: Any) -> RunResult:
    """``run_evaluation``, and with ``options.write_back`` each result written back to the backend its trace
    came from afterwards (``trace_sources.write_back``; Jaeger and Tempo: OpenTelemetry events)."""
    if not options.write_back:
        return await run_evaluation(traces, evaluators, options=options, **kwargs)
    import asyncio

    from .trace_sources.write_back import WriteBack, evaluator_facts

    inputs: list[TraceInput] = list(traces) if isinstance(traces, (list, tuple)) else [traces]  # type: ignore[list-item]
    judges, versions = evaluator_facts(evaluators)
    sink = WriteBack(inputs, judges=judges, versions=versions)
    emitter = None
    if sink.otel_sources:  # Jaeger, Tempo: the results go out as OpenTelemetry events (run --emit-otel)
        from .report.otel_events import EvaluationEventEmitter

        emitter = EvaluationEventEmitter.from_env(sources=sink.otel_sources,
                                                  feature=f"write_back to {sink.otel_sources[0]}")
    try:
        run = await run_evaluation(inputs, evaluators, options=options,
                                   consumers=[sink] + ([emitter] if emitter is not None else []), **kwargs)
    finally:
        if emitter is not None:
            emitter.shutdown()
    from .report.otel_events import disabled_by_env

    await asyncio.to_thread(sink.deliver, run, otel=emitter.by_source if emitter is not None else None,
                            otel_off=disabled_by_env())
    return run


def _check_arguments(
    *, metrics: Sequence[str], threshold: Optional[float], trajectory_match_type: Optional[str], group_by: str,
    pass_at_k: Sequence[int], concurrency: Optional[int] = None,
) -> None:
    """The checks click applies to the CLI's flags, for callers of the Python API."""
    if isinstance(metrics, str):
        raise ConfigError("metrics must be a list of metric names, not a string")
    if threshold is not None and (isinstance(threshold, bool) or not isinstance(threshold, (int, float))
                                  or not 0.0 <= threshold <= 1.0):
        raise ConfigError(f"threshold must be a number between 0 and 1, got {threshold!r}")
    for name, value, allowed in (("group_by", group_by, get_args(GroupBy)),
                                 ("trajectory_match_type", trajectory_match_type, get_args(TrajectoryMatchType))):
        if value is not None and value not in allowed:
            raise ConfigError(f"{name} must be one of {', '.join(allowed)}, got {value!r}")
    if concurrency is not None and (isinstance(concurrency, bool) or not isinstance(concurrency, int)
                                    or concurrency < 1):
        raise ConfigError(f"concurrency must be an integer >= 1, got {concurrency!r}")
    for k in pass_at_k:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ConfigError(f"pass_at_k values must be integers >= 1, got {k!r}")


async def evaluate_async(
    traces: Union[TraceInput, Sequence[TraceInput]], *, trace_format: Optional[str] = None,
    since: Optional[str] = None, read_context: Optional[ReadContext] = None, **kwargs: Any
) -> RunResult:
    """Async form of ``evaluate``."""
    evaluators, options, eval_set = prepare_run(**kwargs)
    if since is not None or read_context is not None:
        options.read_context = read_context or ReadContext()
        if since is not None:
            from .trace_sources.pull import check_since

            options.read_context.since = check_since(since, flag="since=")
    return await _run(traces, evaluators, eval_set=eval_set, options=options, trace_format=trace_format)


def evaluate(
    traces: Union[TraceInput, Sequence[TraceInput]], *, trace_format: Optional[str] = None,
    since: Optional[str] = None, read_context: Optional[ReadContext] = None, **kwargs: Any
) -> RunResult:
    """Evaluate trace files (or in-memory ``Trace``/``ConvertedTrace`` objects; one or a list) and return results.

    Keyword arguments are those of ``prepare_run``: ``eval_set``, ``metrics``, ``config``,
    ``evaluators`` (instances of any evaluator type), ``judge_model``, ``threshold``,
    ``trajectory_match_type``, ``group_by``, ``strict``, ``repeat_key``, ``pass_at_k``,
    ``fail_on_evaluation_error``, ``concurrency``, ``executor`` (``local`` or ``ray``), ``ray_address``,
    ``credential_refs`` (secret references for builtin judges' ``credential_ref``, resolved once per run).

    Backend sources (``"jaeger+http://127.0.0.1:16686?service=shop"``, see ``agentevals sources list``) read
    the window their URI names, else ``since`` (a duration such as ``"24h"``, or an RFC 3339 time), else the
    last hour. ``read_context`` (a ``trace_sources.ReadContext``) gives more: ``since="last"`` with your own
    ``watermarks`` (source key → the time to read from), and, after the run, ``read_context.windows`` (the
    window each source read: keep its ``end`` as the next watermark)::

        ctx = ReadContext(since="last", watermarks=saved)
        run = agentevals.evaluate([uri], metrics=[...], read_context=ctx)
        saved = {w.key: w.end for w in ctx.windows.values()}
    """
    return run_sync(evaluate_async(traces, trace_format=trace_format, since=since, read_context=read_context,
                                   **kwargs))
