"""``-o json``: the RunResult as a JSON document whose shape is pinned by ``schema/run_result.v1.json``.

The document also carries agentevals-cli 0.11's keys (``traces``, ``errors``, ``performance_metrics``; see
``report.legacy``), so scripts written for 0.11 keep reading it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any, Optional

from ..core._json import dumps as json_bytes
from ..results import RunResult
from ._context import ReportContext, intervals_of
from .formats import ReportFormat
from .legacy import LegacyDocument, legacy_keys, legacy_trace

__all__ = ["JsonReport", "dumps", "json_chunks", "load_result_schema", "render_json", "result_json_schema"]


def result_json_schema() -> dict[str, Any]:
    """The schema as generated from the models (``tools/sync_schema.py`` writes it to the package)."""
    schema = RunResult.model_json_schema()
    legacy = LegacyDocument.model_json_schema()
    schema["$defs"] = {**schema.get("$defs", {}), **legacy.pop("$defs", {})}
    schema["properties"] = {**schema["properties"], **legacy["properties"]}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://agentevals.dev/schema/run_result.v1.json", **schema}


def load_result_schema() -> dict[str, Any]:
    """The shipped schema file."""
    schema: dict[str, Any] = json.loads(
        resources.files(__package__).joinpath("schema").joinpath("run_result.v1.json").read_text("utf-8"))
    return schema


def render_json(run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
    return "".join(json_chunks(run, context=context))


_STREAMED = ("cases", "traces")
"""The document's lists with one entry per case: written case by case (a 100,000-case run never holds its
whole document), the rest of the document in one ``dumps``."""
_MARK = "\x00agentevals-stream\x00"


def dumps(value: Any) -> str:
    """``value`` as the report writes JSON: orjson, indented by two spaces, UTF-8 as it is (a tenth of the
    stdlib's time per case). Numbers read back the same (``1e-05`` is written ``0.00001``); NaN and infinities
    are written null (the stdlib's ``NaN`` is no JSON). What orjson does not encode (an integer past 64 bits, a
    key that is not a string) is written by the stdlib, as ``json.dumps(value, indent=2, ensure_ascii=False)``.
    """
    return json_bytes(value, indent=True).decode()


def json_chunks(run: RunResult, *, context: Optional[ReportContext] = None) -> Iterator[str]:
    """The ``-o json`` document in pieces, byte for byte ``dumps(doc)``: the per-case lists are dumped one
    case at a time and indented as the whole dump would (indentation depends only on nesting), the cases
    read once each (a spilled ``CaseList`` from disk).
    Pieces split only between JSON values, never inside a string (redaction applies piece by piece)."""
    dumped = run.model_dump(mode="json", exclude={"cases"})
    doc = {key: _MARK if key == "cases" else dumped[key] for key in RunResult.model_fields
           if key == "cases" or key in dumped}
    doc.update(legacy_keys(run, traces=False), traces=_MARK)
    doc.update(run_extras(run, context))
    text = dumps(doc) + "\n"
    marker = dumps(_MARK)
    for key in _STREAMED:
        line = f'  "{key}": {marker}'
        before, _, text = text.partition(line)
        yield before
        yield from _streamed_list(key, run)
    yield text


def _streamed_list(key: str, run: RunResult) -> Iterator[str]:
    if not run.cases:
        yield f'  "{key}": []'
        return
    yield f'  "{key}": [\n'
    for i, case in enumerate(run.cases):
        item = case.model_dump(mode="json") if key == "cases" else legacy_trace(case)
        body = dumps(item).replace("\n", "\n    ")
        yield f",\n    {body}" if i else f"    {body}"
    yield "\n  ]"


def run_extras(run: RunResult, context: Optional[ReportContext] = None) -> dict[str, Any]:
    """Keys added beside the model's: ``totals`` (cases and rows counted apart, pass rates), ``intervals``
    (95% intervals of those pass rates and of each metric's mean score: ``results.intervals``), ``complete``,
    and when asked for, ``baseline`` (regressions, fixes, deltas), ``gates``, ``disagreements`` (human labels
    against the evaluators, for a labelled stored run) and ``sources`` (what a stored run read)."""
    strict = context.strict if context else False
    extras: dict[str, Any] = {"totals": run.totals(strict=strict), "intervals": intervals_of(run, context),
                              "complete": not (context and context.incomplete)}
    if context and context.incomplete:
        extras["incomplete"] = context.incomplete
    if context and context.comparison is not None:
        extras["baseline"] = context.comparison.as_dict()
    if context and context.disagreements is not None:
        extras["disagreements"] = [d.as_dict() for d in context.disagreements]
    if context and context.sources is not None:
        extras["sources"] = context.sources
    if context and context.gates is not None:
        extras["gates"] = {"exit_code": context.gates.exit_code, "failed": context.gates.failures,
                           "met": context.gates.passed}
    return extras


class JsonReport(ReportFormat):
    """The versioned JSON result document (``-o json``)."""

    name = "json"

    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        return render_json(run, color=color, context=context)

    def chunks(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None
               ) -> Iterator[str]:
        return json_chunks(run, context=context)
