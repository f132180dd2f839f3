"""Result models: one MetricResult per (case, evaluator), grouped into CaseResults and a RunResult."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, Literal, Optional

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SerializerFunctionWrapHandler,
    field_serializer,
    model_serializer,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import SkipJsonSchema

from ..core._defaults import new_dict, new_list
from ..core._docs import ATTRIBUTE_DOCS

__all__ = ["SKIP_KINDS", "CaseResult", "HumanLabel", "InputError", "MetricResult", "RunResult", "SpanRef", "Status", "Verdict",
           "case_key", "case_status", "evaluated_cases", "row_key", "tally_statuses", "tally_totals", "utc_now",
           "verdict_for"]

RESULT_SCHEMA_VERSION = "1"
"""Version of the ``-o json`` document shape (see ``agentevals/report/schema``)."""


class Status(str, Enum):
    """Outcome of one evaluator on one case."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    NOT_EVALUATED = "NOT_EVALUATED"
    """Could not be evaluated for a known reason (no eval case, no judge key, nothing to compare)."""
    ERROR = "ERROR"
    """The evaluator could not produce a score (crash, timeout, invalid output)."""
    INFORMATIONAL = "INFORMATIONAL"
    """A metric that reports a value and never passes or fails (token usage, call counts)."""


class Verdict(str, Enum):
    """AgentV-style verdict of a score: pass ≥ 0.8, borderline ≥ 0.6, fail below."""

    PASS = "pass"
    BORDERLINE = "borderline"
    FAIL = "fail"


def utc_now() -> str:
    """Now, ISO 8601 in UTC with milliseconds (sorts as text): the run's timestamps."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def verdict_for(score: Optional[float]) -> Optional[Verdict]:
    """Map a score to its verdict (None for no score)."""
    if score is None:
        return None
    if score >= 0.8:
        return Verdict.PASS
    if score >= 0.6:
        return Verdict.BORDERLINE
    return Verdict.FAIL


class MetricResult(BaseModel):
    """One evaluator's outcome on one case (a trace or a conversation)."""

    model_config = ConfigDict(**ATTRIBUTE_DOCS)

    name: str
    """Evaluator name as configured (builtin metrics: the metric name)."""
    type: str = "builtin"
    """Evaluator type (the YAML ``type:``)."""
    status: Status
    score: Optional[float] = None
    threshold: Optional[float] = None
    per_invocation_scores: list[Optional[float]] = Field(default_factory=new_list)
    value: Any = None
    """Reported value of an informational metric (never pass/fail)."""
    details: dict[str, Any] = Field(default_factory=new_dict)
    error: Optional[str] = None
    """One-line cause when status is ERROR."""
    reason: Optional[str] = None
    """Why the result is NOT_EVALUATED (or a note on how it was scored)."""
    warnings: list[str] = Field(default_factory=new_list)
    """What is odd but was kept (e.g. an explicit status that contradicts score vs threshold)."""
    hits: list[str] = Field(default_factory=new_list)
    misses: list[str] = Field(default_factory=new_list)
    reasoning: Optional[str] = None
    weight: float = 1.0
    required: Optional[float] = None
    """Gate: the score must reach this for the case to count (AgentV ``required``)."""
    verdict: Optional[Verdict] = None
    duration_ms: Optional[float] = None

    @classmethod
    def scored(
        cls, name: str, score: float, threshold: float, *, type: str = "builtin", **fields: Any
    ) -> MetricResult:
        """A PASSED/FAILED result from a score and a threshold."""
        status = Status.PASSED if score >= threshold else Status.FAILED
        return cls(name=name, type=type, status=status, score=score, threshold=threshold,
                   verdict=verdict_for(score), **fields)

    @classmethod
    def not_evaluated(cls, name: str, reason: str, *, type: str = "builtin", **fields: Any) -> MetricResult:
        return cls(name=name, type=type, status=Status.NOT_EVALUATED, reason=reason, **fields)

    @classmethod
    def errored(cls, name: str, error: str, *, type: str = "builtin", **fields: Any) -> MetricResult:
        return cls(name=name, type=type, status=Status.ERROR, error=error, **fields)


class SpanRef(BaseModel):
    """Where an invocation was recorded: a trace id and a span id (lowercase hex)."""

    trace_id: str
    span_id: str
    response_id: Optional[str] = None
    """The turn's ``gen_ai.response.id``, where the trace carries one."""


class HumanLabel(BaseModel):
    """A person's judgement of a stored case, or of one metric of it (``agentevals labels``), shown beside the
    machine verdicts."""

    model_config = ConfigDict(**ATTRIBUTE_DOCS)

    metric: Optional[str] = None
    """The metric labelled; None: the whole case."""
    verdict: Optional[Literal["pass", "fail"]] = None
    """The person's verdict (a label has a verdict, a score or both)."""
    score: Optional[float] = None
    """The person's score in [0, 1]."""
    note: Optional[str] = None
    labeler: Optional[str] = None
    """Who labelled it (a name or an address, as given)."""
    created_at: str = ""
    """When it was labelled (ISO 8601, UTC)."""

    def passes(self, threshold: Optional[float] = None) -> Optional[bool]:
        """The person's pass/fail: the verdict, else the score against ``threshold`` (None: neither known)."""
        if self.verdict is not None:
            return self.verdict == "pass"
        if self.score is not None and threshold is not None:
            return self.score >= threshold
        return None


_EXCLUDE_IF = "exclude_if" in FieldInfo.__slots__
"""``Field(exclude_if=...)`` exists (pydantic 2.12); before it, the keyword was kept as schema metadata only."""


def _omitted_when(test: Any) -> dict[str, Any]:
    """``Field`` keywords that leave the field out of a dump when ``test(value)`` holds (see ``_EXCLUDE_IF``)."""
    return {"exclude_if": test} if _EXCLUDE_IF else {}


class CaseResult(BaseModel):
    """Everything evaluated for one case: a trace, or the traces of one conversation."""

    model_config = ConfigDict(**ATTRIBUTE_DOCS)

    case_id: str
    """Trace id, or conversation id when grouped by conversation."""
    trace_ids: list[str]
    sources: list[str]
    eval_id: Optional[str] = None
    """Matched eval case, or None."""
    match_reason: Optional[str] = None
    """How (or why not) the eval case was matched."""
    invocation_count: int = 0
    user_contents: list[str] = Field(default_factory=new_list)
    performance_metrics: Optional[dict[str, Any]] = None
    metrics: list[MetricResult] = Field(default_factory=new_list)
    warnings: list[str] = Field(default_factory=new_list)
    score: Optional[float] = None
    """Weighted score over the metrics with a score (required gates applied)."""
    verdict: Optional[Verdict] = None
    repeat_group: Optional[str] = None
    """What makes cases repetitions of one task: the eval id, or the ``repeat_key`` value; None when the case
    is no repetition (the run asked for none and its traces carry no ``agentevals.repeat_index``)."""
    repeat_index: Optional[int] = None
    """Position among repetitions of the same eval case, when there are several."""
    evaluation_status: str = "success"
    """MASEval-style status of the repetition: success or evaluation_failed."""
    provenance: Optional[dict[str, Any]] = Field(default=None, **_omitted_when(lambda value: value is None))
    """Where the matched eval case came from, when it has one: its ``metadata.provenance`` as
    ``agentevals evalset from-run`` writes it (run id, case id, trace ids, sources); left out when none."""
    labels: list[HumanLabel] = Field(default_factory=new_list, **_omitted_when(lambda labels: not labels))
    """Human labels of the case and its metrics, from the run store (``agentevals labels``); left out of the
    document when there are none."""
    invocation_spans: SkipJsonSchema[list[Optional[SpanRef]]] = Field(default_factory=new_list, exclude=True)
    """The span that delimits each invocation (in ``user_contents`` order), for parenting results
    (``--emit-otel``). Internal: not part of the ``-o json`` document."""
    trace_sources: SkipJsonSchema[list[str]] = Field(default_factory=new_list, exclude=True)
    """The source of each trace (in ``trace_ids`` order), for ``--write-back``. Internal: not part of the
    ``-o json`` document (``sources`` lists them without repeats)."""
    _transcript: list[dict[str, Any]] = PrivateAttr(default_factory=new_list)
    """The conversation, compact (user text, tool calls, response per turn), for the HTML report and the
    run store; not part of the JSON document."""
    _evaluator_rows: Optional[list[int]] = PrivateAttr(default=None)
    """How many of ``metrics`` each evaluator produced, in config order (set once the evaluators ran)."""

    if not _EXCLUDE_IF:  # pydantic before 2.12: the same, at about twice the cost of a dump
        @model_serializer(mode="wrap")
        def _leave_out_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
            data: dict[str, Any] = handler(self)
            if self.provenance is None:
                data.pop("provenance", None)
            if not self.labels:
                data.pop("labels", None)
            return data


class InputError(BaseModel):
    """A file that could not be read; the rest of the run went on."""

    source: str
    error: str


class RunResult(BaseModel):
    """The whole run."""

    model_config = ConfigDict(**ATTRIBUTE_DOCS)

    schema_version: str = RESULT_SCHEMA_VERSION
    agentevals_version: str = ""
    # In output order: a list, or the engine's ``results.cases.CaseList`` (spills big runs to disk).
    cases: Sequence[CaseResult] = Field(default_factory=new_list)
    input_errors: list[InputError] = Field(default_factory=new_list)
    repetitions: list[dict[str, Any]] = Field(default_factory=new_list)
    """Per eval case repetition statistics (n, mean, std, pass rate, pass@k, pass^k)."""
    notes: list[str] = Field(default_factory=new_list)
    """Run-level messages (e.g. why nothing was evaluated)."""
    aborted: Optional[str] = None
    """Set when the run stopped early (fail_on_evaluation_error, or interrupted by a signal)."""
    run_id: Optional[str] = None
    """The run's id in the run store (``agentevals runs show RUN``); None when the run was not stored."""
    started_at: Optional[str] = None
    """When the run started (ISO 8601, UTC)."""
    finished_at: Optional[str] = None
    """When the run ended (ISO 8601, UTC)."""
    _planned: Optional[int] = PrivateAttr(default=None)
    _planned_estimated: bool = PrivateAttr(default=False)

    @field_serializer("cases", mode="wrap")
    def _serialize_cases(self, cases: Any, handler: SerializerFunctionWrapHandler) -> Any:
        # The engine fills ``cases`` with a ``results.cases.CaseList`` (it spills big runs to disk).
        return handler(cases if isinstance(cases, list) else list(cases))

    @property
    def planned(self) -> Optional[int]:
        """How many cases the run will emit, while it runs (progress bars use it): None until the engine has
        read some input, then an estimate (``planned_estimated``) that follows the reading, exact once the
        whole input has been read. Not part of the JSON report (``len(cases)`` is, at the end)."""
        return self._planned

    @property
    def planned_estimated(self) -> bool:
        """Whether ``planned`` is still an estimate (the input is being read)."""
        return self._planned_estimated

    def counts(self) -> dict[str, int]:
        """Metric rows by status; rows skipped before they ran (sampled or filtered out, over budget) are
        counted under their kind (``sampled_out``, …), never as NOT_EVALUATED: ``--strict`` ignores them."""
        counts = {**{s.value: 0 for s in Status}, **dict.fromkeys(SKIP_KINDS, 0)}
        for per in self._tally()[1].values():
            for status, n in per.items():
                counts[status] += n
        return counts

    def _tally(self) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
        # A CaseList keeps these counts as cases are appended: no pass over cases spilled to disk.
        tally = getattr(self.cases, "tally", None)
        return tally() if tally is not None else tally_statuses(self.cases)

    def totals(self, *, strict: bool = False) -> dict[str, Any]:
        """Cases and metric rows counted apart, with pass rates (see ``pass_rate``).

        ``{"cases": {"total", "PASSED", "FAILED", ...}, "results": {...}, "pass_rate": r,
        "metrics": {name: {"passed", "evaluated", "pass_rate"}}}``
        """
        case_counts, metric_counts = self._tally()
        return tally_totals(case_counts, metric_counts, strict=strict)

    def exit_code(self, *, strict: bool = False) -> int:
        """0 all passed; 1 any FAILED/ERROR, an unreadable input, or nothing evaluated at all.

        Informational metrics count as evaluated (they report values and never fail), so a run of
        only ``token_usage_v1`` exits 0; a run where everything is NOT_EVALUATED exits 1.
        """
        counts = self.counts()
        if self.aborted or self.input_errors or counts["FAILED"] or counts["ERROR"]:
            return 1
        if counts["PASSED"] == 0 and counts["INFORMATIONAL"] == 0:
            return 1
        if strict and counts["NOT_EVALUATED"]:
            return 1
        return 0


def case_status(case: CaseResult) -> Status:
    """One status for a case: ERROR if any row errored, else FAILED if any failed, else PASSED if any
    passed, else INFORMATIONAL if any row is informational, else NOT_EVALUATED."""
    present = {m.status for m in case.metrics}
    for status in _CASE_STATUS_ORDER:
        if status in present:
            return status
    return Status.NOT_EVALUATED


# Read once: an enum member's attribute (``Status.ERROR``) and its ``.value`` are descriptor calls, and the
# keys below are asked for several times per case (run totals, store rows, live counters).
_CASE_STATUS_ORDER = (Status.ERROR, Status.FAILED, Status.PASSED, Status.INFORMATIONAL)
_STATUS_VALUES = {status: status.value for status in Status}


SKIP_KINDS = ("sampled_out", "filtered_out", "over_budget")
"""Why an evaluation was not run at all (``engine.admission``): counted apart from the statuses."""


def row_key(metric: MetricResult) -> str:
    """What a row is counted as: its skip kind (``details["skipped"]``) or its status."""
    kind = metric.details.get("skipped") if metric.details else None
    return kind if kind in SKIP_KINDS else _STATUS_VALUES[metric.status]


def case_key(case: CaseResult) -> str:
    """What a case is counted as: a skip kind when every row of it was skipped (the first row's kind),
    else ``case_status``. A case scored by some evaluators and sampled out for others counts as scored."""
    keys = [row_key(m) for m in case.metrics]
    if keys and all(k in SKIP_KINDS for k in keys):
        return keys[0]
    return _STATUS_VALUES[case_status(case)]


def tally_statuses(cases: Iterable[CaseResult], case_counts: Optional[dict[str, int]] = None,
                   metric_counts: Optional[dict[str, dict[str, int]]] = None,
                   ) -> tuple[dict[str, int], dict[str, dict[str, int]]]:
    """Cases by ``case_key`` and each metric's rows by ``row_key`` (a status, or the kind of skip; added to the
    given counts, if any): what ``RunResult.totals()`` and ``counts()`` are made of."""
    case_counts = {} if case_counts is None else case_counts
    metric_counts = {} if metric_counts is None else metric_counts
    for case in cases:
        status = case_key(case)
        case_counts[status] = case_counts.get(status, 0) + 1
        for m in case.metrics:
            per = metric_counts.setdefault(m.name, {})
            key = row_key(m)
            per[key] = per.get(key, 0) + 1
    return case_counts, metric_counts


def tally_totals(case_counts: Mapping[str, int], metric_counts: Mapping[str, Mapping[str, int]], *,
                 strict: bool = False) -> dict[str, Any]:
    """``RunResult.totals()`` from counts alone: cases by status (or skip kind), and each metric's rows.

    The run store uses it to keep a live run's totals without loading its cases. ``cases`` and ``results``
    carry every status and, when not zero, each skip kind (``sampled_out``, ``filtered_out``, ``over_budget``:
    not run at all, never in a pass rate); ``total`` counts them all.
    """
    cases = {"total": sum(case_counts.values()), **{s.value: case_counts.get(s.value, 0) for s in Status}}
    results = {s.value: sum(per.get(s.value, 0) for per in metric_counts.values()) for s in Status}
    for kind in SKIP_KINDS:  # only when some evaluation was skipped: a run without sampling keeps 0.11's shape
        if case_counts.get(kind):
            cases[kind] = case_counts[kind]
        skipped_rows = sum(per.get(kind, 0) for per in metric_counts.values())
        if skipped_rows:
            results[kind] = skipped_rows
    metrics: dict[str, dict[str, Any]] = {}
    for name, per in metric_counts.items():
        evaluated = sum(n for status, n in per.items() if status not in SKIP_KINDS
                        and _counts_in_rate(Status(status), strict))
        passed = per.get(Status.PASSED.value, 0)
        metrics[name] = {"passed": passed, "evaluated": evaluated, "pass_rate": passed / evaluated if evaluated else None}
        skipped = sum(per.get(k, 0) for k in SKIP_KINDS)
        if skipped:
            metrics[name]["skipped"] = skipped
    evaluated = evaluated_cases(cases, strict=strict)
    return {"cases": cases, "results": {"total": sum(results.values()), **results},
            "pass_rate": cases["PASSED"] / evaluated if evaluated else None, "metrics": metrics}


def evaluated_cases(cases: Mapping[str, int], *, strict: bool) -> int:
    """How many cases a pass rate is over, from counts by status (``totals()["cases"]``, a stored run's too: a
    missing status counts 0): PASSED, FAILED and ERROR, and NOT_EVALUATED with ``strict``::

        evaluated_cases({"PASSED": 3, "FAILED": 1, "NOT_EVALUATED": 2}, strict=True) == 6
    """
    return sum(cases.get(s.value, 0) for s in Status if _counts_in_rate(s, strict))


def _counts_in_rate(status: Status, strict: bool) -> bool:
    """Pass rates are over PASSED, FAILED and ERROR (and NOT_EVALUATED with ``strict``)."""
    return status in (Status.PASSED, Status.FAILED, Status.ERROR) or (strict and status == Status.NOT_EVALUATED)
