"""AgentV ``field_accuracy``: fields of a JSON answer against the golden answer (exact, numeric, date)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from ...core._docs import ATTRIBUTE_DOCS
from ...results import MetricResult
from ...results.scoring import running_sum
from ..base import EvalContext
from ._base import (
    AgentVConfig,
    AgentVEvaluator,
    Outcome,
    js_equal,
    js_fixed,
    js_num,
    js_typeof,
    parse_json_from_text,
)
from ._view import CaseView

__all__ = ["FieldAccuracyEvaluator"]

_MISSING = object()


class FieldSpec(BaseModel):
    """One field to compare."""

    model_config = ConfigDict(extra="forbid", **ATTRIBUTE_DOCS)

    path: str = Field(min_length=1)
    """Dot path with ``[i]`` indexes, e.g. ``invoice.line_items[0].amount``."""
    match: Literal["exact", "numeric_tolerance", "date"] = "exact"
    """exact: deep equality; numeric_tolerance: within ``tolerance``; date: same calendar day."""
    required: bool = True
    """A missing required field scores 0; a missing optional one does not count."""
    weight: float = Field(default=1.0, ge=0)
    tolerance: float = Field(default=0.0, ge=0)
    """Allowed difference (numeric_tolerance)."""
    relative: bool = False
    """Tolerance relative to the expected value (|a - e| / |e|)."""
    formats: list[str] | None = None
    """Date formats that decide ambiguous dates (``MM/DD/YYYY`` or ``DD/MM/YYYY``); default both → inferred."""


def resolve_path(data: Any, path: str) -> Any:
    for part in (p for p in re.split(r"\.|\[|\]", path) if p):
        if isinstance(data, list) and part.isdigit():
            index = int(part)
            data = data[index] if index < len(data) else _MISSING
        elif isinstance(data, dict):
            data = data.get(part, _MISSING)
        else:
            return _MISSING
        if data is _MISSING:
            return _MISSING
    return data


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = re.match(r"\s*[+-]?(\d+\.?\d*(e[+-]?\d+)?|\.\d+(e[+-]?\d+)?|Infinity)", value, re.IGNORECASE)
        if match:
            text = match.group(0).strip()
            return float(text.replace("Infinity", "inf")) if "Infinity" in text else float(text)
    return None


_MONTHS = {name: i + 1 for i, names in enumerate([
    ("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
    ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
    ("dec", "december")]) for name in names}
_DEFAULT_FORMATS = ["YYYY-MM-DD", "DD-MMM-YYYY", "MM/DD/YYYY", "DD/MM/YYYY", "MM-DD-YYYY", "DD-MM-YYYY"]


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_date(text: str, formats: list[str]) -> date | None:
    """ISO dates/times, ``15-JAN-2025`` / ``Jan 15, 2025`` / ``15 Jan 2025``, and numeric D/M/Y orders."""
    text = text.strip()
    if not text:
        return None
    iso = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})([T ].*)?", text) or re.fullmatch(r"(\d{4})/(\d{1,2})/(\d{1,2})", text)
    if iso:
        if iso.lastindex and iso.lastindex >= 4 and iso.group(4):
            try:
                moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                return None
            if moment.tzinfo is not None:
                moment = moment.astimezone(timezone.utc)
            return moment.date()
        return _safe_date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
    named = (re.fullmatch(r"(\d{1,2})[- ]([A-Za-z]{3,9})\.?[- ,]+(\d{4})", text)
             or re.fullmatch(r"([A-Za-z]{3,9})\.? (\d{1,2}),? (\d{4})", text))
    if named:
        groups = named.groups()
        day, month_name = (groups[0], groups[1]) if groups[0].isdigit() else (groups[1], groups[0])
        month = _MONTHS.get(month_name.lower())
        return _safe_date(int(groups[2]), month, int(day)) if month else None
    numeric = re.fullmatch(r"(\d{1,2})[/-](\d{1,2})[/-](\d{4})", text)
    if not numeric:
        return None
    first, second, year = (int(g) for g in numeric.groups())
    us = any("MM/DD" in f or "MM-DD" in f for f in formats)
    eu = any("DD/MM" in f or "DD-MM" in f for f in formats)
    if us and not eu:
        return _safe_date(year, first, second)
    if eu and not us:
        return _safe_date(year, second, first)
    if first > 12 and second <= 12:
        return _safe_date(year, second, first)
    return _safe_date(year, first, second)


@dataclass
class _FieldScore:
    score: float
    weight: float
    hit: bool
    message: str


class FieldAccuracyEvaluator(AgentVEvaluator):
    """Each configured field of the JSON answer against the same field of the golden final response."""

    name = "field_accuracy"
    aliases = ("field-accuracy",)
    default_timeout: ClassVar[float] = 10.0  # deterministic and cheap
    needs_spans: ClassVar[bool] = False  # reads the answer and golden texts only

    class Config(AgentVConfig):
        type: str = "field_accuracy"
        fields: list[FieldSpec] = Field(min_length=1)
        """The fields to compare."""
        aggregation: Literal["weighted_average", "all_or_nothing"] = "weighted_average"
        """weighted_average: Σ score·weight / Σ weight; all_or_nothing: 1 only when every field matches."""

    config: Config

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome | MetricResult:
        if not view.has_golden:
            return self.not_evaluated("no eval case matched: field_accuracy compares against the golden answer")
        fields = self.config.fields
        try:
            candidate = parse_json_from_text(view.answer)
        except ValueError:
            return Outcome(0.0, misses=["Failed to parse candidate answer as JSON"],
                           reasoning="Candidate answer is not valid JSON")
        expected = self._expected(view)
        if expected is None:
            return Outcome(0.0, misses=["No expected data found in expected_output"],
                           reasoning="Could not extract expected data from expected_output")
        results = [self._field(spec, candidate, expected) for spec in fields]
        hits = [r.message for r in results if r.hit]
        misses = [r.message for r in results if not r.hit]
        if self.config.aggregation == "all_or_nothing":
            score = 0.0 if misses else 1.0
        else:
            total = running_sum(r.weight for r in results)
            score = running_sum(r.score * r.weight for r in results) / total if total else (0.0 if results else 1.0)
        return Outcome(score, hits=hits[:4], misses=misses[:4], reasoning=f"{len(hits)}/{len(results)} fields matched",
                       details={"fields": {spec.path: r.score for spec, r in zip(fields, results, strict=False)}})

    @staticmethod
    def _expected(view: CaseView) -> Any:
        """Content of the last golden message that is (or parses as) JSON."""
        for message in reversed(view.expected_output):
            content = message.get("content")
            if isinstance(content, (dict, list)) and content:
                return content
            if isinstance(content, str) and content:
                try:
                    return parse_json_from_text(content)
                except ValueError:
                    continue
        return None

    def _field(self, spec: FieldSpec, candidate: Any, expected: Any) -> _FieldScore:
        path, weight = spec.path, spec.weight
        want = resolve_path(expected, spec.path)
        got = resolve_path(candidate, spec.path)
        if want is _MISSING:
            return _FieldScore(1.0, weight, True, f"{path}: no expected value")
        if got is _MISSING:
            if spec.required:
                return _FieldScore(0.0, weight, False, f"{path} (required, missing)")
            return _FieldScore(1.0, 0.0, True, f"{path}: optional field missing")
        if spec.match == "numeric_tolerance":
            return self._numeric(spec, got, want)
        if spec.match == "date":
            return self._date(spec, got, want)
        if js_equal(got, want):
            return _FieldScore(1.0, weight, True, path)
        if js_typeof(got) != js_typeof(want):
            return _FieldScore(0.0, weight, False,
                               f"{path} (type mismatch: got {js_typeof(got)}, expected {js_typeof(want)})")
        return _FieldScore(0.0, weight, False, f"{path} (value mismatch)")

    @staticmethod
    def _numeric(spec: FieldSpec, got: Any, want: Any) -> _FieldScore:
        path, weight = spec.path, spec.weight
        a, e = _number(got), _number(want)
        if a is None or e is None:
            return _FieldScore(0.0, weight, False, f"{path} (non-numeric value)")
        if a in (float("inf"), float("-inf")) or e in (float("inf"), float("-inf")):
            return _FieldScore(0.0, weight, False, f"{path} (invalid numeric value)")
        diff = abs(a - e)
        within = (diff if e == 0 else diff / abs(e)) <= spec.tolerance if spec.relative else diff <= spec.tolerance
        if within:
            return _FieldScore(1.0, weight, True, f"{path} (within tolerance: diff={js_fixed(diff, 2)})")
        return _FieldScore(0.0, weight, False,
                           f"{path} (outside tolerance: diff={js_fixed(diff, 2)}, tolerance={js_num(spec.tolerance)})")

    @staticmethod
    def _date(spec: FieldSpec, got: Any, want: Any) -> _FieldScore:
        path, weight = spec.path, spec.weight
        formats = spec.formats or _DEFAULT_FORMATS
        a = parse_date(_js_string(got), formats)
        e = parse_date(_js_string(want), formats)
        if a is None:
            return _FieldScore(0.0, weight, False, f"{path} (unparseable candidate date)")
        if e is None:
            return _FieldScore(0.0, weight, False, f"{path} (unparseable expected date)")
        if a == e:
            return _FieldScore(1.0, weight, True, path)
        return _FieldScore(0.0, weight, False, f"{path} (date mismatch: got {a.isoformat()}, expected {e.isoformat()})")


def _js_string(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
