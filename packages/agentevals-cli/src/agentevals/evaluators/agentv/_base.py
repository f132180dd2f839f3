"""What every AgentV-family evaluator shares: common config, the scored outcome, negation, JS-like helpers."""

from __future__ import annotations

import math
import re
from abc import abstractmethod
from dataclasses import dataclass, field, replace
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, ClassVar

from pydantic import ConfigDict, Field, model_validator

from ...core._docs import describe_fields
from ...results import MetricResult, Status, Verdict
from ..base import BaseEvaluator, EvalContext, EvaluatorConfig
from ._checks import loads_strict
from ._rules import Rules, verdict_of
from ._view import CaseView
from ._vocabulary import CURRENT_TYPES, METRIC_SCHEMA, check_current_fields, normalize_assertion

__all__ = [
    "PASS_THRESHOLD",
    "AgentVConfig",
    "AgentVEvaluator",
    "Outcome",
    "clamp",
    "js_equal",
    "js_fixed",
    "js_num",
    "js_typeof",
    "parse_json_from_text",
]

PASS_THRESHOLD = 0.8
"""AgentV's quality pass line: a score at or above it is verdict ``pass`` (and the default ``required`` gate)."""


def clamp(value: Any) -> float:
    """AgentV ``clampScore``: non-numbers, NaN and ±inf become 0; the rest is clamped to [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def js_num(value: float) -> str:
    """A number as JavaScript prints it in a template string (``5`` not ``5.0``)."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 1e21 else repr(float(value))


def js_fixed(value: float, digits: int) -> str:
    """``Number.prototype.toFixed``: the exact binary value rounded with ties away from zero
    (``0.125`` → ``0.13``, where Python's format rounds to even)."""
    if not math.isfinite(value) or abs(value) >= 1e21:
        return js_num(value) if math.isfinite(value) else ("NaN" if math.isnan(value) else "Infinity")
    return str(Decimal(value or 0.0).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))


def js_typeof(value: Any) -> str:
    """JavaScript's ``typeof`` of a JSON value (``null`` and arrays are ``object``)."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object" if value is None or isinstance(value, (dict, list)) else "undefined"


def js_equal(a: Any, b: Any) -> bool:
    """AgentV ``deepEqual`` on JSON values: 1 == 1.0, but true != 1 and key order does not matter."""
    if js_typeof(a) != js_typeof(b):
        return False
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(js_equal(x, y) for x, y in zip(a, b, strict=False))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(js_equal(a[k], b[k]) for k in a)
    if isinstance(a, (dict, list)) or isinstance(b, (dict, list)):
        return False
    return bool(a == b)


_FENCE = re.compile(r"```json\n?|```")
_BLOB = re.compile(r"\{[\s\S]*\}")


def parse_json_from_text(text: Any) -> Any:
    """AgentV ``parseJsonFromText``: drop ``` fences, take the outermost ``{…}`` blob, parse it."""
    cleaned = _FENCE.sub("", text).strip() if isinstance(text, str) else ""
    match = _BLOB.search(cleaned)
    return loads_strict(match.group(0) if match else cleaned)


@dataclass
class Outcome:
    """What an AgentV evaluator computed, before negation and status: AgentV's ``EvaluationScore``."""

    score: float
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    reasoning: str | None = None
    details: dict[str, Any] = field(default_factory=dict)
    verdict: Verdict | None = None
    """Set only when the type decides the verdict itself (rubric gates, threshold/code aggregators)."""

    def final_verdict(self, rules: Rules = "2.19") -> Verdict:
        """The type's own verdict, else the score's under ``rules``."""
        return self.verdict or verdict_of(self.score, rules)

    def negated(self, rules: Rules = "2.19") -> Outcome:
        """AgentV ``negate: true`` (``negateScore``): 1 - score, pass↔fail, hits↔misses, reasoning marked."""
        flipped = {Verdict.PASS: Verdict.FAIL, Verdict.FAIL: Verdict.PASS}
        verdict = flipped.get(self.final_verdict(rules), self.final_verdict(rules))
        original = js_fixed(self.score, 2)
        reasoning = (f"[Negated] {self.reasoning} (original score: {original})" if self.reasoning
                     else f"[Negated] Original score: {original}")
        return replace(self, score=clamp(1.0 - self.score), hits=list(self.misses), misses=list(self.hits),
                       reasoning=reasoning, verdict=verdict)


def _name_is_optional(schema: dict[str, Any], model: type) -> None:
    """The published schema says what the loader does: an unnamed entry gets AgentV's name, and AgentV 5's
    ``metric:`` is a name too (and, as every entry, its fields' docstrings describe them)."""
    describe_fields(schema, model)
    if "name" in schema.get("required", []):
        schema["required"] = [key for key in schema["required"] if key != "name"]
    schema.setdefault("properties", {})["metric"] = METRIC_SCHEMA


class AgentVConfig(EvaluatorConfig):
    """Fields every AgentV-family entry accepts on top of name/type/weight/required."""

    model_config = ConfigDict(coerce_numbers_to_str=True, json_schema_extra=_name_is_optional)
    auto_name: ClassVar[str | None] = None
    """``str.format`` pattern of the name AgentV gives an unnamed assertion (e.g. ``contains-{value}``);
    ``{<key>_count}`` is the length of a list field (``contains-any-{value_count}``)."""

    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """Score at or above this is PASSED; unset = AgentV's verdict decides (pass at 0.8)."""
    negate: bool = False
    """Invert the result: score → 1 - score, pass ↔ fail, hits ↔ misses."""

    @model_validator(mode="before")
    @classmethod
    def _default_name(cls, data: Any) -> Any:
        data = _later_vocabulary(data)
        if isinstance(data, dict) and not data.get("name"):
            type_name = data.get("type") or cls.model_fields["type"].default
            name = type_name
            if cls.auto_name:
                values = {k: "" if v is None else str(v) for k, v in data.items()}
                values.update({f"{k}_count": str(len(v)) for k, v in data.items() if isinstance(v, list)})
                try:
                    name = cls.auto_name.format_map(_Defaulting(values))
                except (KeyError, IndexError, ValueError):
                    name = type_name
            data = {**data, "name": name}
        return data


def _later_vocabulary(data: Any) -> Any:
    """AgentV 4/5 spellings (``metric``, ``value``, ``script``, ``llm-rubric``, ``skill-used``…) as v2.19's."""
    if not isinstance(data, dict) or not (data.get("type") in CURRENT_TYPES or "metric" in data):
        return data
    check_current_fields(data)
    entries = normalize_assertion(data)
    if len(entries) != 1:
        raise ValueError(f"'{data.get('type')}' with {len(entries)} skills: write one entry per skill")
    return entries[0]


class _Defaulting(dict):
    def __missing__(self, key: str) -> str:
        return ""


class AgentVEvaluator(BaseEvaluator):
    """Base of the family: builds the case view, lets the type score it, applies negate and status."""

    Config: ClassVar[type[EvaluatorConfig]] = AgentVConfig
    config: AgentVConfig
    needs_spans: ClassVar[bool] = True  # the case view reads tool span times and cost attributes
    rules: Rules = "2.19"
    """AgentV's scoring rules this entry follows (``_rules``): set by the config loader from the config's format."""

    def use_rules(self, rules: Rules) -> None:
        """Score under ``rules`` (the loader calls this with the config's format; composites pass it on)."""
        self.rules = rules

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        outcome = await self.score(CaseView.of(ctx), ctx)
        if isinstance(outcome, MetricResult):
            return outcome
        return self.result(outcome)

    @abstractmethod
    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome | MetricResult:
        """Score one case; return a ``MetricResult`` only for NOT_EVALUATED."""

    def result(self, outcome: Outcome) -> MetricResult:
        """Turn an outcome into this evaluator's row (negation first, like AgentV)."""
        if self.config.negate:
            outcome = outcome.negated(self.rules)
        score = clamp(outcome.score)
        verdict = outcome.final_verdict(self.rules)
        if self.config.threshold is None:
            threshold, passed = PASS_THRESHOLD, verdict == Verdict.PASS
        else:
            forced_fail = verdict == Verdict.FAIL and verdict_of(score, self.rules) != Verdict.FAIL
            threshold, passed = self.config.threshold, score >= self.config.threshold and not forced_fail
        return MetricResult(
            name=self.config.name, type=self.name, status=Status.PASSED if passed else Status.FAILED,
            score=score, threshold=threshold, verdict=verdict, hits=list(outcome.hits),
            misses=list(outcome.misses), reasoning=outcome.reasoning, details=dict(outcome.details),
        )

    def not_evaluated(self, reason: str) -> MetricResult:
        return MetricResult.not_evaluated(self.config.name, reason, type=self.name)
