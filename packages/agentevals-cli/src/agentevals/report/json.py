"""``-o json``: the RunResult as a JSON document whose shape is pinned by ``schema/run_result.v1.json``."""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from ..results import RunResult

__all__ = ["load_result_schema", "render_json", "result_json_schema"]


def result_json_schema() -> dict[str, Any]:
    """The schema as generated from the models (``tools/sync_schema.py`` writes it to the package)."""
    schema = RunResult.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": "https://agentevals.dev/schema/run_result.v1.json", **schema}


def load_result_schema() -> dict[str, Any]:
    """The shipped schema file."""
    return json.loads(resources.files(__package__).joinpath("schema", "run_result.v1.json").read_text("utf-8"))


def render_json(run: RunResult, *, color: bool = False) -> str:
    return json.dumps(run.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"
