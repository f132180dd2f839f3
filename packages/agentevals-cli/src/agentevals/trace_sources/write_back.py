"""``--write-back``: each result goes back to the backend its trace came from, as that backend's own object
(Phoenix annotations, MLflow assessments, Langfuse scores), through the source's ``write_back``.

``WriteBack`` is a run consumer: it notes which inputs are pull sources before the run, turns each finished
case into ``Verdict`` rows (one per trace of the case × result: every trace of a conversation gets the
case's verdicts), and ``deliver`` — called by the caller once the run is over, outside the event loop, or
with ``on_finish=True`` in ``run_finished`` (``agentevals run``, whose run store then records the summary) —
hands each source its verdicts in one ``write_back`` call on a fresh instance made by ``source_for(uri)``. Inputs that are not
pull sources (files, URLs) are skipped silently; sources that store nothing (``writes_back == ""``: Jaeger,
Tempo) are listed in ``otel_sources``: their results go out as OpenTelemetry events instead (the caller
routes those cases to the ``--emit-otel`` exporter). A failing source is one line naming it; the others are
still written.

Example::

    wb = WriteBack(inputs, judges={"helpfulness"})
    run = await run_evaluation(inputs, evaluators, consumers=[wb])
    outcome = await asyncio.to_thread(wb.deliver, run)
    print(outcome.lines())   # ["wrote 4 results back to phoenix+http://127.0.0.1:6006?project=default"]
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Optional

from ..__about__ import __version__
from ..engine.consumers import RunConsumer
from ..errors import AgentevalsError
from ..results import CaseResult, MetricResult, RunResult, Status
from .base import TraceInput

__all__ = ["WriteBack", "WriteBackOutcome", "evaluator_facts", "verdicts_for"]

log = logging.getLogger("agentevals.engine")

JUDGE_TYPES = frozenset({"llm_judge", "rubric"})
"""Evaluator types whose verdict an LLM gives (besides the names the caller says are judges)."""
MAX_EXPLANATION = 2048


@dataclass
class WriteBackOutcome:
    """What ``deliver`` did: results written per source, the one-line failures, the OTel sources."""

    written: dict[str, int] = field(default_factory=dict)
    failures: dict[str, str] = field(default_factory=dict)
    otel: dict[str, int] = field(default_factory=dict)
    """Source → results sent as OpenTelemetry events (filled by the caller that emits them)."""
    otel_off: bool = False
    """OpenTelemetry is turned off by the environment: nothing was sent for the ``otel`` sources."""

    @property
    def failed(self) -> bool:
        return bool(self.failures)

    def lines(self) -> list[str]:
        """The summary, one line per source: ``wrote N result(s) back to URI`` or the failure."""
        out = [f"wrote {n} result{'s' if n != 1 else ''} back to {uri}" for uri, n in self.written.items()]
        if self.otel_off:
            out += [f"nothing sent for {uri}: OpenTelemetry is turned off (OTEL_SDK_DISABLED=true or "
                    "OTEL_LOGS_EXPORTER=none)" for uri in self.otel]
        else:
            out += [f"sent {n} result{'s' if n != 1 else ''} for {uri} as OpenTelemetry events (--emit-otel)"
                    for uri, n in self.otel.items()]
        return out + self.failure_lines()

    def failure_lines(self) -> list[str]:
        """One line per source that could not be written, naming it."""
        return [f"write-back failed: {line}" if line.startswith(uri) else f"write-back to {uri} failed: {line}"
                for uri, line in self.failures.items()]


def _explanation(metric: MetricResult) -> Optional[str]:
    """The metric's reason, reasoning or error; else its misses; else, for a FAILED score, the threshold; for
    an informational metric, its value."""
    text = metric.reason or metric.reasoning or metric.error or "; ".join(metric.misses)
    if not text and metric.status == Status.FAILED and metric.score is not None and metric.threshold is not None:
        text = f"score {metric.score:g} < threshold {metric.threshold:g}"
    if not text and metric.status == Status.INFORMATIONAL and metric.value is not None:
        text = f"value: {json.dumps(metric.value, default=str, sort_keys=True)}"
    return text[:MAX_EXPLANATION] if text else None


def verdicts_for(case: CaseResult, run_id: str, *, judges: Collection[str] = (),
                 versions: Optional[Mapping[str, str]] = None) -> dict[str, list]:
    """A case's results as ``Verdict`` rows grouped by the source of each trace: every trace of the case
    gets every result of the case (``judges``: evaluator names decided by an LLM; ``versions``: evaluator
    name → version, where known)."""
    from .pull import Verdict

    sources = case.trace_sources if len(case.trace_sources) == len(case.trace_ids) else (
        case.sources * len(case.trace_ids) if len(case.sources) == 1 else [])
    out: dict[str, list[Verdict]] = {}
    for trace_id, source in zip(case.trace_ids, sources, strict=False):  # none when the sources are unknown
        rows = out.setdefault(source, [])
        for metric in case.metrics:
            passed = True if metric.status == Status.PASSED else False if metric.status == Status.FAILED else None
            rows.append(Verdict(
                trace_id=trace_id, evaluator=metric.name, score=metric.score, passed=passed,
                status=metric.status.value, run_id=run_id,
                evaluator_version=(versions or {}).get(metric.name)
                or (__version__ if metric.type == "builtin" else None),  # builtins ship with agentevals
                explanation=_explanation(metric), case_id=case.case_id,
                judge=metric.name in judges or metric.type in JUDGE_TYPES or "judge_model" in metric.details))
    return out


def evaluator_facts(evaluators: Iterable[object]) -> tuple[set[str], dict[str, str]]:
    """(names of the evaluators an LLM decides, name → version where the config gives one or pins a digest) of a run's
    evaluators (``BaseEvaluator`` or ``LoadedEvaluator``; read by duck typing: scoring is not imported here)."""
    judges: set[str] = set()
    versions: dict[str, str] = {}
    for item in evaluators:
        ev = getattr(item, "evaluator", item)
        config = getattr(ev, "config", None)
        name = getattr(config, "name", None)
        if not name:
            continue
        if getattr(ev, "needs_judge", False) or getattr(ev, "name", "") in JUDGE_TYPES:
            judges.add(name)
        version, digest = getattr(config, "version", None), getattr(config, "sha256", None)
        if isinstance(version, str) and version:
            versions[name] = version
        elif isinstance(digest, str) and digest:  # a pinned remote evaluator: its code's digest names it
            versions[name] = f"sha256:{digest[:16]}"
    return judges, versions


class WriteBack(RunConsumer):
    """Collects the run's verdicts for the pull sources among ``inputs``; ``deliver`` writes them back."""

    def __init__(self, inputs: Iterable[TraceInput], *, judges: Collection[str] = (),
                 versions: Optional[Mapping[str, str]] = None, on_finish: bool = False) -> None:
        from .pull import PullSource
        from .resolve import uri_sources

        self.judges, self.versions = frozenset(judges), dict(versions or {})
        self.targets: list[str] = []
        """Sources that store results (``writes_back`` set), in input order."""
        self.otel_sources: list[str] = []
        """Sources that store none (Jaeger, Tempo): their results go out as OpenTelemetry events."""
        for _, source in uri_sources(inputs):  # a source given as an object is written back through a fresh one
            if isinstance(source, PullSource):
                (self.targets if source.writes_back else self.otel_sources).append(source.label)
        self.verdicts: dict[str, list] = {uri: [] for uri in self.targets}
        self.run: Optional[RunResult] = None
        self.run_id: Optional[str] = None
        self.on_finish = on_finish
        """Deliver in ``run_finished`` (``agentevals run``: placed before the run store's consumer, so the
        summary reaches the stored notes and exit code); else the caller calls ``deliver``."""
        self.skip: Optional[str] = None
        """Why not to deliver in ``run_finished`` (set by the caller: ``"the run was interrupted"``)."""
        self.otel_counts: Optional[Mapping[str, int]] = None
        """Results sent as OTel events per source, kept up to date by the caller's emitter."""
        self.otel_off = False
        """Set by the caller when the environment turns OpenTelemetry off (``OTEL_SDK_DISABLED``)."""
        self.outcome: Optional[WriteBackOutcome] = None

    @property
    def wanted(self) -> bool:
        """Whether any input takes a write-back (as its own objects or as OTel events)."""
        return bool(self.targets or self.otel_sources)

    def run_started(self, run: RunResult) -> None:
        self.run = run  # its run id is read at the first case: the run store's consumer may set it after us

    def case_finished(self, index: int, case: CaseResult) -> None:
        if not self.targets:
            return
        for uri, rows in verdicts_for(case, self._run_id(), judges=self.judges, versions=self.versions).items():
            if uri in self.verdicts:
                self.verdicts[uri].extend(rows)

    def _run_id(self) -> str:
        # A run outside the run store (--no-store, the Python API) still needs one id for all its verdicts.
        if self.run_id is None:
            given = self.run.run_id if self.run is not None else None
            self.run_id = given or f"unstored-{uuid.uuid4().hex[:12]}"
        return self.run_id

    def run_finished(self, run: RunResult) -> None:
        if not self.on_finish or self.outcome is not None:
            return
        if self.skip:
            run.notes.append(f"--write-back: nothing written back ({self.skip})")
            return
        self.outcome = self.deliver(run, otel=self.otel_counts, otel_off=self.otel_off)

    def deliver(self, run: Optional[RunResult] = None, *, otel: Optional[Mapping[str, int]] = None,
                otel_off: bool = False) -> WriteBackOutcome:
        """Write each source's verdicts back (blocking: call it outside the event loop) and add the summary
        lines to ``run.notes`` (``otel``: results the caller sent as OTel events, per source; ``otel_off``:
        the environment turned OpenTelemetry off, so nothing was). Never raises for a source's failure: it
        is that source's one line."""
        from .pull import PullSource
        from .resolve import source_for

        outcome = WriteBackOutcome(otel={uri: (otel or {}).get(uri, 0) for uri in self.otel_sources},
                                   otel_off=bool(self.otel_sources) and otel_off)
        for uri in self.targets:
            rows = self.verdicts.get(uri, [])
            if not rows:
                outcome.written[uri] = 0
                continue
            try:
                source = source_for(uri)  # a fresh instance: a clean client, nothing left from the read
                assert isinstance(source, PullSource)
                outcome.written[uri] = int(source.write_back(rows))
            except AgentevalsError as exc:  # SourceError and ConfigError are ones
                outcome.failures[uri] = " ".join(str(exc).split())
            except Exception as exc:  # a plugin's bug is still one line naming the source, never a traceback
                log.debug("write-back to %s failed", uri, exc_info=True)
                outcome.failures[uri] = f"{type(exc).__name__}: {' '.join(str(exc).split())}"
        if run is not None:
            run.notes.extend(outcome.lines())
        self.outcome = outcome
        return outcome
