"""``-o json``: the RunResult as a JSON document whose shape is pinned by ``schema/run_result.v1.json``.

The document also carries agentevals-cli 0.11's keys (``traces``, ``errors``, ``performance_metrics``; see
``report.legacy``), so scripts written for 0.11 keep reading it.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ..results import RunResult
from .legacy import LegacyDocument, legacy_keys

__all__ = ["load_result_schema", "render_json", "result_json_schema"]


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
    return json.loads(resources.files(__package__).joinpath("schema", "run_result.v1.json").read_text("utf-8"))


def render_json(run: RunResult, *, color: bool = False) -> str:
    document = {**run.model_dump(mode="json"), **legacy_keys(run)}
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"
