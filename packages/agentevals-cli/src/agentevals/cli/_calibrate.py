"""What ``agentevals calibrate`` does: run one evaluator on traces (repeated, probed), set its verdicts beside human
labels, report the figures of ``results.calibration`` and record them in the run store.

    labels (a labels file, or a stored run's labels) → the evaluator through the run engine, ``repeat`` times
    → each probe once (``RunOptions.judge_probe``) → figures → the run store → the exit code

Example:
    ```python
    request = CalibrateRequest(inputs=["traces.json"], config_path="eval_config.yaml", evaluator="judge",
                               labels=Path("labels.csv"), repeat=3, probes=("verbosity",), min_kappa=0.6)
    document, code = calibrate(request)        # the -o json document, and 0, or 1 below --min-kappa
    ```
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..core._registry import did_you_mean
from ..engine.options import PROBES, JudgeProbe, ProbeKind
from ..errors import ConfigError
from ..results import CaseResult, MetricResult, RunResult, Status
from ..results.calibration import (
    CALIBRATION_SCHEMA_VERSION,
    PROBE_TOLERANCE,
    Call,
    agreement_figures,
    probe_figures,
)

if TYPE_CHECKING:
    from ..config import LoadedEvaluator
    from ..store import RunStore

__all__ = ["CalibrateRequest", "calibrate", "parse_probes"]

AGREEMENT_METRIC = "calibration.agreement:{}"
"""Stored per labelled case: PASSED when the evaluator agrees with the human (``runs trend`` shows the rate)."""
PROBED_TYPES = ("llm_judge", "rubric")
"""Evaluator types whose prompts ``RunOptions.judge_probe`` changes (``evaluators.agentv._judge.probe_prompt``)."""
KAPPA_METRIC = "calibration.kappa:{}"
"""Stored once per calibration (case ``calibration``): score = κ (``runs trend``'s mean score is κ over time)."""


@dataclass
class CalibrateRequest:
    """Everything ``agentevals calibrate`` was asked."""

    inputs: list[str]
    config_path: str
    evaluator: str
    labels: Optional[Path] = None
    run: Optional[str] = None
    """Use the labels of this stored run (id, prefix or latest) instead of a file."""
    eval_set: Optional[str] = None
    trace_format: Optional[str] = None
    repeat: int = 1
    probes: tuple[ProbeKind, ...] = ()
    min_kappa: Optional[float] = None
    store: Optional[str] = None
    no_store: bool = False
    seed: int = 0


def parse_probes(text: Optional[str]) -> tuple[ProbeKind, ...]:
    """``position,verbosity`` → the probe names, checked (``ConfigError`` naming the unknown one)."""
    out: list[ProbeKind] = []
    for name in (text or "").split(","):
        name = name.strip()
        if not name:
            continue
        if name not in PROBES:
            raise ConfigError(f"--probes: unknown probe {name!r}{did_you_mean(name, PROBES)} "
                              f"(probes: {', '.join(PROBES)})")
        out.append(name)
    return tuple(dict.fromkeys(out))


@dataclass
class _Labels:
    by_case: dict[str, list[tuple[Optional[str], Optional[float]]]]
    paraphrases: dict[str, str]
    source: str


def _labels_from_file(path: Path, evaluator: str) -> _Labels:
    from ..store._label_files import read_labels_file

    by_case: dict[str, list[tuple[Optional[str], Optional[float]]]] = {}
    paraphrases: dict[str, str] = {}
    for line, row in read_labels_file(path, required=("case",), extra=("paraphrase",)):
        if row.get("metric") and row["metric"] != evaluator:
            continue
        case = str(row["case"]).strip()
        verdict = (row.get("verdict") or "").strip().lower() or None
        if verdict not in (None, "pass", "fail"):
            raise ConfigError(f"{path}:{line}: verdict {row['verdict']!r}: expected pass or fail")
        score: Optional[float] = None
        if row.get("score"):
            try:
                score = float(str(row["score"]))
            except ValueError:
                score = -1.0
            if not 0.0 <= score <= 1.0:
                raise ConfigError(f"{path}:{line}: score {row['score']!r}: expected a number in [0, 1]")
        if verdict is not None or score is not None:
            by_case.setdefault(case, []).append((verdict, score))
        if row.get("paraphrase"):
            paraphrases[case] = str(row["paraphrase"])
    return _Labels(by_case, paraphrases, str(path))


def _labels_from_store(db: RunStore, run: str, evaluator: str) -> _Labels:
    run_id = db.resolve(run)
    records = db.labels(run_id)
    by_case: dict[str, list[tuple[Optional[str], Optional[float]]]] = {}
    for record in records:
        label = record.label
        if label.metric is None or label.metric == evaluator:
            by_case.setdefault(record.case_id, []).append((label.verdict, label.score))
    return _Labels(by_case, {}, f"run {run_id}")


def _human(labels: _Labels, thresholds: dict[str, Optional[float]]) -> tuple[dict[str, Call], list[str]]:
    """Per case: the majority verdict of its labels (a score-only label: against the evaluator's threshold) and
    their mean score; cases whose labels tie are left out (returned second)."""
    out: dict[str, Call] = {}
    tied = []
    for case, given in labels.by_case.items():
        threshold = thresholds.get(case)
        votes = []
        for v, s in given:
            if v is not None:
                votes.append(v)
            elif s is not None and threshold is not None:
                votes.append("pass" if s >= threshold else "fail")
        passes = sum(v == "pass" for v in votes)
        verdict = None
        if votes and passes * 2 != len(votes):
            verdict = "pass" if passes * 2 > len(votes) else "fail"
        elif votes:
            tied.append(case)
        scores = [s for _, s in given if s is not None]
        out[case] = Call(verdict, sum(scores) / len(scores) if scores else None)
    return out, sorted(tied)


def _row(case: CaseResult, name: str) -> Optional[MetricResult]:
    return next((m for m in case.metrics if m.name == name), None)


def _calls(run: RunResult, name: str) -> dict[str, Call]:
    out: dict[str, Call] = {}
    for case in run.cases:
        row = _row(case, name)
        if row is None or case.case_id in out:
            continue
        verdict = "pass" if row.status == Status.PASSED else "fail" if row.status == Status.FAILED else None
        out[case.case_id] = Call(verdict, row.score)
    return out


def _usage(runs: Sequence[RunResult], name: str) -> dict[str, Any]:
    from ..evaluators.usage import JudgeUsage

    usage = JudgeUsage()
    for run in runs:
        for case in run.cases:
            row = _row(case, name)
            if row is not None and row.details.get("judge_usage"):
                usage.add(row.details["judge_usage"])
    return usage.as_json()


def _problems(run: RunResult, name: str) -> dict[str, Any]:
    """ERROR and NOT_EVALUATED rows of the evaluator: how many, and the first cause (no verdict to compare)."""
    rows = [r for c in run.cases if (r := _row(c, name)) is not None and r.status in (Status.ERROR, Status.NOT_EVALUATED)]
    first = next((r.error or r.reason for r in rows if r.error or r.reason), None)
    return {"count": len(rows), "first": first}


def _select(evaluators: Sequence[LoadedEvaluator], name: str, config: str) -> LoadedEvaluator:
    names = [e.evaluator.config.name for e in evaluators]
    for item in evaluators:
        if item.evaluator.config.name == name:
            return item
    raise ConfigError(f"--evaluator {name!r}: no such evaluator in {config}{did_you_mean(name, names)} "
                      f"(evaluators: {', '.join(names) or 'none'})")


def calibrate(request: CalibrateRequest) -> tuple[dict[str, Any], int]:
    """Run, compare, probe, record: the ``-o json`` document and the exit code (1: no case compared, κ below
    ``min_kappa``, κ undefined with a ``min_kappa``, or a probe beyond its tolerance)."""
    from ..api import prepare_run
    from ._store import open_store

    evaluators, options, eval_set = prepare_run(config=request.config_path, eval_set=request.eval_set)
    chosen = _select(evaluators, request.evaluator, request.config_path)
    name = chosen.evaluator.config.name
    if request.probes and chosen.evaluator.name not in PROBED_TYPES:
        raise ConfigError(f"--probes: evaluator '{name}' is of type {chosen.evaluator.name}; the probes change the "
                          f"prompts of {' and '.join(PROBED_TYPES)} judges only")
    if request.labels is None and request.run is None:
        raise ConfigError("calibrate needs human labels: --labels FILE or --run RUN")
    # Opened before the judge is asked anything: a store that cannot be opened costs no judge call.
    db = open_store(request.store) if request.run is not None or not request.no_store else None
    try:
        return _calibrate(request, db, chosen, options, eval_set, name)
    finally:
        if db is not None:
            db.close()


def _calibrate(request: CalibrateRequest, db: Optional[RunStore], chosen: Any, options: Any, eval_set: Any,
               name: str) -> tuple[dict[str, Any], int]:
    from ..engine.run import run_evaluation, run_sync

    if request.labels is not None:
        labels = _labels_from_file(request.labels, name)
    else:
        assert db is not None and request.run is not None
        labels = _labels_from_store(db, request.run, name)
    if not labels.by_case:
        raise ConfigError(f"{labels.source}: no label (verdict or score) of evaluator '{name}' or of whole cases")
    if "paraphrase" in request.probes and not labels.paraphrases:
        raise ConfigError(f"--probes paraphrase: {labels.source} has no 'paraphrase' column with text "
                          "(the restated answer of a case)")
    trace_format = request.trace_format or options.trace_format

    def once(probe: Optional[JudgeProbe] = None) -> RunResult:
        run_options = replace(options, judge_probe=probe, notes=list(options.notes))
        return run_sync(run_evaluation(request.inputs, [chosen], eval_set=eval_set, options=run_options,
                                       trace_format=trace_format))

    runs = [once() for _ in range(request.repeat)]
    first = runs[0]
    thresholds = {c.case_id: r.threshold for c in first.cases if (r := _row(c, name)) is not None}
    human, tied = _human(labels, thresholds)
    calls = [_calls(r, name) for r in runs]
    if not any(c in calls[0] for c in human):
        seen = ", ".join(list(calls[0])[:3]) or "none"
        unread = f"; not read: {first.input_errors[0].error}" if first.input_errors else ""
        raise ConfigError(f"{labels.source}: no labelled case is a case of these traces (labels name cases as "
                          f"'agentevals run' prints them; these traces' cases: {seen}{', …' if len(calls[0]) > 3 else ''})"
                          f"{unread}")
    document: dict[str, Any] = {
        "schema_version": CALIBRATION_SCHEMA_VERSION,
        "evaluator": name,
        "type": chosen.evaluator.config.type,
        "labels": {"source": labels.source, "cases": len(labels.by_case), "tied": tied},
        "cases": len(calls[0]),
        "evaluator_problems": _problems(first, name),
        **agreement_figures(human, calls, seed=request.seed),
    }
    usage = {"calibration": _usage(runs, name)}
    probes = []
    for kind in request.probes:
        probed = once(JudgeProbe(kind, dict(labels.paraphrases) if kind == "paraphrase" else {}))
        base = calls[0]
        if kind == "paraphrase":
            base = {c: v for c, v in base.items() if c in labels.paraphrases}
        probes.append(probe_figures(kind, base, _calls(probed, name), seed=request.seed))
        usage[f"probe:{kind}"] = _usage([probed], name)
    document["probes"] = probes
    document["probe_tolerance"] = dict(PROBE_TOLERANCE)
    usage["total"] = _total(usage.values())
    document["judge_usage"] = usage
    kappa = document["kappa"]["value"]
    code = 0
    if request.min_kappa is not None:
        passed = kappa is not None and kappa >= request.min_kappa
        document["gate"] = {"min_kappa": request.min_kappa, "passed": passed}
        code = 0 if passed else 1
    if any(p["fails"] for p in probes) or document["n"] == 0:
        code = 1
    document["run_id"] = None if request.no_store or db is None else _record(db, request, first, human, calls[0],
                                                                             document, code)
    document["exit_code"] = code
    return document, code


def _total(parts: Any) -> dict[str, Any]:
    total: dict[str, Any] = {}
    for part in parts:
        for key, value in part.items():
            total[key] = round(total.get(key, 0) + value, 8) if isinstance(value, float) else total.get(key, 0) + value
    return total


def _record(db: RunStore, request: CalibrateRequest, first: RunResult, human: dict[str, Call],
            calls: dict[str, Call], document: dict[str, Any], code: int) -> str:
    """Store the evaluator's run with an agreement row per labelled case and a ``calibration`` case whose one row
    carries κ: ``runs trend calibration.kappa:NAME`` is κ over time, ``calibration.agreement:NAME`` the
    agreement rate."""
    from ..results import utc_now
    from ..store import new_run_id
    from ..store._recording import run_meta

    name = document["evaluator"]
    cases = []
    for case in first.cases:
        h, j = human.get(case.case_id), calls.get(case.case_id)
        extra = []
        if h is not None and j is not None and h.verdict is not None and j.verdict is not None:
            agree = h.verdict == j.verdict
            extra.append(MetricResult(name=AGREEMENT_METRIC.format(name), type="calibration",
                                      status=Status.PASSED if agree else Status.FAILED, score=float(agree),
                                      details={"human": h.verdict, "evaluator": j.verdict}))
        cases.append(case.model_copy(update={"metrics": [*case.metrics, *extra]}))
    kappa = document["kappa"]
    gate = document.get("gate")
    status = Status.INFORMATIONAL if gate is None else Status.PASSED if gate["passed"] else Status.FAILED
    cases.append(CaseResult(case_id="calibration", trace_ids=[], sources=[], metrics=[MetricResult(
        name=KAPPA_METRIC.format(name), type="calibration", status=status, score=kappa["value"],
        threshold=request.min_kappa, value=kappa["value"],
        details={"kappa_interval": kappa["interval"], "agreement": document["agreement"], "n": document["n"],
                 "flip_rate": document["self_consistency"]["flip_rate"],
                 "probes": {p["probe"]: {"fails": p["fails"], "verdict_change_rate": p["verdict_change_rate"]}
                            for p in document["probes"]}})]))
    run_id = new_run_id()
    stored = first.model_copy(update={"cases": cases, "run_id": run_id, "finished_at": utc_now()})
    meta = run_meta(options={"calibrate": {"evaluator": name, "labels": document["labels"]["source"],
                                           "repeat": request.repeat, "probes": list(request.probes),
                                           "min_kappa": request.min_kappa}},
                    config_path=request.config_path, eval_set_path=request.eval_set)
    db.begin_run(run_id, started_at=first.started_at or utc_now(), **meta)
    for index, case in enumerate(cases):
        db.record_case(run_id, index, case, {})
    db.finish_run(stored, status="completed", exit_code=code, totals=stored.totals())
    return run_id
