"""AgentV's deterministic assertions on the answer (score 0 or 1): one small class per ``type:``.

``contains``, ``contains_any``, ``contains_all``, ``icontains``, ``icontains_any``, ``icontains_all``,
``starts_with``, ``ends_with``, ``regex``, ``is_json``, ``equals``. The checks and their hit/miss
texts live in ``_checks`` (shared with ``agentevals eval assert``); a class adds the config and
AgentV's automatic name.
"""

from __future__ import annotations

import re
from abc import abstractmethod
from typing import ClassVar

from pydantic import Field, model_validator

from ..base import EvalContext
from . import _checks as checks
from ._base import AgentVConfig, AgentVEvaluator, Outcome
from ._checks import Check, compile_js_regex
from ._view import CaseView

__all__ = [
    "ContainsAllEvaluator",
    "ContainsAnyEvaluator",
    "ContainsEvaluator",
    "EndsWithEvaluator",
    "EqualsEvaluator",
    "IcontainsAllEvaluator",
    "IcontainsAnyEvaluator",
    "IcontainsEvaluator",
    "IsJsonEvaluator",
    "RegexEvaluator",
    "StartsWithEvaluator",
]


class _AssertionEvaluator(AgentVEvaluator):
    """An assertion: a pure check of the answer text, scored 0 or 1 with AgentV's hit and miss texts."""

    needs_spans: ClassVar[bool] = False  # reads the answer text only
    default_timeout: ClassVar[float] = 10.0  # a cheap check: seconds, not the 300 s of LLM judges

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        result = self.apply(view.answer)
        return Outcome(result.score, hits=result.hits, misses=result.misses)

    @abstractmethod
    def apply(self, answer: str) -> Check:
        """Check ``answer`` (AgentV's candidate: the last turn's final response)."""


class _ValueConfig(AgentVConfig):
    value: str = Field(min_length=1)
    """The text to look for (a number is read as its text)."""


class _ValuesConfig(AgentVConfig):
    value: list[str] = Field(min_length=1)
    """The texts to look for: a non-empty list (numbers are read as their text)."""


class ContainsEvaluator(_AssertionEvaluator):
    """The answer contains ``value`` (case-sensitive, no trimming)."""

    name = "contains"

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "contains-{value}"
        type: str = "contains"

    def apply(self, answer: str) -> Check:
        return checks.contains(answer, self.config.value)


class ContainsAnyEvaluator(_AssertionEvaluator):
    """The answer contains at least one of ``value`` (case-sensitive)."""

    name = "contains_any"
    aliases = ("contains-any",)

    class Config(_ValuesConfig):
        auto_name: ClassVar[str | None] = "contains-any-{value_count}"
        type: str = "contains_any"

    def apply(self, answer: str) -> Check:
        return checks.contains_any(answer, self.config.value)


class ContainsAllEvaluator(_AssertionEvaluator):
    """The answer contains every one of ``value`` (case-sensitive)."""

    name = "contains_all"
    aliases = ("contains-all",)

    class Config(_ValuesConfig):
        auto_name: ClassVar[str | None] = "contains-all-{value_count}"
        type: str = "contains_all"

    def apply(self, answer: str) -> Check:
        return checks.contains_all(answer, self.config.value)


class IcontainsEvaluator(_AssertionEvaluator):
    """The answer contains ``value``, ignoring case."""

    name = "icontains"

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "icontains-{value}"
        type: str = "icontains"

    def apply(self, answer: str) -> Check:
        return checks.contains(answer, self.config.value, ignore_case=True)


class IcontainsAnyEvaluator(_AssertionEvaluator):
    """The answer contains at least one of ``value``, ignoring case."""

    name = "icontains_any"
    aliases = ("icontains-any",)

    class Config(_ValuesConfig):
        auto_name: ClassVar[str | None] = "icontains-any-{value_count}"
        type: str = "icontains_any"

    def apply(self, answer: str) -> Check:
        return checks.contains_any(answer, self.config.value, ignore_case=True)


class IcontainsAllEvaluator(_AssertionEvaluator):
    """The answer contains every one of ``value``, ignoring case."""

    name = "icontains_all"
    aliases = ("icontains-all",)

    class Config(_ValuesConfig):
        auto_name: ClassVar[str | None] = "icontains-all-{value_count}"
        type: str = "icontains_all"

    def apply(self, answer: str) -> Check:
        return checks.contains_all(answer, self.config.value, ignore_case=True)


class StartsWithEvaluator(_AssertionEvaluator):
    """The answer starts with ``value``, both trimmed."""

    name = "starts_with"
    aliases = ("starts-with",)

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "starts-with-{value}"
        type: str = "starts_with"

    def apply(self, answer: str) -> Check:
        return checks.starts_with(answer, self.config.value)


class EndsWithEvaluator(_AssertionEvaluator):
    """The answer ends with ``value``, both trimmed."""

    name = "ends_with"
    aliases = ("ends-with",)

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "ends-with-{value}"
        type: str = "ends_with"

    def apply(self, answer: str) -> Check:
        return checks.ends_with(answer, self.config.value)


class RegexEvaluator(_AssertionEvaluator):
    """The answer matches the JavaScript regular expression ``value`` (``flags`` like ``i``, ``m``)."""

    name = "regex"

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

    def apply(self, answer: str) -> Check:
        return checks.regex(answer, self.config.value, self.config.flags, timeout=self.timeout)

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        from ...execution.inprocess import run_in_thread

        # The engine's own timeout can overshoot by seconds on a catastrophic pattern; the watched thread
        # ends the row at the deadline (the matcher releases the GIL, then stops at its own timeout).
        result = await run_in_thread(self.apply, view.answer, timeout=self.timeout,
                                     what=f"regex /{self.config.value}/{self.config.flags}")
        return Outcome(result.score, hits=result.hits, misses=result.misses)


class IsJsonEvaluator(_AssertionEvaluator):
    """The answer parses as JSON (``JSON.parse`` rules: no NaN/Infinity)."""

    name = "is_json"
    aliases = ("is-json",)

    class Config(AgentVConfig):
        auto_name: ClassVar[str | None] = "is-json"
        type: str = "is_json"

    def apply(self, answer: str) -> Check:
        return checks.is_json(answer)


class EqualsEvaluator(_AssertionEvaluator):
    """The answer equals ``value``, both trimmed."""

    name = "equals"

    class Config(_ValueConfig):
        auto_name: ClassVar[str | None] = "equals-{value}"
        type: str = "equals"

    def apply(self, answer: str) -> Check:
        return checks.equals(answer, self.config.value)
