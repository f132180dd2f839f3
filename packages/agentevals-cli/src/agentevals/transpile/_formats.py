"""AgentV's later EVAL.yaml vocabularies, read as the v2.19 one the transpiler and ``eval prompt`` speak.

AgentV renamed its assertion types twice after v2.19:

* the grader rename (AgentV 3–4): ``code-grader`` / ``llm-grader`` for ``code-judge`` / ``llm-judge``,
  ``min_score`` beside ``required``;
* the promptfoo-aligned format (AgentV 5): ``assert:`` is the canonical key, ``metric:`` labels an
  assertion, ``value:`` carries every argument, and the types are ``script`` (a code grader),
  ``llm-rubric`` / ``agent-rubric`` (an LLM rubric: one text, or a list of items), ``skill-used`` /
  ``not-skill-used`` (a skill trigger), ``assert-set`` (a composite); tests may take ``input`` and
  ``expected_output`` from ``vars:``.

``normalize_assertion`` (``evaluators.agentv._vocabulary``) maps each of these onto the v2.19 entry with the
same meaning, so one renderer serves all three; ``is_current_format`` says whether a suite is written in a later format (then its
``assert:`` key is not the deprecated alias). ``expand_test_includes`` expands ``file://`` entries of
``tests:`` as AgentV does (YAML/JSONL files, globs in sorted order).
"""

from __future__ import annotations

import glob
from pathlib import Path
from typing import Any

from ..errors import InputFileError
from ..evaluators.agentv._vocabulary import CURRENT_TYPES, RUBRIC_TYPES, normalize_assertion, rubric_texts
from ._yaml import YamlSeq, load_jsonl, load_yaml, where

__all__ = ["RUBRIC_TYPES", "expand_test_includes", "is_current_format", "normalize_assertion", "rubric_texts",
           "test_fields"]

FILE_PREFIX = "file://"


def is_current_format(suite: Any) -> bool:
    """Whether a suite is written in a format after v2.19 (its ``assert:`` is then the canonical key)."""
    if not isinstance(suite, dict):
        return False
    if any(key in suite for key in ("prompts", "providers", "defaultTest")):
        return True
    owners = [suite, *(t for t in suite.get("tests") or () if isinstance(t, dict))]
    for owner in owners:
        if isinstance(owner.get("vars"), dict):
            return True
        for key in ("assert", "assertions"):
            for entry in owner.get(key) or () if isinstance(owner.get(key), list) else ():
                if isinstance(entry, dict) and (entry.get("type") in CURRENT_TYPES or "metric" in entry):
                    return True
    return False


def test_fields(test: dict[str, Any]) -> dict[str, Any]:
    """A test with ``input`` / ``expected_output`` taken from ``vars:`` when it has no such field itself."""
    variables = test.get("vars")
    if not isinstance(variables, dict):
        return test
    filled = dict(test)
    for key in ("input", "expected_output"):
        if key not in filled and key in variables:
            filled[key] = variables[key]
    return filled


def _load_included(path: Path, source: str) -> list[Any]:
    if path.suffix.lower() == ".jsonl":
        return list(load_jsonl(path, source))
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise InputFileError(f"{source}: unsupported test file format '{path.suffix}' (supported: .yaml, .yml, .jsonl)")
    if not path.read_text("utf-8").strip():
        return []  # AgentV skips an empty file with a warning
    cases = load_yaml(path, source)
    if not isinstance(cases, list):
        raise InputFileError(f"{where(source, cases)}: an included test file must hold a list of tests")
    return list(cases)


def expand_test_includes(tests: YamlSeq, base: Path, source: str) -> tuple[YamlSeq, list[str]]:
    """Replace each ``file://PATH`` entry of ``tests`` by the tests in that file (or in every file a glob
    matches, sorted), relative to the eval file's folder; returns the list and warnings (a glob that
    matches nothing). Other entries are kept as they are.
    """
    if not any(isinstance(t, str) and t.startswith(FILE_PREFIX) for t in tests):
        return tests, []
    expanded = YamlSeq()
    expanded.origin = getattr(tests, "origin", None)
    warnings: list[str] = []
    origins = getattr(tests, "item_origins", None) or [None] * len(tests)
    for index, entry in enumerate(tests):
        if not (isinstance(entry, str) and entry.startswith(FILE_PREFIX)):
            expanded.append(entry)
            expanded.item_origins.append(origins[index] if index < len(origins) else None)
            continue
        ref = entry[len(FILE_PREFIX):]
        at = where(source, tests, index)
        if any(ch in ref for ch in "*?{"):
            matches = sorted(glob.glob(str(base / ref), recursive=True))
            if not matches:
                warnings.append(f"{at}: '{entry}' matches no files")
        else:
            matches = [str(base / ref)]
            if not Path(matches[0]).is_file():
                raise InputFileError(f"{at}: tests file '{ref}' not found (looked for {Path(source).parent / ref})")
        for match in matches:
            included = Path(match)
            shown = str(Path(source).parent / included.relative_to(base)) if included.is_relative_to(base) else match
            for item in _load_included(included, shown):
                expanded.append(item)
                expanded.item_origins.append(getattr(item, "origin", None))
    return expanded, warnings
