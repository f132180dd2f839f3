"""AgentV's deterministic assertions on the answer (score 0 or 1): one evaluator class per row of the table.

``contains``, ``contains_any``, ``contains_all``, ``icontains``, ``icontains_any``, ``icontains_all``,
``starts_with``, ``ends_with``, ``regex``, ``is_json``, ``equals`` — and whatever else ``_kinds`` lists.
Each row of ``_kinds.ASSERTION_KINDS`` becomes a class here (``ContainsAnyEvaluator`` for
``contains-any``), made on first use: its ``name`` is the row's snake_case spelling, its config takes the
row's kind of ``value`` and names an unnamed entry with the row's ``auto_name``; scoring calls the row's
check (``_checks``, shared with ``agentevals eval assert``).

    >>> from agentevals.evaluators.agentv.assertions import ContainsAnyEvaluator
    >>> ContainsAnyEvaluator.name, ContainsAnyEvaluator.Config.auto_name
    ('contains_any', 'contains-any-{value_count}')
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final

from pydantic import Field, model_validator

from ..base import EvalContext
from ._base import AgentVConfig, AgentVEvaluator, Outcome
from ._checks import Check, compile_js_regex
from ._kinds import ASSERTION_KINDS, AssertionKind, ValueKind
from ._view import CaseView

__all__ = ["AssertionEvaluator", "evaluator_class", *(row.class_name for row in ASSERTION_KINDS.values())]


class _ValueConfig(AgentVConfig):
    value: str = Field(min_length=1)
    """The text to look for (a number is read as its text)."""


class _ValuesConfig(AgentVConfig):
    value: list[str] = Field(min_length=1)
    """The texts to look for: a non-empty list (numbers are read as their text)."""


class _PatternConfig(_ValueConfig):
    flags: str = ""
    """JavaScript flags: ``i`` ignore case, ``m`` multi-line, ``s`` dot matches newline."""

    @model_validator(mode="after")
    def _compiles(self) -> _PatternConfig:
        try:
            compile_js_regex(self.value, self.flags)
        except re.error as exc:
            raise ValueError(f"invalid regex {self.value!r}: {exc}") from None
        return self


_CONFIGS: Final[dict[ValueKind, type[AgentVConfig]]] = {
    "string": _ValueConfig, "strings": _ValuesConfig, "regex": _PatternConfig, "none": AgentVConfig,
}
"""The config base of each kind of ``value``."""


class AssertionEvaluator(AgentVEvaluator):
    """An assertion: a pure check of the answer text, scored 0 or 1 with AgentV's hit and miss texts."""

    kind: ClassVar[AssertionKind]
    """The table row this class scores."""
    needs_spans: ClassVar[bool] = False  # reads the answer text only
    default_timeout: ClassVar[float] = 10.0  # a cheap check: seconds, not the 300 s of LLM judges

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        if self.kind.value == "regex":
            from ...execution.inprocess import run_in_thread

            # The engine's own timeout can overshoot by seconds on a catastrophic pattern; the watched thread
            # ends the row at the deadline (the matcher releases the GIL, then stops at its own timeout).
            config: Any = self.config
            result = await run_in_thread(self.apply, view.answer, timeout=self.timeout,
                                         what=f"{self.kind.name} /{config.value}/{config.flags}")
        else:
            result = self.apply(view.answer)
        return Outcome(result.score, hits=result.hits, misses=result.misses)

    def apply(self, answer: str) -> Check:
        """Check ``answer`` (AgentV's candidate: the last turn's final response)."""
        kind = self.kind
        if kind.value == "none":  # no getattr probing: a pydantic miss raises, and this runs once per case
            return kind.run(answer)
        config: Any = self.config  # the row's config: _ValueConfig, _ValuesConfig or _PatternConfig
        if kind.value == "regex":
            return kind.run(answer, config.value, flags=config.flags, timeout=self.timeout)
        return kind.run(answer, config.value)


def _make(row: AssertionKind) -> type[AssertionEvaluator]:
    base = _CONFIGS[row.value]

    class Config(base):  # type: ignore[misc,valid-type]  # a base chosen at run time, by the row's value kind
        auto_name: ClassVar[str | None] = row.auto_name
        type: str = row.type_name

    Config.__qualname__ = f"{row.class_name}.Config"
    Config.__module__ = __name__
    namespace = {"__doc__": row.summary, "__module__": __name__, "__qualname__": row.class_name,
                 "name": row.type_name, "aliases": row.spellings[1:], "kind": row, "Config": Config}
    return type(row.class_name, (AssertionEvaluator,), namespace)


def evaluator_class(row: AssertionKind) -> type[AssertionEvaluator]:
    """The evaluator class of ``row`` (made once, then kept in this module as ``row.class_name``)."""
    cls = globals().get(row.class_name)
    if not (isinstance(cls, type) and issubclass(cls, AssertionEvaluator) and cls.kind is row):
        cls = globals()[row.class_name] = _make(row)
    return cls


def forget(row: AssertionKind) -> None:
    """Drop the class made for an earlier row of this name (``add_assertion_kind(..., replace=True)``)."""
    globals().pop(row.class_name, None)


def __getattr__(name: str) -> type[AssertionEvaluator]:
    """``ContainsEvaluator`` and the other classes, made from their rows on first use (PEP 562)."""
    for row in ASSERTION_KINDS.values():
        if row.class_name == name:
            return evaluator_class(row)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
