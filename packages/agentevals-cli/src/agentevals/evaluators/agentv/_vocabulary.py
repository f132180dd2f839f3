"""AgentV's assertion vocabularies after v2.19, mapped onto the v2.19 entry with the same meaning.

* the grader rename (AgentV 3–4): ``code-grader`` / ``llm-grader`` for ``code-judge`` / ``llm-judge``;
* the promptfoo-aligned format (AgentV 5): ``metric:`` labels an assertion and ``value:`` carries its
  argument; ``script`` is a code grader, ``llm-rubric`` / ``agent-rubric`` an LLM rubric (one text or a list
  of items), ``skill-used`` / ``not-skill-used`` a skill trigger, ``assert-set`` a composite.

Used by the evaluator configs (so these types run from eval_config.yaml) and by the EVAL.yaml readers
(``agentevals transpile``, ``agentevals eval prompt``).

    >>> normalize_assertion({"type": "skill-used", "value": "pdf"})
    [{'type': 'skill-trigger', 'skill': 'pdf', 'should_trigger': True}]
"""

from __future__ import annotations

import shlex
from typing import Any

__all__ = ["CURRENT_TYPES", "normalize_assertion"]

_RENAMED = {
    "code-grader": "code-judge", "code_grader": "code-judge", "script": "code-judge",
    "llm-grader": "llm-judge", "llm_grader": "llm-judge",
    "assert-set": "composite", "assert_set": "composite",
}
_RUBRIC = ("llm-rubric", "agent-rubric")
_SKILL = {"skill-used": True, "not-skill-used": False}

CURRENT_TYPES = frozenset({*_RENAMED, *_RUBRIC, *_SKILL})
"""Assertion types that exist only in AgentV's formats after v2.19."""


def _command(value: Any) -> Any:
    """A script's command as an argv list (a string is split like a shell would)."""
    if isinstance(value, str):
        try:
            return shlex.split(value)
        except ValueError:
            return value.split()
    return value


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
    value = entry.get("value")
    if kind in _RENAMED:
        out["type"] = _RENAMED[kind]
        if out["type"] == "code-judge" and "command" not in out:
            script = entry.get("script", value)
            if script is not None:
                out["command"] = _command(script)
                out.pop("script", None)
                out.pop("value", None)
    elif kind in _RUBRIC:
        out["type"] = "llm-judge"
        out.pop("value", None)
        if isinstance(value, str):
            out.setdefault("prompt", value)
        elif isinstance(value, list):
            out["rubrics"] = [{"outcome": item} if isinstance(item, str) else item for item in value]
        elif isinstance(value, dict):
            out["rubrics"] = [value]
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
