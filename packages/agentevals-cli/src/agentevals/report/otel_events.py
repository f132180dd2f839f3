"""Results as OpenTelemetry ``gen_ai.evaluation.result`` events (``run --emit-otel``, ``serve --emit-otel``).

Each event is a log record parented to the span it judges, so a tracing backend shows the score next
to the agent's turn. Attributes follow the OpenTelemetry GenAI semantic conventions:

    gen_ai.evaluation.name          the evaluator's name (``tool_trajectory_avg_score``)
    gen_ai.evaluation.score.value   the score, when there is one
    gen_ai.evaluation.score.label   pass | fail | not_evaluated | informational (absent on error)
    gen_ai.evaluation.explanation   the reason or reasoning, cut to 2,048 characters
    gen_ai.response.id              the turn's last model response id, where the trace carries one
    error.type                      on an evaluator error, with no score or label

A metric with per-turn scores gives one event per turn, on that turn's span; any other metric gives
one event on the case's last turn. No content (user input, model output) is sent. The exporter is the
OTLP one, configured only by the standard ``OTEL_EXPORTER_OTLP_*`` variables
(``OTEL_EXPORTER_OTLP_LOGS_PROTOCOL`` / ``OTEL_EXPORTER_OTLP_PROTOCOL``: ``http/protobuf`` by default,
or ``grpc``); ``OTEL_SDK_DISABLED=true`` or ``OTEL_LOGS_EXPORTER=none`` turn it off. A dedicated
``LoggerProvider`` is used, never the global one.

    emitter = EvaluationEventEmitter.from_env()
    await run_evaluation(files, evaluators, consumers=[emitter])
    emitter.shutdown()
"""

from __future__ import annotations

import logging
import os
from collections.abc import Collection
from typing import Any, Optional

from ..engine.consumers import RunConsumer
from ..errors import ConfigError, MissingDependencyError
from ..results import CaseResult, MetricResult, RunResult, SpanRef, Status

__all__ = ["EVENT_NAME", "EvaluationEventEmitter", "event_attributes"]

log = logging.getLogger(__name__)

EVENT_NAME = "gen_ai.evaluation.result"
MAX_EXPLANATION = 2048
_LABELS = {Status.PASSED: "pass", Status.FAILED: "fail", Status.NOT_EVALUATED: "not_evaluated",
           Status.INFORMATIONAL: "informational"}


def event_attributes(metric: MetricResult, score: Optional[float], case: CaseResult) -> dict[str, Any]:
    """The attributes of one evaluation event."""
    attributes: dict[str, Any] = {"gen_ai.evaluation.name": metric.name, "agentevals.case_id": case.case_id}
    if case.eval_id:
        attributes["agentevals.eval_id"] = case.eval_id
    if metric.status == Status.ERROR:
        attributes["error.type"] = (metric.error or "evaluator_error")[:MAX_EXPLANATION]
        return attributes
    if score is not None:
        attributes["gen_ai.evaluation.score.value"] = float(score)
    attributes["gen_ai.evaluation.score.label"] = _LABELS[metric.status]
    explanation = metric.reason or metric.reasoning
    if explanation:
        attributes["gen_ai.evaluation.explanation"] = explanation[:MAX_EXPLANATION]
    return attributes


class EvaluationEventEmitter(RunConsumer):
    """A run consumer that emits one ``gen_ai.evaluation.result`` event per result (per turn when scored per turn)."""

    def __init__(self, logger_provider: Any, *, sources: Optional[Collection[str]] = None) -> None:
        self.provider = logger_provider
        self.logger = logger_provider.get_logger("agentevals")
        self.sources = None if sources is None else frozenset(sources)
        """Only cases read from these sources (``--write-back`` to Jaeger/Tempo); ``None``: every case."""
        self.emitted = 0
        self.by_source: dict[str, int] = {}
        """Events emitted per source (a case's first source)."""
        self.skipped = 0
        """Results of cases whose turns carry no span id (nothing to parent them to)."""

    @classmethod
    def from_env(cls, *, sources: Optional[Collection[str]] = None,
                 feature: str = "--emit-otel") -> EvaluationEventEmitter:
        """An emitter whose OTLP exporter is configured by ``OTEL_EXPORTER_OTLP_*`` (``ConfigError`` on a bad
        protocol); ``sources``: emit only for cases read from these sources; ``feature``: what needs the
        ``otel`` extra when it is missing."""
        try:
            from opentelemetry.sdk._logs import LoggerProvider
            from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
            from opentelemetry.sdk.resources import Resource
        except ImportError as exc:
            raise MissingDependencyError(feature, "otel") from exc
        from ..__about__ import __version__

        provider = LoggerProvider(resource=Resource.create({"service.name": "agentevals",
                                                           "service.version": __version__}))
        if not disabled_by_env():
            provider.add_log_record_processor(BatchLogRecordProcessor(_exporter()))
        return cls(provider, sources=sources)

    def case_finished(self, index: int, case: CaseResult) -> None:
        if self.sources is not None and not self.sources.intersection(case.sources):
            return
        before = self.emitted
        self._emit_case(case)
        if self.emitted > before:
            source = next((s for s in case.sources if self.sources is None or s in self.sources), "")
            self.by_source[source] = self.by_source.get(source, 0) + self.emitted - before

    def _emit_case(self, case: CaseResult) -> None:
        spans = case.invocation_spans
        last = next((s for s in reversed(spans) if s is not None), None)
        for metric in case.metrics:
            per_turn = metric.per_invocation_scores
            if per_turn and len(per_turn) == len(spans) and metric.status != Status.ERROR:
                targets = [(span, score) for span, score in zip(spans, per_turn, strict=True)]
            else:
                targets = [(last, metric.score)]
            for span, score in targets:
                if span is None:
                    self.skipped += 1
                    continue
                self._emit(span, event_attributes(metric, score, case))

    def _emit(self, span: SpanRef, attributes: dict[str, Any]) -> None:
        from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags, set_span_in_context

        try:
            parent = SpanContext(int(span.trace_id, 16), int(span.span_id, 16), is_remote=True,
                                 trace_flags=TraceFlags(TraceFlags.SAMPLED))
        except ValueError:
            self.skipped += 1
            return
        if span.response_id:  # the model response judged, where the trace named it (GenAI conventions)
            attributes = {**attributes, "gen_ai.response.id": span.response_id}
        self.logger.emit(context=set_span_in_context(NonRecordingSpan(parent)), event_name=EVENT_NAME,
                         attributes=attributes)
        self.emitted += 1

    def run_finished(self, run: RunResult) -> None:
        self.provider.force_flush(10_000)

    def shutdown(self) -> None:
        """Flush (10 s at most) and stop the exporter."""
        self.provider.shutdown()


def disabled_by_env() -> bool:
    """The standard switches that silence telemetry: ``OTEL_SDK_DISABLED=true``, ``OTEL_LOGS_EXPORTER=none``."""
    return (os.environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"
            or os.environ.get("OTEL_LOGS_EXPORTER", "").strip().lower() == "none")


def _exporter() -> Any:
    protocol = (os.environ.get("OTEL_EXPORTER_OTLP_LOGS_PROTOCOL") or os.environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip().lower()
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter as GrpcLogExporter

        return GrpcLogExporter()
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter as HttpLogExporter

        return HttpLogExporter()
    raise ConfigError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported by --emit-otel: "
                      "use http/protobuf or grpc")
