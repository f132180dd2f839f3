"""What ``agentevals run`` does around the engine: store, reuse, gates, reports, progress, interrupts.

    parse -o and gates → open the store → load the baseline → run (consumers: finisher, write-back,
    store, progress, OTel) → on a signal: finish the partial run → write every report → exit code
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any, Optional

import click

from ..engine.consumers import RunConsumer, emit
from ..engine.options import RunOptions
from ..errors import ConfigError
from ..report import ReportContext
from ..results import RunResult
from ..results.cases import CaseList
from ..results.gates import GateOutcome, Gates, check_gates, parse_min_pass_rates
from ._outputs import parse_outputs, stdout_format, write_outputs

if TYPE_CHECKING:
    from ..results.compare import Comparison
    from ..store import RunStore

__all__ = ["RunRequest", "execute"]

log = logging.getLogger(__name__)


@dataclass
class RunRequest:
    """Everything ``agentevals run`` was asked, validated by ``prepare_run`` and click."""

    inputs: list[str]
    evaluators: list[Any]
    options: RunOptions
    eval_set: Any = None
    eval_set_path: Optional[str] = None
    config_path: Optional[str] = None
    trace_format: Optional[str] = None
    outputs: tuple[str, ...] = ()
    output_file: Optional[str] = None
    min_pass_rates: tuple[str, ...] = ()
    baseline: Optional[str] = None
    gate_on: str = "point"
    """``--gate-on``: ``point`` or ``lower-bound`` (``results.gates``)."""
    fail_on: str = "any"
    """``--fail-on``: ``any`` or ``regression`` (only significant ones, ``results.paired``)."""
    alpha: float = 0.05
    """``--alpha`` of the paired comparison against the baseline."""
    resume: Optional[str] = None
    rerun_failed: Optional[str] = None
    cache: bool = True
    store: Optional[str] = None
    no_store: bool = False
    color: Optional[bool] = None
    quiet: bool = False
    verbose: int = 0
    emit_otel: bool = False
    write_back: bool = False
    """``--write-back``: each result to the backend its trace came from (``trace_sources.write_back``)."""
    stdout_to_stderr: bool = False
    """While the run goes, what is printed to stdout goes to stderr (Ray prints cluster events there)."""
    since: Optional[str] = None
    """``--since``: the window of backend sources whose URI names none (a duration, a time, or ``last``)."""
    unscored: bool = False
    """``--unscored``: only traces the run store holds no result for (a backfill over a source's window)."""


@dataclass
class _Finisher(RunConsumer):
    """First consumer: keeps the run (its cases grow as they finish: a partial report reads them) and, when
    the run ends, adds the reuse note and settles the baseline comparison and the gates."""

    gates: Gates
    baseline: Optional[tuple[RunResult, str]] = None
    strict: bool = False
    reuse: Any = None
    alpha: float = 0.05
    run: Optional[RunResult] = None
    outcome: Optional[GateOutcome] = None
    finished: bool = False

    def run_started(self, run: RunResult) -> None:
        self.run = run

    def run_finished(self, run: RunResult) -> None:
        self.run, self.finished = run, True
        if self.reuse is not None and self.reuse.reused:
            n = self.reuse.reused
            run.notes.append(f"{n} result{'s' if n != 1 else ''} reused from the run store, not run again "
                             "(--no-cache runs everything)")
        if self.baseline is not None:
            from ..results.compare import compare_runs

            base, label = self.baseline
            self.gates.comparison = compare_runs(base, run, baseline_label=label, current_label=run.run_id or "this run",
                                                 alpha=self.alpha)
        self.outcome = check_gates(run, self.gates, strict=self.strict)

    @property
    def comparison(self) -> Optional[Comparison]:
        return self.gates.comparison


def execute(req: RunRequest) -> int:
    """Run, store, report; returns the exit code."""
    from ..core._startup import collect_again
    from ..engine.run import run_evaluation
    from ._interrupt import run_interruptible
    from ._progress import progress_consumer

    outputs = parse_outputs(req.outputs, req.output_file)
    overall, per_metric = parse_min_pass_rates(req.min_pass_rates)
    gates = Gates(min_pass_rate=overall, metric_min_pass_rates=per_metric, gate_on=req.gate_on, fail_on=req.fail_on)
    if req.fail_on == "regression" and not req.baseline:
        raise ConfigError("--fail-on regression compares against a baseline: add --baseline RUN|FILE")
    if req.no_store and (req.resume is not None or req.rerun_failed is not None):
        raise ConfigError("--resume and --rerun-failed need the run store (drop --no-store)")
    if req.resume is not None and req.rerun_failed is not None:
        raise ConfigError("--resume and --rerun-failed cannot be combined: resume continues a run, "
                          "--rerun-failed starts a new one")
    store = None if req.no_store else _open_store(req.store)
    emitter = None
    try:
        baseline = None
        if req.baseline:
            from ..results.compare import load_baseline

            baseline = load_baseline(req.baseline, store)
        run_id, resume_from, rerun_from = _run_identity(req, store)
        from ._sourced import SourcedInputs

        sourced = SourcedInputs.plan(req.inputs, since=req.since, store=store, again_from=resume_from or rerun_from)
        req.options.read_context = sourced.context
        req.options.notes.extend(sourced.notes)
        if req.unscored:
            _leave_out_scored(sourced.context, store)
        reuse = None
        if store is not None:
            from ..store import StoreReuse

            # The reports this run writes would change a folder digest on every run: left out of the key.
            reuse = StoreReuse(store, cache=req.cache, resume_from=resume_from, rerun_failed_from=rerun_from,
                               ignore=[o.path for o in outputs if o.path is not None])
        meta = _meta(req) if store is not None else {}
        keys, prior = _whole_input(req, meta, store, reuse, sourced, resume_from or rerun_from)
        key = keys[0] if keys is not None else None
        carried = _carry(req, store, reuse, sourced, key, resume_from, rerun_from)
        per_file = None
        if keys is not None and prior is None and resume_from is None and rerun_from is None:
            from ._perfile import PerFile, independent_files

            if independent_files(req):
                per_file = PerFile.plan(req, store, reuse, sourced.context, keys[1])
        finisher = _Finisher(gates=gates, baseline=baseline, strict=req.options.strict, reuse=reuse, alpha=req.alpha)
        consumers: list[RunConsumer] = [finisher]
        write_back = _write_back(req, consumers)  # before the store: its summary is stored with the run
        recorder = None
        if store is not None and run_id is not None:
            from ..store import StoreConsumer

            if key is not None:
                meta["options"]["input_key"] = key  # the next run of the same bytes and settings finds it
            recorder = StoreConsumer(store, run_id, meta=meta, reuse=reuse, resume=resume_from is not None,
                                     exit_code=lambda run: max(finisher.outcome.exit_code if finisher.outcome else 1,
                                                               _SOURCE_FAILED if sourced.failures(run) else 0),
                                     sources=sourced.records)
            recorder.copied_from = prior
            if carried is not None:  # the recorder meets each carried case as the run emits it
                carried.taken, recorder.carried_from = recorder.carried, carried.run_id
            consumers.append(recorder)
        if per_file is not None:
            consumers.append(per_file.tracker)
        color = req.color if req.color is not None else (sys.stdout.isatty() and not os.environ.get("NO_COLOR"))
        progress = progress_consumer(quiet=req.quiet, verbose=req.verbose,
                                     color=req.color if req.color is not None else not os.environ.get("NO_COLOR"),
                                     reading=sourced.reading if sourced.keys else None,
                                     size=None if sourced.keys else lambda: sourced.context.total_weight)
        if progress is not None:
            consumers.append(progress)
        if req.emit_otel:
            from ..report.otel_events import EvaluationEventEmitter

            emitter = EvaluationEventEmitter.from_env()
            consumers.append(emitter)
        emitter = _write_back_setup(write_back, consumers, emitter, recorder)

        collect_again()  # start-up is over (cli._main paused the collector for it)
        with contextlib.redirect_stdout(sys.stderr) if req.stdout_to_stderr else contextlib.nullcontext():
            if prior is not None and store is not None:  # every file and setting as in a completed run: nothing is read
                from ..store._replay import replay

                work = replay(store, prior, consumers, files=len(req.inputs), reuse=reuse)
            else:
                work = run_evaluation(per_file.inputs(req.inputs) if per_file is not None else req.inputs,
                                      req.evaluators, eval_set=req.eval_set, options=req.options,
                                      trace_format=req.trace_format, consumers=consumers, reuse=reuse,
                                      carried=carried if carried is not None else ())
            run, signum = run_interruptible(work,
                on_abandon=None if recorder is None else lambda signum: recorder.abandon(128 + signum))
        incomplete = None
        if per_file is not None and run is not None and signum is None and recorder is not None \
                and recorder.failure is None:
            try:
                per_file.record(store, recorder.run_id, run, sourced.context)
            except Exception:  # the run is stored; a later run reads every file
                log.debug("per-file keys not stored", exc_info=True)
        if req.unscored and run is not None:
            skipped = sourced.context.skipped
            run.notes.append(f"--unscored: {skipped} trace{'s' if skipped != 1 else ''} the run store already "
                             "has a result for left out")
        if signum is not None:
            run = _partial(finisher, signum, req.options)
            incomplete = run.aborted
            if write_back is not None:
                write_back.skip = "the run was interrupted"
            if recorder is not None:
                recorder.interrupted = True
                recorder.exit_code = lambda _run: 128 + signum
            if not finisher.finished:
                emit(consumers, "run_finished", run)
        assert run is not None
        unsent = write_back.outcome.failure_lines() if write_back is not None and write_back.outcome else []
        store_line = _store_failure(store, recorder, reuse, len(run.cases))
        if store_line is not None:
            run.notes.append(store_line)
        context = ReportContext(comparison=finisher.comparison, gates=finisher.outcome if gates.any else None,
                                incomplete=incomplete, strict=req.options.strict, quiet=req.quiet)
        unwritten = write_outputs(run, outputs, context, color=color)
        from ..core.redact import redact

        for line in [*unwritten, *(unsent if stdout_format(outputs) not in ("json", None) else [])]:
            click.echo(redact(f"agentevals: {line}"), err=True)  # (write-back failures: json gives them as notes)
        if stdout_format(outputs) == "json" or stdout_format(outputs) is None:
            for note in [*(e.error for e in run.input_errors), *run.notes]:
                click.echo(redact(f"agentevals: {note}"), err=True)
        elif store_line is not None:  # the table shows it among the notes; stderr says it too (CI logs)
            click.echo(redact(f"agentevals: {store_line}"), err=True)
        if signum is not None:
            name = signal.Signals(signum).name
            click.echo(f"agentevals: interrupted by {name}: {len(run.cases)} case(s) finished"
                       + (f"; continue with: agentevals run ... --resume={run.run_id}" if run.run_id else ""), err=True)
            return 128 + signum
        unwritten = [*unwritten, *unsent]  # a source not written back: exit 2, as for a report not written
        assert finisher.outcome is not None
        code = max(finisher.outcome.exit_code, _SOURCE_FAILED if sourced.failures(run) else 0)
        if unwritten or (recorder is not None and recorder.failure is not None):
            return max(code, _UNSAVED)
        return code
    finally:
        if emitter is not None:
            emitter.shutdown()
        if store is not None:
            try:
                store.close()
            except Exception:  # a store that failed mid-run may fail to close too: already said
                pass


_UNSAVED = 2
"""Exit code when a report or the run store could not be written (every other result was kept)."""
_SOURCE_FAILED = 2
"""Exit code when a backend source could not be read (the other inputs' results are in every report)."""


def _whole_input(req: RunRequest, meta: dict[str, Any], store: Any, reuse: Any, sourced: Any,
                 again_from: Optional[str]) -> tuple[Optional[tuple[str, list[str]]], Optional[str]]:
    """(this run's whole-input key and each file's key, a completed run with the same key to replay), either None.

    Only runs of local files have a key: not --unscored, --write-back, --emit-otel (which act on the traces),
    nor pull sources (their content is a window); --no-cache only with --resume or --rerun-failed (``_carry``
    compares keys). Those two and --no-cache replay nothing."""
    if (store is None or reuse is None or (not req.cache and again_from is None) or req.unscored or req.write_back
            or req.emit_otel or sourced.keys):
        return None, None
    from ..store._replay import find_replay, input_keys

    keys = input_keys(req.inputs, req.evaluators, identity=reuse.identity, options=_run_options(req, settled=False),
                      digests=[meta["config_digest"], meta["eval_set_digest"]], trace_format=req.trace_format,
                      file_digests=store.file_digests)
    if keys is None or again_from is not None:
        return keys, None
    try:
        return keys, find_replay(store, keys[0])
    except Exception:  # a store that cannot be searched: the run reads its inputs
        log.debug("whole-input cache: lookup failed", exc_info=True)
        return keys, None


def _carry(req: RunRequest, store: Any, reuse: Any, sourced: Any, key: Optional[str], resume_from: Optional[str],
           rerun_from: Optional[str]) -> Any:
    """``--resume``/``--rerun-failed`` of a run with the same whole-input key (same bytes, settings and
    evaluators): its finished (or passing) cases are taken as they are and the read leaves out their traces
    (``store._replay.carry``). None (every trace is read, stored results reused case by case) otherwise."""
    again_from = resume_from or rerun_from
    if again_from is None or key is None:
        return None
    from ..store._replay import carry

    try:
        carried = carry(store, again_from, key, failed_again=rerun_from is not None)
    except Exception:  # a store that cannot be read: the run reads every trace (and says so if reuse fails too)
        log.debug("--resume/--rerun-failed: stored cases not read", exc_info=True)
        return None
    if carried is None or not carried.positions:
        return carried
    sourced.context.skip_trace = carried.traces.__contains__
    reuse.reused += carried.results
    count = len(carried)
    what = "finished" if resume_from is not None else "without a failure"
    req.options.notes.append(f"{count} case{'s' if count != 1 else ''} {what} in run {again_from} taken as stored; "
                             "their traces were not read again")
    return carried


def _leave_out_scored(context: Any, store: Any) -> None:
    """``--unscored``: the read skips every trace that a stored case holds with a result (``scored_traces``)."""
    if store is None:
        raise ConfigError("--unscored needs the run store, where earlier results are kept (drop --no-store)")
    context.skip_trace = lambda trace_id: bool(store.scored_traces([trace_id]))


def _write_back(req: RunRequest, consumers: list[RunConsumer]) -> Any:
    """``--write-back``: the consumer that collects each pull source's verdicts and writes them back when the
    run finishes (``trace_sources.write_back``), or None."""
    if not req.write_back:
        return None
    from ..trace_sources.write_back import WriteBack, evaluator_facts

    judges, versions = evaluator_facts(req.evaluators)
    write_back = WriteBack(req.inputs, judges=judges, versions=versions, on_finish=True)
    consumers.append(write_back)
    return write_back


def _write_back_setup(write_back: Any, consumers: list[RunConsumer], emitter: Any, recorder: Any) -> Any:
    """For sources that store no results (Jaeger, Tempo), an OTel emitter for their cases, unless
    ``--emit-otel`` already sends every result; the stored exit code is 2 when a write-back fails. Returns
    the emitter in use (or None)."""
    if write_back is None:
        return emitter
    if recorder is not None:
        gates_code = recorder.exit_code
        recorder.exit_code = lambda run: _exit_code(gates_code(run), write_back)
    if not write_back.otel_sources:
        return emitter
    if emitter is None:
        from ..report.otel_events import EvaluationEventEmitter

        emitter = EvaluationEventEmitter.from_env(sources=write_back.otel_sources,
                                                  feature=f"--write-back to {write_back.otel_sources[0]}")
        consumers.append(emitter)
    from ..report.otel_events import disabled_by_env

    write_back.otel_counts = emitter.by_source  # counted as the cases finish, read when the run does
    write_back.otel_off = disabled_by_env()
    return emitter


def _exit_code(code: int, write_back: Any) -> int:
    """The run's exit code as the store records it: ``code``, or 2 (``_UNSAVED``: the results are kept, but
    what was asked did not happen) when a write-back failed."""
    failed = write_back.outcome is not None and write_back.outcome.failed
    return max(code, _UNSAVED) if failed else code


def _store_failure(store: Any, recorder: Any, reuse: Any, cases: int) -> Optional[str]:
    """The one line saying what the run store did not record (or could not read), or None."""
    if recorder is not None and recorder.failure is not None:
        return recorder.failure_line(cases) + "; the reports hold every result"
    if reuse is not None and reuse.failure is not None:
        return (f"run store {store.location}: stored results could not be read ({reuse.failure}); "
                "every evaluation ran")
    return None


def _open_store(location: Optional[str]) -> RunStore:
    from ..store import RunStore, store_location

    return RunStore.open(store_location(location))


def _run_identity(req: RunRequest, store: Any) -> tuple[Optional[str], Optional[str], Optional[str]]:
    """(this run's id, run to resume, run whose failures to rerun)."""
    if store is None:
        return None, None, None
    from ..store import new_run_id

    if req.resume is not None:
        run_id = store.resolve(req.resume or None, statuses=("interrupted", "running", "aborted", "failed"), batch=True)
        if store.get_run(run_id).options.get("live"):
            raise ConfigError(f"--resume {run_id}: that run records the sessions of agentevals serve; "
                              "it cannot be resumed by run")
        return run_id, run_id, None
    rerun_from = store.resolve(req.rerun_failed or None, batch=True) if req.rerun_failed is not None else None
    return new_run_id(), None, rerun_from


def _partial(finisher: _Finisher, signum: int, options: RunOptions) -> RunResult:
    """The run as far as it went: the cases that finished, marked incomplete."""
    from ..results import utc_now
    from ..results.repetitions import summarize_repetitions

    run = finisher.run or RunResult()
    if isinstance(run.cases, CaseList):  # the engine's, as far as it went
        run.cases = run.cases.settled()
    planned = "" if run.planned is None else f" of {'~' * run.planned_estimated}{run.planned}"
    run.aborted = (f"interrupted by {signal.Signals(signum).name} after {len(run.cases)}{planned} cases; "
                   "the report holds the cases that finished")
    run.finished_at = utc_now()
    run.repetitions = summarize_repetitions(run.cases, k_values=options.pass_at_k, repeat_key=options.repeat_key)
    return run


def _run_options(req: RunRequest, *, settled: bool) -> dict[str, Any]:
    """The run's options as the store records them; ``settled``: with the settings applied after the run (its
    reports, gates and baseline), which the whole-input key leaves out."""
    options = asdict(replace(req.options, read_context=None))
    del options["read_context"]  # the windows read are stored apart (run_sources)
    del options["credentials"]  # secrets: the references (credential_refs) are what is recorded
    options.update(since=req.since)
    options.update(inputs=req.inputs[:1000], evaluators=[e.evaluator.config.name for e in req.evaluators])
    if settled:
        options.update(outputs=list(req.outputs), min_pass_rates=list(req.min_pass_rates), baseline=req.baseline,
                       **({"gate_on": req.gate_on} if req.gate_on != "point" else {}),
                       **({"fail_on": req.fail_on, "alpha": req.alpha} if req.fail_on != "any" else {}))
    return options


def _meta(req: RunRequest) -> dict[str, Any]:
    from ..store._recording import run_meta

    return run_meta(options=_run_options(req, settled=True), config_path=req.config_path,
                    eval_set_path=req.eval_set_path)
