"""AgentV's assertion vocabularies after v2.19, mapped onto the v2.19 entry with the same meaning.

* the grader rename (AgentV 3–4): ``code-grader`` / ``llm-grader`` for ``code-judge`` / ``llm-judge``;
* the promptfoo-aligned format (AgentV 5): ``metric:`` labels an assertion and ``value:`` carries its
  argument; ``script`` is a code grader, ``llm-rubric`` / ``agent-rubric`` an LLM rubric (one text or a list
  of items), ``skill-used`` / ``not-skill-used`` a skill trigger, ``assert-set`` a composite.

What AgentV 5's parser (``grader-parser.ts``) does with ``script`` and ``llm-rubric``, and so do we:

* ``script``: the command is ``command:`` (an argv list, or a string run by the shell); ``description:``
  says what it checks; ``value:`` is not the command: like any key the parser does not know, it reaches the
  script in the payload's ``config`` (``config.value``; the entry's own ``config:`` wins on a clash);
  ``script:`` is refused (AgentV 5: "'script' field has been removed. Use 'command' instead.").
* ``llm-rubric``: ``value:`` text is the grading criteria (the ``{{criteria}}`` of the default grader
  prompt: the judge scores the answer 0-1 against it); a list of texts and/or items
  (``{id, outcome | criteria, weight, required, min_score, score_ranges}``) or one such item is a rubric
  (a text item is a required checklist item ``rubric-<n>``); text with an entry-level ``score_ranges:`` is
  one 0-10 item. ``min_score`` (0-1) gates a score-range item. ``criteria:``, ``rubrics:`` and
  ``rubric_item:`` beside ``llm-rubric`` are refused ("Use 'value' instead."). ``prompt:`` still replaces
  the template.

Used by the evaluator configs (so these types run from eval_config.yaml) and by the EVAL.yaml readers
(``agentevals transpile``, ``agentevals eval prompt``).

    >>> normalize_assertion({"type": "skill-used", "value": "pdf"})
    [{'type': 'skill-trigger', 'skill': 'pdf', 'should_trigger': True}]
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["CURRENT_TYPES", "RUBRIC_TYPES", "check_current_fields", "current_format_schema", "normalize_assertion",
           "rubric_texts"]

_RENAMED = {
    "code-grader": "code-judge", "code_grader": "code-judge",
    "llm-grader": "llm-judge", "llm_grader": "llm-judge",
    "assert-set": "composite", "assert_set": "composite",
}
_RUBRIC = ("llm-rubric", "agent-rubric")
_SKILL = {"skill-used": True, "not-skill-used": False}
_REMOVED_RUBRIC_FIELDS = ("criteria", "rubric_item", "rubricItem", "rubrics")
"""Fields AgentV 5 refuses on an ``llm-rubric`` ("Use 'value' instead")."""
_ITEM_GATES = ("weight", "required", "min_score", "score_ranges")
"""Entry fields AgentV copies into the one rubric item made from a text ``value`` with ``score_ranges``."""

RUBRIC_TYPES = _RUBRIC
CURRENT_TYPES = frozenset({*_RENAMED, "script", *_RUBRIC, *_SKILL})
"""Assertion types that exist only in AgentV's formats after v2.19."""


def _structured(item: Any) -> bool:
    """AgentV's ``isStructuredRubricObject``: an item with an outcome or score ranges (or criteria + gates)."""
    if not isinstance(item, dict):
        return False
    if isinstance(item.get("outcome"), str) or "score_ranges" in item:
        return True
    return isinstance(item.get("criteria"), str) and any(
        k in item for k in ("id", "weight", "required", "min_score", "operator"))


def _rubric_items(value: Any, entry: dict[str, Any]) -> list[Any] | None:
    """The rubric items an ``llm-rubric`` ``value`` stands for (AgentV 5's ``normalizeStructuredRubricValue``);
    None when the value is free text (or not a rubric)."""
    if isinstance(value, list):
        if not any(isinstance(item, str) or _structured(item) for item in value):
            return None
        return [{"id": f"rubric-{n}", "outcome": item} if isinstance(item, str) else item
                for n, item in enumerate(value, start=1)]
    if isinstance(value, str):
        if "score_ranges" not in entry:
            return None
        return [{"id": "rubric-1", "outcome": value, **{k: entry[k] for k in _ITEM_GATES if k in entry}}]
    if not _structured(value):
        return None
    nested = next((value[k] for k in ("criteria", "rubrics", "rubric_item", "rubricItem") if k in value), None)
    if isinstance(nested, list):
        return [{"id": f"rubric-{n}", "outcome": item} if isinstance(item, str) else item
                for n, item in enumerate(nested, start=1)]
    return [value]


def rubric_texts(entry: dict[str, Any]) -> list[str]:
    """What AgentV 5's transpiler writes for an ``llm-rubric``: the text, or one line per item."""
    value = entry.get("value")
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list):
        return []
    texts = []
    for item in value:
        if isinstance(item, str):
            texts.append(item)
        elif isinstance(item, dict):
            text = next((item[k] for k in ("outcome", "criteria", "id") if item.get(k) is not None), None)
            if isinstance(text, str):
                texts.append(text)
    return texts


def check_current_fields(entry: dict[str, Any]) -> None:
    """Refuse what AgentV 5 refuses on its own types (raises ``ValueError`` with its advice)."""
    kind = entry.get("type")
    label = entry.get("metric", entry.get("name"))
    who = f"{kind} '{label}'" if isinstance(label, str) else str(kind)
    if kind == "script" and "script" in entry:
        raise ValueError(f"{who}: 'script' field has been removed. Use 'command' instead.")
    if kind == "script" and "command" not in entry:
        raise ValueError(f"{who} needs 'command:' (an argv list, or a string run by the shell); in AgentV 5 "
                         "'value:' is not the command but reaches the script as config.value")
    if kind in _RUBRIC:
        for field in _REMOVED_RUBRIC_FIELDS:
            if field in entry:
                raise ValueError(f"{who}: unsupported {kind} field '{field}'. Use 'value' instead.")


def normalize_assertion(entry: Any) -> list[Any]:
    """The v2.19 entries ``entry`` stands for (usually one; a ``skill-used`` list gives one per skill).

    Entries already in the v2.19 vocabulary, and anything that is not a mapping, are returned unchanged.
    """
    if not isinstance(entry, dict):
        return [entry]
    kind = entry.get("type")
    out: dict[str, Any] = {k: v for k, v in entry.items() if k != "metric"}
    if "metric" in entry and "name" not in entry:
        out["name"] = entry["metric"]
    elif "name" not in entry and (kind == "script" or kind in _RUBRIC):
        out["name"] = kind  # AgentV 5 names an unlabelled grader after its type
    value = entry.get("value")
    if kind == "script":
        out["type"] = "code-judge"
        if "value" in out:  # an unknown key to AgentV's script parser: passed to the script in ``config``
            own = out.get("config")
            out["config"] = {"value": out.pop("value"), **(own if isinstance(own, dict) else {})}
    elif kind in _RENAMED:  # code-grader keeps code-judge's fields (``script:`` is its alias of ``command:``)
        out["type"] = _RENAMED[kind]
        if _RENAMED[kind] == "composite" and "aggregator" not in out:
            out["aggregator"] = {"type": "assert_set"}  # AgentV 5: members' own weights, every one passing
    elif kind in _RUBRIC:
        out["type"] = "llm-judge"
        out.pop("value", None)
        items = _rubric_items(value, entry)
        if items:
            out["rubrics"] = items
            if isinstance(value, str):  # the entry's score ranges and gate went into the one item
                out.pop("score_ranges", None)
                out.pop("min_score", None)
        elif isinstance(value, str):
            out["criteria"] = value
        elif value is not None and value != []:
            out["criteria"] = json.dumps(value, ensure_ascii=False)
    elif kind in _SKILL:
        skills = value if isinstance(value, list) else [value]
        entries = []
        for skill in skills:
            name = skill.get("name", skill.get("pattern")) if isinstance(skill, dict) else skill
            entries.append({**{k: v for k, v in out.items() if k != "value"}, "type": "skill-trigger",
                            "skill": name, "should_trigger": _SKILL[kind]})
        return entries
    elif kind == "latency" and "threshold" not in entry and value is not None:
        out["threshold"] = out.pop("value")
    elif kind == "cost" and "budget" not in entry and value is not None:
        out["budget"] = out.pop("value")
    return [out]


METRIC_SCHEMA = {"type": "string", "description": "AgentV 5's label of an assertion: the entry's name (as ``name``)."}
"""``metric:`` is read on every AgentV type (added to their schemas by ``AgentVConfig``)."""
_ITEM = {"$ref": "#/$defs/RubricItem"}


def current_format_schema(type_name: str, schema: dict[str, Any]) -> None:
    """Make the JSON Schema of one eval_config.yaml type say what AgentV 5's form of it accepts (in place)."""
    properties = schema.setdefault("properties", {})
    if type_name == "script":
        properties.pop("script", None)
        properties["value"] = {"description": "Not the command: passed to the script as the payload's "
                                              "``config.value`` (AgentV 5 passes keys it does not know to the script)."}
    elif type_name in _RUBRIC:
        for field in _REMOVED_RUBRIC_FIELDS:
            properties.pop(field, None)
        properties["value"] = {
            "description": "Text: the grading criteria (the judge scores the answer 0-1 against it). A list of "
                           "texts and/or rubric items, or one item: a rubric (text items are required checklist "
                           "items ``rubric-<n>``).",
            "anyOf": [{"type": "string"}, {"type": "array", "items": {"anyOf": [{"type": "string"}, _ITEM]}}, _ITEM]}
        properties["score_ranges"] = {"description": "With a text ``value``: grade it as one 0-10 item with these "
                                                     "bands (see RubricItem.score_ranges)."}
        properties["min_score"] = {"type": "number", "exclusiveMinimum": 0, "maximum": 1,
                                   "description": "With ``score_ranges``: the item's gate (score / 10 below it fails)."}
    elif type_name == "assert-set":  # AgentV 5: members under ``assert`` (or ``assertions``), no aggregator needed
        members = properties.get("evaluators", {"type": "array", "items": {"type": "object"}})
        for key in ("assert", "assertions"):
            properties[key] = {**members, "description": "The member assertions (AgentV 5's name for ``evaluators``)."}
        schema["required"] = [r for r in schema.get("required", []) if r not in ("aggregator", "evaluators")]
        schema["oneOf"] = [{"required": [key]} for key in ("evaluators", "assertions", "assert")]
    elif type_name in _SKILL:
        for field in ("skill", "should_trigger"):
            properties.pop(field, None)
        named = {"type": "object", "properties": {"name": {"type": "string"}, "pattern": {"type": "string"}}}
        properties["value"] = {"description": "The skill: a name, ``{name}`` / ``{pattern}``, or a list of them "
                                              "(one check per skill).",
                               "anyOf": [{"type": "string"}, named,
                                         {"type": "array", "items": {"anyOf": [{"type": "string"}, named]}}]}
        schema["required"] = sorted({*(r for r in schema.get("required", []) if r != "skill"), "value"})
