"""``agentevals run``: evaluate trace files and exit 0 (all passed), 1 (failed/error/nothing evaluated) or 2."""

from __future__ import annotations

import contextlib
import glob
import os
import sys
from pathlib import Path
from typing import Optional

import click

from ._main import verbosity

__all__ = ["run_command"]


def _expand(patterns: tuple[str, ...]) -> list[str]:
    """Expand quoted globs (``'traces/*.json'``); plain names pass through so missing files are reported."""
    out: list[str] = []
    for pattern in patterns:
        if any(ch in pattern for ch in "*?[") and not os.path.exists(pattern):
            matches = sorted(glob.glob(pattern, recursive=True))
            out.extend(matches or [pattern])
        else:
            out.append(pattern)
    return out


def _prepare_output_file(path: Path) -> None:
    """Create the report's directory before running, so a bad path costs nothing but a usage error."""
    from ..errors import ConfigError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--output-file {path}: cannot create its directory: {exc.strerror or exc}") from None


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
@click.option("-f", "--format", "trace_format", type=click.Choice(["jaeger-json", "otlp-json"], case_sensitive=False),
              help="Trace file format (default: detected from content).")
@click.option("-j", "--judge-model", help="Judge model for LLM-based metrics.")
@click.option("-t", "--threshold", type=click.FloatRange(0.0, 1.0), help="Pass threshold for builtin metrics (0-1).")
@click.option("--trajectory-match-type", type=click.Choice(["exact", "in_order", "any_order"], case_sensitive=False),
              help="How tool_trajectory_avg_score matches tool calls (default: exact).")
@click.option("-o", "--output", "output", type=click.Choice(["table", "json", "summary"], case_sensitive=False),
              help="Report format on stdout (default: the config's 'output', else table).")
@click.option("-c", "--config", "config_path", type=click.Path(dir_okay=False), help="eval_config.yaml.")
@click.option("--group-by", type=click.Choice(["auto", "trace", "conversation"], case_sensitive=False), default="auto",
              show_default=True,
              help="Evaluate each trace alone, or the traces of one conversation together.")
@click.option("--strict", is_flag=True, help="Also fail (exit 1) on NOT_EVALUATED results.")
@click.option("--repeat-key", help="What identifies a case across repetitions: eval_id (default), user_content, "
              "session, or a trace attribute name.")
@click.option("--pass-at-k", "pass_at_k", type=click.IntRange(min=1), multiple=True,
              help="k for pass@k and pass^k (repeatable; default k = number of repetitions).")
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
              help="Also write the report (in the -o format) to this file, even when the run stops early.")
@click.option("--emit-otel", is_flag=True,
              help="Also send each result as an OpenTelemetry gen_ai.evaluation.result event, parented to the "
                   "evaluated span; the exporter is set by the standard OTEL_EXPORTER_OTLP_* variables.")
@click.option("--dump-inputs", type=click.Path(file_okay=False, path_type=Path),
              help="Write the EvalInput each evaluator program receives to DIR/<evaluator>/<case>.json "
              "(replay one: agentevals evaluator run PATH --input FILE).")
def run_command(
    trace_files: tuple[str, ...],
    eval_set: Optional[str],
    metrics: tuple[str, ...],
    trace_format: Optional[str],
    judge_model: Optional[str],
    threshold: Optional[float],
    trajectory_match_type: Optional[str],
    output: Optional[str],
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
    emit_otel: bool,
    dump_inputs: Optional[Path],
) -> None:
    """Score TRACE_FILES (Jaeger JSON, OTLP JSON or Tempo exports; globs allowed) against an eval set."""
    from ..api import prepare_run
    from ..redact import redact
    from ..report import render
    from ..runner import run_evaluation, run_sync

    evaluators, options, eval_set_obj = prepare_run(
        eval_set=eval_set, metrics=list(metrics), config=config_path, judge_model=judge_model, threshold=threshold,
        trajectory_match_type=trajectory_match_type, group_by=group_by, strict=strict, repeat_key=repeat_key,
        pass_at_k=list(pass_at_k), fail_on_evaluation_error=fail_on_evaluation_error,
        concurrency=concurrency, executor=executor, ray_address=ray_address,
    )
    output = output or options.output or "table"
    options.persistent_workers = not no_workers
    if output_file:
        _prepare_output_file(Path(output_file))
    if dump_inputs is not None:
        _prepare_dump_dir(dump_inputs)
    options.dump_inputs = dump_inputs
    consumers = []
    if emit_otel:
        from ..otel_events import EvaluationEventEmitter

        consumers.append(EvaluationEventEmitter.from_env())
    try:
        with contextlib.redirect_stdout(sys.stderr) if executor != "local" else contextlib.nullcontext():
            # Ray prints cluster events (a worker died…) to stdout; stdout is the report's alone.
            run = run_sync(run_evaluation(_expand(trace_files), evaluators, eval_set=eval_set_obj, options=options,
                                          trace_format=trace_format or options.trace_format, consumers=consumers))
    finally:
        for consumer in consumers:
            consumer.shutdown()
    color = output != "json" and sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    text = render(run, output, color=color)
    if output_file:
        Path(output_file).write_text(render(run, output), "utf-8")
    click.echo(text, nl=False)
    if output == "json":
        for note in [*(e.error for e in run.input_errors), *run.notes]:
            click.echo(redact(f"agentevals: {note}"), err=True)
    if verbosity() >= 1:
        click.echo(f"exit code {run.exit_code(strict=options.strict)}", err=True)
    sys.exit(run.exit_code(strict=options.strict))
