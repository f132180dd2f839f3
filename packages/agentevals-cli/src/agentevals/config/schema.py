"""JSON Schema of eval_config.yaml, built from every registered evaluator type's config model."""

from __future__ import annotations

from typing import Any

from ..evaluators import EVALUATOR_TYPES
from ..evaluators.agentv._vocabulary import current_format_schema
from .loader import RunSettings

__all__ = ["config_json_schema"]


def config_json_schema() -> dict[str, Any]:
    """A draft 2020-12 schema; ``evaluators`` items are one of the types, selected by ``type``."""
    defs: dict[str, Any] = {}
    branches = []
    for type_name in EVALUATOR_TYPES.names(aliases=True):  # every spelling validates in editors
        cls = EVALUATOR_TYPES.get(type_name)
        schema = cls.Config.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(schema.pop("$defs", {}))
        schema.setdefault("properties", {})["type"] = {"const": type_name}
        schema["required"] = sorted({*schema.get("required", []), "type"})
        current_format_schema(type_name, schema)  # AgentV 5's forms of script, llm-rubric, skill-used, …
        title = f"{type_name}_evaluator"
        defs[title] = schema
        branches.append({"if": {"properties": {"type": {"const": type_name}}}, "then": {"$ref": f"#/$defs/{title}"}})
    settings = RunSettings.model_json_schema()
    settings["properties"]["evaluators"] = {
        "type": "array",
        "description": "The evaluator entries, in output order.",
        "items": {
            "type": "object",
            "required": ["type"],  # `name` is required per type: AgentV assertions derive it
            "properties": {"type": {"enum": EVALUATOR_TYPES.names(aliases=True)}},
            "allOf": branches,
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://agentevals.dev/schema/eval_config.json",
        "title": "agentevals eval_config.yaml",
        **settings,
        "$defs": {**settings.get("$defs", {}), **defs},
    }
