"""One EVAL.yaml assertion → the natural-language strings AgentV's transpiler writes into evals.json.

The rendering follows AgentV v2.19 (``assertionToNaturalLanguage``) case by case, including its quirks:
only the aliases it lists are recognised (an assertion kind's sentence is its ``instruction`` in the
table ``evaluators.agentv._kinds``; ``icontains-any``/``-all`` have none, as in AgentV), values are interpolated with JavaScript ``String()``
semantics, ``negate``/``weight``/``required``/regex ``flags`` are ignored. The one intended difference
is the code-judge instruction, which names ``agentevals eval assert``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from ..evaluators.agentv import find_assertion_kind
from ._js import UNDEFINED, js_str, nullish

__all__ = [
    "assertion_to_natural_language",
    "code_judge_instruction",
    "judge_name_from_command",
    "lossy_notes",
    "script_instruction",
]

_SCRIPT: Final = re.compile(r"([^/]+)\.(ts|js|mts|mjs)\Z")
_CODE_JUDGE: Final = ("code-judge", "code_judge")
_LLM_JUDGE: Final = ("llm-judge", "llm_judge")


def code_judge_instruction(name: str, description: str | None = None, *, noun: str = "judge") -> str:
    """The instruction a grader agent follows to run a code judge through ``agentevals eval assert``
    (AgentV 5 calls a ``script`` entry a grader: ``noun="grader"``)."""
    desc = f" This {noun}: {description}." if description else ""
    return (
        f"Run `agentevals eval assert {name} --agent-output <agent_output> --agent-input <original_prompt>`"
        f" and check the result.{desc} The command accepts --agent-output (the agent's full response text)"
        " and --agent-input (the original user prompt)."
        ' It returns JSON on stdout: {"score": 0-1, "reasoning": "..."}.'
        " A score >= 0.5 means pass (exit 0); below 0.5 means fail (exit 1)."
    )


def script_instruction(entry: Mapping[str, Any]) -> str:
    """AgentV 5's transpiler text for a ``script`` entry: named by ``metric`` (else its command's script)."""
    name = next((entry[k] for k in ("metric", "name") if isinstance(entry.get(k), str) and entry[k]), None)
    description = entry.get("description")
    return code_judge_instruction(js_str(name or judge_name_from_command(entry.get("command")) or "script"),
                                  description if isinstance(description, str) else None, noun="grader")


def judge_name_from_command(command: Any) -> str | None:
    """Stem of the first ``.ts/.js/.mts/.mjs`` argument: ``[bun, run, j/format-checker.ts]`` → ``format-checker``."""
    if not isinstance(command, list):
        return None
    for arg in command:
        if isinstance(arg, str):
            match = _SCRIPT.search(arg)
            if match:
                return match.group(1) or None
    return None


def _truthy(value: Any) -> bool:
    if nullish(value) or value is False or value == "":
        return False
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value == value and value != 0  # NaN and 0 are falsy
    return True


def _quoted_values(value: Any) -> str:
    return (
        "', '".join("" if nullish(v) else js_str(v) for v in value)
        if isinstance(value, list)
        else js_str(value)
    )


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _paths(items: Any, key: str) -> str:
    if not isinstance(items, list):
        return ""
    picked = [item.get(key, UNDEFINED) if isinstance(item, dict) else UNDEFINED for item in items]
    return ", ".join(js_str(p) for p in picked if _truthy(p))


def _single(entry: Mapping[str, Any]) -> str | None:
    kind = entry.get("type", UNDEFINED)
    value = entry.get("value", UNDEFINED)
    if kind == "skill-trigger":
        return None
    if kind == "rubrics":
        criteria = entry.get("criteria")
        return criteria if isinstance(criteria, str) else None
    row = find_assertion_kind(kind)  # contains, regex, is-json…: the row's sentence, in any of its spellings
    if row is not None and row.instruction is not None:
        return row.instruction.format(value=js_str(value), values=_quoted_values(value))
    if kind in _LLM_JUDGE:
        prompt = entry.get("prompt")
        return prompt if isinstance(prompt, str) else None
    if kind in ("tool-trajectory", "tool_trajectory"):
        tools = _paths(entry.get("expected"), "tool")
        return f"Agent called tools in order: {tools}" if tools else "Agent followed expected tool trajectory"
    if kind in _CODE_JUDGE:
        name = entry.get("name", UNDEFINED)
        if nullish(name):
            name = judge_name_from_command(entry.get("command")) or "code-judge"
        description = entry.get("description")
        return code_judge_instruction(js_str(name), description if isinstance(description, str) else None)
    if kind in ("field-accuracy", "field_accuracy"):
        fields = _paths(entry.get("fields"), "path")
        return f"Fields {fields} match expected values" if fields else "Fields match expected values"
    if kind == "latency":
        threshold = entry.get("threshold")
        return (
            f"Response time under {js_str(threshold)}ms"
            if _number(threshold)
            else "Response time within threshold"
        )
    if kind == "cost":
        budget = entry.get("budget")
        return f"Cost under ${js_str(budget)}" if _number(budget) else "Cost within budget"
    if kind in ("token-usage", "token_usage"):
        return "Token usage within limits"
    if kind in ("execution-metrics", "execution_metrics"):
        return "Execution within metric bounds"
    # Anything else: a custom type. With a command it is a code judge; otherwise its text, or its name.
    if "command" in entry and _truthy(kind):
        return code_judge_instruction(judge_name_from_command(entry["command"]) or js_str(kind))
    for key in ("criteria", "prompt"):
        if isinstance(entry.get(key), str):
            return entry[key]
    return f"{js_str(kind)} assertion" if _truthy(kind) else None


def assertion_to_natural_language(entry: Mapping[str, Any]) -> list[str]:
    """The evals.json ``assertions`` strings for one EVAL.yaml assertion entry (often one, maybe none).

    ``llm-judge`` with a non-empty ``rubrics`` list expands to one string per rubric item
    (``outcome``, else ``criteria``, else ``id``); ``skill-trigger`` renders nothing (it becomes
    ``should_trigger``).
    """
    rubrics = entry.get("rubrics")
    if entry.get("type") in _LLM_JUDGE and isinstance(rubrics, list) and rubrics:
        texts = []
        for item in rubrics:
            if isinstance(item, dict):
                picked = next(
                    (item[k] for k in ("outcome", "criteria", "id") if not nullish(item.get(k))), None
                )
                if isinstance(picked, str):
                    texts.append(picked)
        return texts
    text = _single(entry)
    return [] if text is None else [text]


def lossy_notes(entry: Mapping[str, Any], rendered: list[str]) -> list[str]:
    """What the rendering above drops from ``entry`` (for warnings; AgentV drops the same silently)."""
    kind = entry.get("type", UNDEFINED)
    notes = []
    if entry.get("negate") is True:
        notes.append("'negate: true' is not transpiled, the assertion is rendered un-negated")
    row = find_assertion_kind(kind)
    if row is not None and row.value == "regex" and entry.get("flags"):
        notes.append(f"regex flags '{js_str(entry['flags'])}' are not rendered")
    if not rendered and kind != "skill-trigger":
        notes.append(f"assertion of type '{js_str(kind)}' renders no text and is dropped")
    elif rendered == [f"{js_str(kind)} assertion"]:
        notes.append(f"assertion of type '{js_str(kind)}' is rendered only as its type name")
    return notes
