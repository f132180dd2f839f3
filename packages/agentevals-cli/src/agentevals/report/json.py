"""``-o json``: the RunResult as a JSON document whose shape is pinned by ``schema/run_result.v1.json``.

The document also carries agentevals-cli 0.11's keys (``traces``, ``errors``, ``performance_metrics``; see
``report.legacy``), so scripts written for 0.11 keep reading it.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any, Optional

from ..results import RunResult
from ._context import ReportContext
from .formats import ReportFormat
from .legacy import LegacyDocument, legacy_keys

__all__ = ["JsonReport", "load_result_schema", "render_json", "result_json_schema"]


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
    doc = {**run.model_dump(mode="json"), **legacy_keys(run)}
    doc.update(run_extras(run, context))
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def run_extras(run: RunResult, context: Optional[ReportContext] = None) -> dict[str, Any]:
    """Keys added beside the model's: ``totals`` (cases and rows counted apart, pass rates), ``complete``,
    and when asked for, ``baseline`` (regressions, fixes, deltas) and ``gates``."""
    extras: dict[str, Any] = {"totals": run.totals(strict=context.strict if context else False),
                              "complete": not (context and context.incomplete)}
    if context and context.incomplete:
        extras["incomplete"] = context.incomplete
    if context and context.comparison is not None:
        extras["baseline"] = context.comparison.as_dict()
    if context and context.gates is not None:
        extras["gates"] = {"exit_code": context.gates.exit_code, "failed": context.gates.failures,
                           "met": context.gates.passed}
    return extras


class JsonReport(ReportFormat):
    """The versioned JSON result document (``-o json``)."""

    name = "json"

    def render(self, run: RunResult, *, color: bool = False, context: Optional[ReportContext] = None) -> str:
        return render_json(run, color=color, context=context)
