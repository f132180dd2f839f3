"""``agentevals run``: evaluate trace files, record the run, write its reports, exit by the gates.

Exit codes: 0 passed, 1 failed (see ``agentevals.results.gates`` for the rule), 2 usage or config error,
130/143/129 interrupted by SIGINT/SIGTERM/SIGHUP (partial reports written, run stored as interrupted);
2 too when ``--write-back`` could not write to a source (one line each; the reports hold every result).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import click

from ._choices import ChoicesInHelp, RegistryChoice
from ._main import quiet_enabled, verbosity

__all__ = ["run_command"]


def _prepare_dump_dir(path: Path) -> None:
    from ..errors import ConfigError

    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--dump-inputs {path}: cannot create the directory: {exc.strerror or exc}") from None

@click.command("run", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("trace_files", nargs=-1, required=True, metavar="TRACE_FILES...")
@click.option("-e", "--eval-set", type=click.Path(dir_okay=False), help="ADK EvalSet JSON with the golden cases.")
@click.option("-m", "--metric", "metrics", multiple=True,
              help="Builtin metric to run (repeatable). Default: tool_trajectory_avg_score (when no -c).")
@click.option("-f", "--format", "trace_format",
              type=RegistryChoice("agentevals.traces.formats:TRACE_FORMATS", case_sensitive=False),
              help="Trace file format (default: detected from content); plugins add more (agentevals.trace_formats).")
@click.option("-j", "--judge-model", help="Judge model for LLM-based metrics.")
@click.option("-t", "--threshold", type=click.FloatRange(0.0, 1.0), help="Pass threshold for builtin metrics (0-1).")
@click.option("--trajectory-match-type", type=click.Choice(["exact", "in_order", "any_order"], case_sensitive=False),
              help="How tool_trajectory_avg_score matches tool calls (default: exact).")
@click.option("-o", "--output", "outputs", multiple=True, metavar="FORMAT[=PATH]", cls=ChoicesInHelp,
              registry="agentevals.report:REPORT_FORMATS",
              help="Report: {choices} (default: the config's 'output', else table); FORMAT=PATH writes a file "
                   "(repeatable: several formats from one run; one may go to stdout).")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False), help="eval_config.yaml.")
@click.option("--group-by", type=click.Choice(["auto", "trace", "conversation"], case_sensitive=False), default="auto",
              show_default=True,
              help="Evaluate each trace alone, or the traces of one conversation together.")
@click.option("--strict", is_flag=True, help="Also fail (exit 1) on NOT_EVALUATED results.")
@click.option("--repeat-key", help="Report repetitions, grouped by: eval_id (default), user_content, session, or a "
              "trace attribute name (without it or --pass-at-k, only traces marked agentevals.repeat_index are).")
@click.option("--pass-at-k", "pass_at_k", type=click.IntRange(min=1), multiple=True,
              help="Report repetitions with pass@k and pass^k for this k (repeatable; default k = number of "
                   "repetitions).")
@click.option("--fail-on-evaluation-error", is_flag=True, default=None,
              help="Stop at the first evaluator error (exit 1, partial report).")
@click.option("--concurrency", type=click.IntRange(min=1),
              help="Evaluations run at once across all cases (default: the number of cores).")
@click.option("--no-persistent-workers", "no_workers", is_flag=True,
              help="Start one evaluator process per evaluation instead of keeping workers (protocol 1.2).")
@click.option("--executor", default="local", show_default=True,
              help="Where evaluations run: local, or ray (batches across a Ray cluster; the 'ray' extra).")
@click.option("--ray-address", metavar="ADDR",
              help="Ray cluster for --executor ray (ray://host:10001, or auto); default $RAY_ADDRESS, else a local instance.")
@click.option("--output-file", type=click.Path(dir_okay=False, writable=True),
              help="Also write the stdout report to this file (with no -o: the format its extension names, "
                   ".json .xml .md .html), even when the run stops early.")
@click.option("--min-pass-rate", "min_pass_rates", multiple=True, metavar="[METRIC=]RATE",
              help="Pass when at least RATE (0-1) of the evaluated cases pass, instead of failing on any "
                   "failure; METRIC=RATE for one metric's rows (repeatable).")
@click.option("--gate-on", type=click.Choice(["point", "lower-bound"], case_sensitive=False), default="point",
              show_default=True,
              help="What --min-pass-rate compares: the pass rate itself, or its Wilson 95%% lower bound (pass "
                   "only when the rate is above RATE beyond noise; docs/trust.md).")
@click.option("--baseline", metavar="RUN|FILE",
              help="Fail only on regressions against a stored run (id, prefix, latest) or an earlier -o json "
                   "report; shown first in every report.")
@click.option("--fail-on", type=click.Choice(["any", "regression"], case_sensitive=False), default="any",
              show_default=True,
              help="With --baseline: fail on any row that regressed, or only on a significant regression "
                   "(McNemar's exact test on the paired cases at --alpha; docs/trust.md).")
@click.option("--alpha", type=click.FloatRange(0.0, 1.0, min_open=True, max_open=True), default=0.05,
              show_default=True, help="Significance level of the paired comparison against --baseline.")
@click.option("--resume", is_flag=False, flag_value="", default=None, metavar="[RUN]",
              help="Continue an interrupted run (default: the latest one): only what has no result yet runs.")
@click.option("--rerun-failed", is_flag=False, flag_value="", default=None, metavar="[RUN]",
              help="Run again only what failed or errored in RUN (default: the latest run); reuse the rest.")
@click.option("--no-cache", is_flag=True,
              help="Run every (trace, evaluator) pair even when the store holds a result for the same trace "
                   "content and evaluator.")
@click.option("--since", metavar="DURATION|TIME|last",
              help="Window of backend sources whose URI names none: a duration (24h), an RFC 3339 time, or "
                   "'last': from where the previous completed run of the same source stopped (the run store).")
@click.option("--unscored", is_flag=True,
              help="Only traces the run store holds no result for (backfill: run SOURCE --since 7d --unscored).")
@click.option("--sample", type=click.FloatRange(0.0, 1.0, min_open=True), metavar="RATE",
              help="Evaluate this share of sessions (0-1], chosen by a hash of the conversation (else trace) id: "
                   "the same sessions on every run and machine (overrides the config's 'sample').")
@click.option("--filter", "filter_expr", metavar="EXPR",
              help="Evaluate only sessions matching EXPR, e.g. 'attr.deployment.environment == \"prod\" and "
                   "duration > 2s' (overrides the config's 'filter'); the others are counted as filtered out.")
@click.option("--store", "store", metavar="PATH|URL", help="Run store: a SQLite file or postgresql:// URL "
              "(default: $AGENTEVALS_STORE, else runs.sqlite in the user data folder).")
@click.option("--no-store", is_flag=True, help="Do not record this run (no cache, resume or rerun-failed).")
@click.option("--color/--no-color", default=None, help="Colours (default: only when the output is a terminal "
              "and NO_COLOR is unset).")
@click.option("--emit-otel", is_flag=True,
              help="Also send each result as an OpenTelemetry gen_ai.evaluation.result event, parented to the "
                   "evaluated span; the exporter is set by the standard OTEL_EXPORTER_OTLP_* variables.")
@click.option("--write-back", is_flag=True,
              help="After the run, write each result back to the backend its trace came from (Phoenix annotations, "
                   "MLflow assessments, Langfuse scores; Jaeger and Tempo: OpenTelemetry events as with --emit-otel). "
                   "Files are skipped. A source that cannot be written is one line and exit code 2.")
@click.option("--dump-inputs", type=click.Path(file_okay=False, path_type=Path),
              help="Write the EvalInput each evaluator program receives to DIR/<evaluator>/<case>.json "
              "(replay one: agentevals evaluator run PATH --input FILE); every pair runs (no result cache).")
@click.option("-q", "--quiet", is_flag=True, help="Only failures, gate results and the totals line.")
def run_command(
    trace_files: tuple[str, ...],
    eval_set: Optional[str],
    metrics: tuple[str, ...],
    trace_format: Optional[str],
    judge_model: Optional[str],
    threshold: Optional[float],
    trajectory_match_type: Optional[str],
    outputs: tuple[str, ...],
    config_path: Optional[str],
    group_by: str,
    strict: bool,
    repeat_key: Optional[str],
    pass_at_k: tuple[int, ...],
    fail_on_evaluation_error: Optional[bool],
    concurrency: Optional[int],
    no_workers: bool,
    executor: str,
    ray_address: Optional[str],
    output_file: Optional[str],
    min_pass_rates: tuple[str, ...],
    baseline: Optional[str],
    resume: Optional[str],
    rerun_failed: Optional[str],
    no_cache: bool,
    store: Optional[str],
    no_store: bool,
    write_back: bool,
    color: Optional[bool],
    quiet: bool,
    emit_otel: bool,
    dump_inputs: Optional[Path],
    since: Optional[str],
    unscored: bool = False,
    sample: Optional[float] = None,
    filter_expr: Optional[str] = None,
    gate_on: str = "point",
    fail_on: str = "any",
    alpha: float = 0.05,
) -> None:
    """Score TRACE_FILES (Jaeger JSON, OTLP JSON or Tempo exports; globs allowed) or backend query URIs
    (jaeger+http://HOST:PORT?service=NAME&since=2h, …: see 'agentevals sources list') against an eval set.

    Put --resume/--rerun-failed without a RUN after the trace files (or write --resume=RUN).
    """
    from ..api import prepare_run
    from ..trace_sources import expand_globs
    from ._pipeline import RunRequest, execute

    evaluators, options, eval_set_obj = prepare_run(
        eval_set=eval_set, metrics=list(metrics), config=config_path, judge_model=judge_model, threshold=threshold,
        trajectory_match_type=trajectory_match_type, group_by=group_by, strict=strict, repeat_key=repeat_key,
        pass_at_k=list(pass_at_k), fail_on_evaluation_error=fail_on_evaluation_error,
        concurrency=concurrency, executor=executor, ray_address=ray_address,
    )
    if dump_inputs is not None:
        _prepare_dump_dir(dump_inputs)
    options.dump_inputs = dump_inputs
    options.persistent_workers = not no_workers
    options.sample = sample if sample is not None else options.sample
    options.filter = filter_expr if filter_expr is not None else options.filter
    if filter_expr:
        from ..engine.filters import parse_filter

        parse_filter(filter_expr, label="--filter")  # a bad expression: one line, exit 2, before any reading
    options.write_back = write_back = write_back or options.write_back  # the flag, or write_back: in the config
    request = RunRequest(
        inputs=expand_globs(trace_files), evaluators=evaluators, options=options, eval_set=eval_set_obj, write_back=write_back,
        # -e, or the config's eval_set: (its file decides the results: the store's digest, the whole-input key)
        eval_set_path=eval_set or (eval_set_obj.source or None if eval_set_obj is not None else None),
        config_path=config_path, trace_format=trace_format or options.trace_format,
        outputs=outputs or ((options.output,) if options.output else ()),
        output_file=output_file, min_pass_rates=min_pass_rates, baseline=baseline, resume=resume,
        gate_on=gate_on, fail_on=fail_on, alpha=alpha,
        rerun_failed=rerun_failed, cache=not no_cache and dump_inputs is None, store=None if no_store else store, no_store=no_store,
        color=color, quiet=quiet or quiet_enabled(), verbose=verbosity(), emit_otel=emit_otel,
        stdout_to_stderr=executor != "local", since=since, unscored=unscored,
    )
    code = execute(request)
    if verbosity() >= 1:
        click.echo(f"exit code {code}", err=True)
    sys.stdout.flush()
    sys.exit(code)
