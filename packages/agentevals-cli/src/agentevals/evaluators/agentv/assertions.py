"""AgentV's deterministic assertions on the answer: ``contains``, ``regex``, ``is_json``, ``equals`` (score 0 or 1)."""

from __future__ import annotations

import re
from typing import ClassVar

from pydantic import Field, model_validator

from ..base import EvalContext
from ._base import AgentVConfig, AgentVEvaluator, Outcome, loads_strict
from ._view import CaseView

__all__ = ["ContainsEvaluator", "EqualsEvaluator", "IsJsonEvaluator", "RegexEvaluator"]


class _AssertionEvaluator(AgentVEvaluator):
    """An assertion: a pure check of the answer text, scored 0 or 1 with AgentV's hit and miss texts."""

    hit: ClassVar[str]
    miss: ClassVar[str]
    """``str.format`` patterns over the config's fields (``{value}``)."""

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        passed = self.matches(view.answer)
        fields = self.texts()
        return Outcome(1.0 if passed else 0.0, hits=[self.hit.format(**fields)] if passed else [],
                       misses=[] if passed else [self.miss.format(**fields)])

    def matches(self, answer: str) -> bool:
        raise NotImplementedError

    def texts(self) -> dict[str, str]:
        return {"value": getattr(self.config, "value", "")}


class _ValueConfig(AgentVConfig):
    value: str = Field(min_length=1)
    """The text to look for (a number is read as its text)."""


class ContainsEvaluator(_AssertionEvaluator):
    """The answer contains ``value`` (case-sensitive, no trimming)."""

    name = "contains"
    hit, miss = 'Output contains "{value}"', 'Output does not contain "{value}"'

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "contains-{value}"
        type: str = "contains"

    def matches(self, answer: str) -> bool:
        return self.config.value in answer


_JS_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "u": 0, "g": 0, "y": 0, "d": 0, "v": 0}


def compile_js_regex(pattern: str, flags: str = "") -> re.Pattern[str]:
    """Compile a JavaScript ``RegExp`` (named groups and back-references translated) with JS flags."""
    unknown = sorted(set(flags) - set(_JS_FLAGS))
    if unknown:
        raise ValueError(f"unknown regex flag(s) {''.join(unknown)!r}; use i, m, s, u, g or y")
    bits = 0
    for flag in flags:
        bits |= _JS_FLAGS[flag]
    python = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    python = re.sub(r"\\k<([A-Za-z_]\w*)>", r"(?P=\1)", python)
    return re.compile(python, bits)


class RegexEvaluator(_AssertionEvaluator):
    """The answer matches the JavaScript regular expression ``value`` (``flags`` like ``i``, ``m``)."""

    name = "regex"
    hit, miss = "Output matches pattern {shown}", "Output does not match pattern {shown}"

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "regex-{value:.30}"
        type: str = "regex"
        flags: str = ""
        """JavaScript flags: ``i`` ignore case, ``m`` multi-line, ``s`` dot matches newline."""

        @model_validator(mode="after")
        def _compiles(self) -> RegexEvaluator.Config:
            try:
                compile_js_regex(self.value, self.flags)
            except re.error as exc:
                raise ValueError(f"invalid regex {self.value!r}: {exc}") from None
            return self

    def matches(self, answer: str) -> bool:
        return compile_js_regex(self.config.value, self.config.flags).search(answer) is not None

    def texts(self) -> dict[str, str]:
        pattern, flags = self.config.value, self.config.flags
        return {"shown": f"/{pattern}/{flags}" + (f" (flags: {flags})" if flags else "")}


class IsJsonEvaluator(_AssertionEvaluator):
    """The answer parses as JSON (``JSON.parse`` rules: no NaN/Infinity)."""

    name = "is_json"
    hit, miss = "Output is valid JSON", "Output is not valid JSON"

    class Config(AgentVConfig):
        auto_name: ClassVar[str | None] = "is-json"
        type: str = "is_json"

    def matches(self, answer: str) -> bool:
        try:
            loads_strict(answer)
        except ValueError:
            return False
        return True


class EqualsEvaluator(_AssertionEvaluator):
    """The answer equals ``value``, both sides trimmed."""

    name = "equals"
    hit, miss = 'Output equals "{value}"', 'Output does not equal "{value}"'

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "equals-{value}"
        type: str = "equals"

    def matches(self, answer: str) -> bool:
        return answer.strip() == self.config.value.strip()
