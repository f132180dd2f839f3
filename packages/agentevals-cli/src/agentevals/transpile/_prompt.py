"""What ``agentevals eval prompt eval`` shows a grading agent: test ids, inputs, expectations, grading briefs.

Mirrors AgentV's ``agentv eval prompt eval`` (v2.19): the suite's ``input`` is prepended to each
test's input (unless ``execution.skip_defaults``), suite assertions are appended, file references
are resolved to absolute paths from the eval file's directory up to the repository root, and
incomplete tests (no id, no input, or nothing to grade against) are skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import ConfigError, InputFileError
from ..evaluators.agentv import find_assertion_kind
from ..judges import repo_root
from ._formats import normalize_assertion, test_fields
from ._js import UNDEFINED, js_str, js_stringify, nullish
from ._render import assertion_to_natural_language, judge_name_from_command
from ._suite import describe, load_suite
from ._yaml import where

__all__ = ["PromptSuite", "PromptTest", "grading_brief", "load_prompt_suite"]

# Kinds AgentV knows (after snake_case → kebab-case) besides the assertion kinds of the table
# (``evaluators.agentv._kinds``); anything else is a custom type.
OTHER_KINDS: Final = frozenset(
    "code-judge llm-judge rubric composite tool-trajectory field-accuracy latency cost token-usage execution-metrics"
    " skill-trigger rubrics inline-assert".split()
)


def _known(kind: str) -> bool:
    return kind in OTHER_KINDS or find_assertion_kind(kind) is not None


@dataclass
class PromptTest:
    """One test as AgentV's loader sees it."""

    id: str
    input: list[dict[str, Any]]
    """Messages; file blocks are ``{"type": "file", "path": <absolute path>}``."""
    criteria: str = ""
    expected_output: list[dict[str, Any]] = field(default_factory=list)
    reference_answer: str = ""
    assertions: list[dict[str, Any]] = field(default_factory=list)
    guideline_paths: list[str] = field(default_factory=list)
    """Files from the suite-level ``input``."""
    file_paths: list[str] = field(default_factory=list)
    """Files of the test's own input (absolute)."""


class _Resolver:
    """Resolve a file reference from the eval file's directory up to the repository root."""

    def __init__(self, eval_path: Path) -> None:
        start = eval_path.resolve().parent
        root = repo_root(start)
        self.roots = [start]
        for parent in start.parents:
            if self.roots[-1] == root:
                break
            self.roots.append(parent)
        self.missing: list[str] = []

    def __call__(self, ref: str) -> str | None:
        for root in self.roots:
            candidate = root / ref
            if candidate.is_file():
                return str(candidate.resolve())
        self.missing.append(ref)
        return None


def _messages(value: Any, input_files: Any = None) -> list[dict[str, Any]]:
    if isinstance(value, str):
        if isinstance(input_files, list) and input_files:
            blocks = [{"type": "file", "value": f} for f in input_files if isinstance(f, str)]
            return [{"role": "user", "content": [*blocks, {"type": "text", "value": value}]}]
        return [{"role": "user", "content": value}]
    if isinstance(value, list):
        return [m for m in value if isinstance(m, dict)]
    return []


def _resolve(messages: list[dict[str, Any]], resolver: _Resolver, files: list[str]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            out.append({"role": message.get("role"), "content": content})
            continue
        blocks: list[Any] = []
        for block in content:
            if isinstance(block, str):
                blocks.append({"type": "text", "value": block})
            elif (
                isinstance(block, dict)
                and block.get("type") == "file"
                and isinstance(block.get("value"), str)
            ):
                resolved = resolver(block["value"])
                if resolved:
                    files.append(resolved)
                blocks.append({"type": "file", "path": resolved or block["value"]})
            else:
                blocks.append(block)
        out.append({"role": message.get("role"), "content": blocks})
    return out


def _expected(value: Any) -> list[dict[str, Any]]:
    if value is None:
        return []
    if isinstance(value, str):
        return [{"role": "assistant", "content": value}]
    if isinstance(value, dict):
        return [value] if "role" in value else [{"role": "assistant", "content": value}]
    if isinstance(value, list):
        if value and all(isinstance(m, dict) and "role" in m for m in value):
            return list(value)
        return [{"role": "assistant", "content": value}]
    return [{"role": "assistant", "content": value}]


def _reference_answer(expected: list[dict[str, Any]]) -> str:
    if not expected:
        return ""
    last = expected[-1]
    content = last.get("content")
    if isinstance(content, str):
        return content
    if content is not None:
        return js_stringify(content, indent=2)
    if last.get("tool_calls") is not None:
        return js_stringify(last["tool_calls"], indent=2)
    return ""


def _auto_name(kind: str, entry: dict[str, Any]) -> str:
    value = entry.get("value", UNDEFINED)
    row = find_assertion_kind(kind)
    if row is not None:  # contains-<value>, contains-any-<n>, regex-<first 30>, is-json…
        count = len(value) if isinstance(value, list) else 0
        return row.auto_name.format(value=js_str(value), value_count=count)
    if kind == "skill-trigger":
        return f"skill-trigger-{js_str(entry.get('skill', UNDEFINED))}"
    if kind == "code-judge":
        return judge_name_from_command(entry.get("command")) or kind
    return kind  # "rubrics", and a custom type's name is its type


def _parse_assertions(entries: list[Any]) -> list[dict[str, Any]]:
    """Normalise entries as AgentV's parser does: kebab-case types, names, string shorthand → rubrics."""
    parsed: list[dict[str, Any]] = []
    shorthand: dict[str, Any] | None = None
    for entry in [item for raw in entries for item in normalize_assertion(raw)]:  # later vocabularies too
        if isinstance(entry, str):
            if not entry.strip():
                continue
            if shorthand is None:
                shorthand = {"name": "rubrics", "type": "rubrics", "criteria": []}
                parsed.append(shorthand)
            shorthand["criteria"].append(entry)
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            continue
        kind = entry["type"].replace("_", "-")
        name = entry.get("name")
        rest = {k: v for k, v in entry.items() if k not in ("name", "type")}
        config: dict[str, Any] = {
            "name": name if isinstance(name, str) and name else _auto_name(kind, entry),
            "type": kind,
        }
        if _known(kind):
            config.update(rest)
        else:
            config.update({k: rest.pop(k) for k in ("weight", "required", "negate") if k in rest})
            if rest:
                config["config"] = rest
        parsed.append(config)
    return parsed


def _entries(owner: dict[str, Any], keys: tuple[str, ...]) -> list[Any]:
    for key in keys:
        container: Any = owner
        for part in key.split("."):
            container = container.get(part) if isinstance(container, dict) else None
        if isinstance(container, list):
            return container
    return []


@dataclass
class PromptSuite:
    """An eval file's complete tests with the views ``eval prompt eval`` prints."""

    path: Path
    tests: list[PromptTest]
    warnings: list[str] = field(default_factory=list)

    def test(self, test_id: str) -> PromptTest:
        """The test called ``test_id``; ``ConfigError`` listing the ids when there is none."""
        for test in self.tests:
            if test.id == test_id:
                return test
        known = ", ".join(t.id for t in self.tests) or "none"
        raise ConfigError(f"{self.path}: no test with id '{test_id}'; tests: {known}")

    def list_view(self) -> dict[str, Any]:
        """``{"eval_path": <absolute>, "test_ids": [sorted]}`` (``--list``)."""
        return {"eval_path": str(self.path.resolve()), "test_ids": sorted(t.id for t in self.tests)}

    def _view(self, test_id: str, *fields: str) -> dict[str, Any]:
        test = self.test(test_id)
        return {"test_id": test.id, **{name: getattr(test, name) for name in fields}}

    def input_view(self, test_id: str) -> dict[str, Any]:
        """``{"test_id", "input", "guideline_paths", "criteria"}`` (``--input``): what to send the agent."""
        return self._view(test_id, "input", "guideline_paths", "criteria")

    def expected_output_view(self, test_id: str) -> dict[str, Any]:
        """``{"test_id", "criteria", "expected_output", "reference_answer", "assertions"}`` (``--expected-output``)."""
        return self._view(test_id, "criteria", "expected_output", "reference_answer", "assertions")

    def grading_brief(self, test_id: str) -> str:
        """The human-readable grading brief of one test (``--grading-brief``), without a trailing newline.

        ``Input: "…"``, ``Files: …``, ``Expected: "…"``, then ``Criteria:`` with one ``  - …`` line per
        criterion; judge-backed criteria are tagged ``[llm-judge]``, ``[code-judge] name: description``,
        ``[skill-trigger] should_trigger: true for <skill>`` or ``[<type>]``.
        """
        test = self.test(test_id)
        lines = []
        text = _first_user_text(test.input)
        if text:
            lines.append(f'Input: "{text}"')
        if test.file_paths:
            lines.append(f"Files: {', '.join(test.file_paths)}")
        if test.reference_answer:
            lines.append(f'Expected: "{test.reference_answer}"')
        criteria = [test.criteria] if test.criteria else []
        for assertion in test.assertions:
            criteria += _criterion_lines(assertion)
        if criteria:
            lines.append("Criteria:")
            lines += [f"  - {c}" for c in criteria]
        return "\n".join(lines)


def load_prompt_suite(path: Path | str) -> PromptSuite:
    """Load the eval file's complete tests; skipped tests and unresolved files become warnings."""
    path = Path(path)
    source = str(path)
    warnings: list[str] = []
    suite = load_suite(path, source=source, warnings=warnings)
    if not isinstance(suite, dict) or not isinstance(suite.get("tests"), list):
        raise InputFileError(f"{where(source, suite)}: invalid EVAL.yaml: missing 'tests' array")
    resolver = _Resolver(path)
    guideline_paths: list[str] = []
    suite_input = _resolve(_messages(suite.get("input")), resolver, guideline_paths)
    suite_entries = _entries(suite, ("assertions", "assert"))
    tests: list[PromptTest] = []
    seen: set[str] = set()
    for index, raw in enumerate(suite["tests"]):
        at = where(source, suite["tests"], index)
        if not isinstance(raw, dict):
            raise InputFileError(f"{at}: test {index + 1}: a test must be a mapping, got {describe(raw)}")
        raw = test_fields(raw)
        test_id = raw.get("id")
        test_id = (
            js_str(test_id)
            if isinstance(test_id, (str, int, float)) and not isinstance(test_id, bool)
            else ""
        )
        criteria = next((raw[k] for k in ("criteria", "expected_outcome") if isinstance(raw.get(k), str)), "")
        entries = _entries(raw, ("assertions", "assert", "execution.evaluators", "evaluators"))
        messages = _messages(raw.get("input"), raw.get("input_files"))
        expected = _expected(raw.get("expected_output"))
        if not test_id or not messages or not (criteria or expected or entries):
            warnings.append(
                f"{at}: skipping incomplete test '{test_id or 'unknown'}': needs id, input, and criteria, expected_output or assertions"
            )
            continue
        if test_id in seen:
            warnings.append(f"{at}: duplicate test id '{test_id}', the first one is used")
            continue
        seen.add(test_id)
        skip_defaults = (
            isinstance(raw.get("execution"), dict) and raw["execution"].get("skip_defaults") is True
        )
        files: list[str] = []
        own_input = _resolve(messages, resolver, files)
        tests.append(
            PromptTest(
                id=test_id,
                input=own_input if skip_defaults else [*suite_input, *own_input],
                criteria=criteria,
                expected_output=expected,
                reference_answer=_reference_answer(expected),
                assertions=_parse_assertions(entries if skip_defaults else [*entries, *suite_entries]),
                guideline_paths=[] if skip_defaults else list(guideline_paths),
                file_paths=files,
            )
        )
    warnings += [
        f"{source}: file '{ref}' not found from the eval file's directory up to the repository root"
        for ref in dict.fromkeys(resolver.missing)
    ]
    return PromptSuite(path, tests, warnings)


def grading_brief(path: Path | str, test_id: str) -> str:
    """Shortcut: ``load_prompt_suite(path).grading_brief(test_id)``."""
    return load_prompt_suite(path).grading_brief(test_id)


def _first_user_text(messages: list[dict[str, Any]]) -> str:
    for message in messages:
        if message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                js_str(b.get("value", UNDEFINED))
                for b in content
                if isinstance(b, dict) and b.get("type") == "text"
            ]
            if texts:
                return " ".join(texts)
    return ""


def _criterion_lines(assertion: dict[str, Any]) -> list[str]:
    kind = assertion["type"]
    config: dict[str, Any] = assertion["config"] if isinstance(assertion.get("config"), dict) else {}

    def pick(*keys: str) -> Any:
        for key in keys:
            for bag in (assertion, config):
                if not nullish(bag.get(key)):
                    return bag[key]
        return None

    row = find_assertion_kind(kind)
    if row is not None and row.brief is not None:  # contains: "Output contains '<value>'"
        return [row.brief.format(value=js_str(assertion.get("value", UNDEFINED)))]
    if kind in ("rubrics", "rubric"):
        items = pick("criteria", "rubrics")
        if isinstance(items, str):
            return [items]
        outcomes = [
            i if isinstance(i, str) else i.get("outcome") for i in items or [] if isinstance(i, (str, dict))
        ]
        return [o for o in outcomes if isinstance(o, str) and o]
    if kind == "llm-judge":
        prompt = pick("prompt", "criteria")
        if prompt is None and isinstance(assertion.get("rubrics"), list):
            outcomes = [
                r.get("outcome") or r.get("criteria") for r in assertion["rubrics"] if isinstance(r, dict)
            ]
            return [f"[llm-judge] {o}" for o in outcomes if isinstance(o, str)]
        return [f"[llm-judge] {prompt if isinstance(prompt, str) else ''}"]
    if kind == "code-judge":
        description = pick("description")
        return [f"[code-judge] {assertion['name']}{f': {js_str(description)}' if description else ''}"]
    if kind == "skill-trigger":
        should = assertion.get("should_trigger") is not False
        return [
            f"[skill-trigger] should_trigger: {'true' if should else 'false'} for {js_str(assertion.get('skill', UNDEFINED))}"
        ]
    text = pick("value", "criteria", "prompt")
    if text is None:  # e.g. latency: say what the transpiler would say rather than nothing
        rendered = [t for t in assertion_to_natural_language(assertion) if t != f"{kind} assertion"]
        text = rendered[0] if rendered else ""
    return [f"[{kind}] {js_str(text)}"]
