"""``-o junit``: JUnit XML as CI systems read it (one testcase per case × metric).

The shape follows the Ant JUnit schema that Jenkins, GitLab, GitHub test reporters and Azure read: a
``testsuites`` root, one ``testsuite`` per metric (with ``properties``, ``system-out``, ``system-err``),
a ``failure`` for FAILED (message: score vs threshold and the reason; text: the trajectory diff),
an ``error`` for ERROR and ``skipped`` for NOT_EVALUATED. An incomplete run says so in every suite's
``system-err`` and in the ``incomplete`` property. Human labels (``runs show`` of a labelled run) are
``human`` (the metric's) and ``human_case`` (the whole case's) properties of a testcase, ``≠`` marking one
that disagrees with the evaluator, and ``human:`` lines in the failure text.
"""

from __future__ import annotations

import re
import socket
from typing import Optional
from xml.etree import ElementTree as ET

from ..results import CaseResult, MetricResult, RunResult, Status
from ..results.labels import human_cell, human_text, label_disagrees
from ._context import ReportContext
from ._format import fmt_num, mismatch_lines
from .formats import ReportFormat

__all__ = ["JunitReport", "render_junit"]

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _clean(text: str) -> str:
    return _INVALID_XML.sub("\ufffd", text)


def _timestamp(iso: Optional[str]) -> str:
    """``2026-01-02T03:04:05`` (the schema's xs:dateTime without zone)."""
    return (iso or "1970-01-01T00:00:00").split(".")[0].rstrip("Z")


def _details(case: CaseResult, m: MetricResult) -> str:
    lines = [f"case {case.case_id}" + (f" (eval case {case.eval_id})" if case.eval_id else ""),
             f"sources: {', '.join(case.sources)}"]
    if m.score is not None:
        lines.append(f"score {fmt_num(m.score)}, threshold {fmt_num(m.threshold)}")
    for text in (m.error, m.reason):
        if text:
            lines.append(text)
    lines.extend(mismatch_lines(m))
    lines.extend(f"miss: {miss}" for miss in m.misses[:10])
    lines.extend(f"human: {human_text(x)}" + (" (≠ evaluator)" if label_disagrees(x, case) else "")
                 for x in case.labels if x.metric in (None, m.name))
    if m.reasoning:
        lines.append(f"reasoning: {m.reasoning}")
    return _clean("\n".join(lines))


def _message(m: MetricResult) -> str:
    why = m.error or m.reason or ""
    if m.status == Status.FAILED and m.score is not None:
        why = f"score {fmt_num(m.score)} < threshold {fmt_num(m.threshold)}" + (f": {why}" if why else "")
    return _clean(why or m.status.value)


def render_junit(run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    suites: dict[str, list[tuple[CaseResult, MetricResult]]] = {}
    for case in run.cases:
        for m in case.metrics:
            suites.setdefault(m.name, []).append((case, m))
    incomplete = context.incomplete if context else None
    root = ET.Element("testsuites", name="agentevals")
    totals: dict[str, float] = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0, "time": 0.0}
    host = socket.gethostname() or "localhost"
    for number, (name, rows) in enumerate(suites.items()):
        counts: dict[str, float] = {"tests": len(rows), "failures": sum(m.status == Status.FAILED for _, m in rows),
                  "errors": sum(m.status == Status.ERROR for _, m in rows),
                  "skipped": sum(m.status == Status.NOT_EVALUATED for _, m in rows),
                  "time": sum((m.duration_ms or 0.0) for _, m in rows) / 1000}
        for key in totals:
            totals[key] += counts[key]
        suite = ET.SubElement(root, "testsuite", {
            "name": _clean(name), "package": "agentevals", "id": str(number), "hostname": host,
            "timestamp": _timestamp(run.started_at),
            **{k: (f"{v:.3f}" if k == "time" else str(v)) for k, v in counts.items()}})
        props = ET.SubElement(suite, "properties")
        for key, value in (("run_id", run.run_id), ("agentevals_version", run.agentevals_version),
                           ("incomplete", incomplete)):
            if value:
                ET.SubElement(props, "property", name=key, value=_clean(value))
        cells: list[str] = []  # each row's HUMAN cell, once: system-out below shows it again
        for case, m in rows:
            cell_of_row = human_cell(m, case)
            cells.append(cell_of_row)
            label = case.case_id + (f" [{case.eval_id}]" if case.eval_id else "")
            testcase = ET.SubElement(suite, "testcase", name=_clean(label), classname=_clean(f"agentevals.{name}"),
                                     time=f"{(m.duration_ms or 0.0) / 1000:.3f}")
            human = [(key, cell) for key, cell in (("human", cell_of_row),
                                                   ("human_case", human_cell(None, case))) if cell]
            if human:  # the person's verdict beside the machine's, ≠ where they disagree (as `runs show`)
                props_of_case = ET.SubElement(testcase, "properties")
                for key, cell in human:
                    ET.SubElement(props_of_case, "property", name=key, value=_clean(cell))
            if m.status == Status.FAILED:
                ET.SubElement(testcase, "failure", message=_message(m), type="FAILED").text = _details(case, m)
            elif m.status == Status.ERROR:
                ET.SubElement(testcase, "error", message=_message(m), type="ERROR").text = _details(case, m)
            elif m.status == Status.NOT_EVALUATED:
                ET.SubElement(testcase, "skipped", message=_message(m))
        ET.SubElement(suite, "system-out").text = _clean("\n".join(
            f"{case.case_id} {m.name} {m.status.value} score={fmt_num(m.score)}" + (f" human={cell}" if cell else "")
            for (case, m), cell in zip(rows, cells, strict=True)))
        ET.SubElement(suite, "system-err").text = _clean(f"INCOMPLETE: {incomplete}" if incomplete else "")
    for key, total in totals.items():
        root.set(key, f"{total:.3f}" if key == "time" else str(total))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


class JunitReport(ReportFormat):
    """JUnit XML for CI test tabs (``-o junit``)."""

    name = "junit"

    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        return render_junit(run, color=color, context=context)
