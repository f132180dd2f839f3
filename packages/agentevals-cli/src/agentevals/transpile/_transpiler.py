"""EVAL.yaml suite → Agent Skills ``evals.json`` files, as AgentV's transpiler (v2.19) produces them.

Field mapping: the user text of ``input`` → ``prompt``; file blocks and ``input_files`` → ``files``;
``expected_output`` flattened to a string; ``skill-trigger`` → ``should_trigger`` and the file the
case lands in; ``criteria``, every other assertion and the suite-level assertions → ``assertions``.
Cases without a skill-trigger join the skill with most cases, or ``_no-skill`` when there is none.
Suites in AgentV's later formats (``assert:``, ``script``, ``llm-rubric``, ``skill-used``, ``vars:``) are
read through ``_formats`` into the same vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError, InputFileError
from ._formats import RUBRIC_TYPES, is_current_format, normalize_assertion, rubric_texts, test_fields
from ._js import js_str, js_stringify, js_trim
from ._render import assertion_to_natural_language, lossy_notes, script_instruction
from ._suite import describe, load_suite
from ._yaml import where

__all__ = [
    "NO_SKILL",
    "EvalsJsonCase",
    "EvalsJsonFile",
    "TranspileResult",
    "plan_outputs",
    "transpile_file",
    "transpile_suite",
    "write_outputs",
]

NO_SKILL = "_no-skill"
"""``skill_name`` of the file holding cases when the suite has no skill-trigger at all."""


@dataclass
class EvalsJsonCase:
    """One entry of ``evals``; ``id`` is the 1-based position of the test in the suite."""

    id: int
    prompt: str
    assertions: list[str]
    expected_output: str | None = None
    files: list[str] = field(default_factory=list)
    should_trigger: bool | None = None

    def to_json(self) -> dict[str, Any]:
        """The case as AgentV orders it: id, prompt, expected_output?, files?, assertions, should_trigger?."""
        out: dict[str, Any] = {"id": self.id, "prompt": self.prompt}
        if self.expected_output is not None:
            out["expected_output"] = self.expected_output
        if self.files:
            out["files"] = list(self.files)
        out["assertions"] = list(self.assertions)
        if self.should_trigger is not None:
            out["should_trigger"] = self.should_trigger
        return out


@dataclass
class EvalsJsonFile:
    """One ``evals.json`` document: a skill and its cases."""

    skill_name: str
    evals: list[EvalsJsonCase] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"skill_name": self.skill_name, "evals": [case.to_json() for case in self.evals]}

    def dumps(self) -> str:
        """The file's text: ``JSON.stringify(doc, null, 2)`` plus a newline, as AgentV writes it."""
        return js_stringify(self.to_json(), indent=2) + "\n"


@dataclass
class TranspileResult:
    """What one suite turned into: one ``EvalsJsonFile`` per skill (in first-seen order) and warnings."""

    files: dict[str, EvalsJsonFile]
    warnings: list[str] = field(default_factory=list)
    path: Path | None = None
    """The input file, when the suite was read from disk (its directory is the default output dir)."""

    def filenames(self) -> dict[str, str]:
        """skill → file name: ``evals.json`` for one skill, else ``<skill>.evals.json`` (unsafe chars → ``_``)."""
        if len(self.files) == 1:
            return dict.fromkeys(self.files, "evals.json")
        return {skill: f"{_safe_name(skill)}.evals.json" for skill in self.files}

    def outputs(self) -> dict[str, str]:
        """file name → file text."""
        names = self.filenames()
        return {names[skill]: doc.dumps() for skill, doc in self.files.items()}


def _safe_name(skill: str) -> str:
    # JS replaces per UTF-16 code unit, so a character outside the BMP becomes two underscores.
    return re.sub(r"[^a-zA-Z0-9_-]", lambda m: "__" if ord(m.group()) > 0xFFFF else "_", skill)


def _assertion_list(owner: dict[str, Any], source: str, label: str | None, warnings: list[str]) -> list[Any]:
    """``assertions``, else ``assert`` (deprecated in v2.19: ``label`` is its warning; canonical later)."""
    for key in ("assertions", "assert"):
        value = owner.get(key)
        if isinstance(value, list):
            if key == "assert" and "assertions" not in owner and label:
                warnings.append(f"{where(source, owner, 'assert')}: {label}")
            return value
        if value is not None:
            raise InputFileError(
                f"{where(source, owner, key)}: '{key}' must be a list, got {describe(value)}"
            )
    return []


def _render_entries(
    entries: list[Any], source: str, context: str, warnings: list[str]
) -> tuple[list[str], list[dict[str, Any]]]:
    """The strings for every assertion except skill-triggers, and the skill-trigger entries.

    Plain strings are dropped with a warning (as AgentV drops them); other non-mappings are errors.
    """
    texts: list[str] = []
    triggers: list[dict[str, Any]] = []
    for index, entry in enumerate(entries):
        at = where(source, entries, index)
        if isinstance(entry, str):
            warnings.append(
                f"{at}: {context}: plain-string assertion {entry!r} is not transpiled (AgentV drops it too);"
                " write {type: rubrics, criteria: ...}"
            )
        elif not isinstance(entry, dict):
            raise InputFileError(
                f"{at}: {context}: an assertion must be a mapping with a 'type', got {describe(entry)}"
            )
        elif entry.get("type") in RUBRIC_TYPES:  # AgentV 5's transpiler: the text, or one line per item
            texts.extend(rubric_texts(entry))
        elif entry.get("type") == "script":
            texts.append(script_instruction(entry))
        else:
            for item in normalize_assertion(entry):  # later AgentV vocabularies read as v2.19's
                if item.get("type") == "skill-trigger":
                    triggers.append(item)
                    continue
                rendered = assertion_to_natural_language(item)
                warnings.extend(f"{at}: {context}: {note}" for note in lossy_notes(item, rendered))
                texts.extend(rendered)
    return texts, triggers


def _extract_input(test: dict[str, Any]) -> tuple[str, list[str]]:
    listed = test.get("input_files")
    files = [f for f in listed if isinstance(f, str)] if isinstance(listed, list) else []
    value = test.get("input")
    if isinstance(value, str):
        return value, files
    prompt = ""
    if isinstance(value, list):
        for message in value:
            if not isinstance(message, dict) or message.get("role") != "user":
                continue
            content = message.get("content")
            if isinstance(content, str):
                prompt = content
            elif isinstance(content, list):
                for block in content:
                    if not isinstance(block, dict) or not isinstance(block.get("value"), str):
                        continue
                    if block.get("type") == "text":
                        prompt = block["value"]
                    elif block.get("type") == "file":
                        files.append(block["value"])
    return prompt, files


def _extract_expected(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        for message in reversed(value):
            if isinstance(message, dict) and isinstance(message.get("content"), str):
                return message["content"]
        return None
    return js_stringify(value)


def transpile_suite(suite: Any, *, source: str = "EVAL.yaml") -> TranspileResult:
    """Transpile a parsed suite (a mapping with a ``tests`` list) into evals.json documents.

    Args:
        suite: the parsed EVAL.yaml; ``YamlMap`` values from ``load_suite`` give errors with lines.
        source: how to name the input in messages when positions are unknown.

    Raises:
        InputFileError: the suite is not a mapping, has no ``tests`` list, or a test is malformed.
    """
    if not isinstance(suite, dict):
        raise InputFileError(
            f"{where(source, suite)}: invalid EVAL.yaml: expected a mapping at the top level, got {describe(suite)}"
        )
    tests = suite.get("tests")
    if not isinstance(tests, list):
        got = "" if tests is None else f", got {describe(tests)}"
        raise InputFileError(
            f"{where(source, suite, 'tests' if 'tests' in suite else None)}: invalid EVAL.yaml: missing 'tests' array{got}"
        )

    warnings: list[str] = []
    current = is_current_format(suite)  # AgentV 5: ``assert`` is the canonical key, not a deprecated alias
    suite_raw = _assertion_list(
        suite, source, None if current else "'assert' is deprecated at the suite level. Use 'assertions' instead.",
        warnings,
    )
    suite_texts, suite_triggers = _render_entries(suite_raw, source, "suite", warnings)
    if suite_triggers:
        warnings.append(
            f"{where(source, suite, 'assertions')}: suite: suite-level skill-triggers are ignored"
        )

    files: dict[str, EvalsJsonFile] = {}
    for index, test in enumerate(tests):
        if not isinstance(test, dict):
            raise InputFileError(
                f"{where(source, tests, index)}: test {index + 1}: a test must be a mapping with 'id' and 'input', got {describe(test)}"
            )
        test = test_fields(test)
        test_id = js_str(test["id"]) if test.get("id") is not None else str(index + 1)
        label = f"test '{test_id}'"
        raw = _assertion_list(
            test, source, None if current else f"Test '{test_id}': 'assert' is deprecated. Use 'assertions' instead.",
            warnings,
        )
        case_texts, triggers = _render_entries(raw, source, label, warnings)
        if test.get("input") is None and not test.get("input_files"):
            warnings.append(f"{where(source, tests, index)}: {label}: no 'input', the prompt will be empty")
        criteria = test.get("criteria")
        texts = [js_trim(criteria)] if isinstance(criteria, str) and js_trim(criteria) else []
        texts += case_texts + suite_texts

        prompt, input_files = _extract_input(test)
        expected = _extract_expected(test.get("expected_output"))

        placements: list[tuple[str, bool | None]] = [
            (
                t["skill"] if isinstance(t.get("skill"), str) else NO_SKILL,
                t.get("should_trigger") is not False,
            )
            for t in triggers
        ]
        for skill, should_trigger in placements or [(NO_SKILL, None)]:
            doc = files.setdefault(skill, EvalsJsonFile(skill))
            doc.evals.append(
                EvalsJsonCase(index + 1, prompt, list(texts), expected, list(input_files), should_trigger)
            )

    orphans = files.get(NO_SKILL)
    if orphans and orphans.evals:
        dominant, most = None, 0
        for name, doc in files.items():
            if name != NO_SKILL and len(doc.evals) > most:
                dominant, most = name, len(doc.evals)
        if dominant is not None:
            files[dominant].evals.extend(orphans.evals)
            del files[NO_SKILL]
    return TranspileResult(files, warnings)


def transpile_file(path: Path | str, *, source: str | None = None) -> TranspileResult:
    """Read and transpile one EVAL.yaml (or ``.jsonl`` test file); errors name the file and line."""
    path = Path(path)
    source = source or str(path)
    notes: list[str] = []
    result = transpile_suite(load_suite(path, source=source, warnings=notes), source=source)
    result.warnings[:0] = notes
    result.path = path
    return result


def plan_outputs(results: Sequence[TranspileResult], *, out_dir: Path | None = None) -> dict[Path, str]:
    """Target path → text for every file the results produce, next to each input unless ``out_dir``.

    Raises:
        InputFileError: a suite has no tests.
        ConfigError: two outputs would land on the same path (e.g. two inputs into one ``--out-dir``).
    """
    plan: dict[Path, str] = {}
    owners: dict[Path, str] = {}
    for result in results:
        name = str(result.path) if result.path else "suite"
        if not result.files:
            raise InputFileError(f"{name}: no tests found, nothing to write")
        directory = out_dir if out_dir is not None else (result.path.parent if result.path else Path("."))
        for filename, text in result.outputs().items():
            target = directory / filename
            if target in plan:
                raise ConfigError(
                    f"{target} would be written twice (by {owners[target]} and {name}); use separate --out-dir"
                )
            plan[target], owners[target] = text, name
    return plan


def write_outputs(plan: dict[Path, str]) -> list[Path]:
    """Write each planned file (UTF-8, ``\\n`` line ends), creating directories; returns the paths."""
    for target, text in plan.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(text.encode("utf-8", "surrogatepass"))
    return list(plan)
