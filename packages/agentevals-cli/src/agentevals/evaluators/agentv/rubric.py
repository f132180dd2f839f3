"""AgentV ``rubric`` / ``rubrics``: an LLM judge checks a list of criteria (checklist or 0-10 score ranges)."""

from __future__ import annotations

import math
from typing import Any

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator, model_validator

from ...core._docs import describe_fields
from ...results import MetricResult, Verdict
from ...results.scoring import running_sum
from ..base import EvalContext
from ._base import AgentVEvaluator, Outcome
from ._judge import ANSWER_SECTION, JudgeConfig, JudgeParseError, ask_judge, judge_settings, probe_prompt
from ._view import CaseView

__all__ = ["RubricEvaluator", "RubricItem", "grade_rubrics"]


class ScoreRange(BaseModel):
    """One band of a 0-10 scale."""

    model_config = ConfigDict(extra="forbid")

    score_range: tuple[int, int]
    outcome: str = Field(validation_alias=AliasChoices("outcome", "expected_outcome", "description"))


def _item_schema(schema: dict[str, Any], cls: type) -> None:
    """The published schema lists what the model reads: ``outcome``'s other spellings, the map form of ranges."""
    describe_fields(schema, cls)
    properties = schema["properties"]
    for alias in ("criteria", "expected_outcome", "description"):
        properties[alias] = {"type": "string", "description": "Same as ``outcome`` (AgentV 5 items write ``criteria``)."}
    properties["score_ranges"]["anyOf"].insert(1, {
        "type": "object", "additionalProperties": {"type": "string"},
        "description": "Shorthand map: lower bound (0-10) → outcome, e.g. ``{0: Wrong, 7: Right}``."})


class RubricItem(BaseModel):
    """One criterion."""

    model_config = ConfigDict(extra="forbid", json_schema_extra=_item_schema)

    id: str = ""
    """Identifier (default ``rubric-<n>``)."""
    outcome: str = Field(default="", validation_alias=AliasChoices("outcome", "expected_outcome", "description", "criteria"))
    """What a good answer does (``expected_outcome`` and ``description`` are accepted too)."""
    weight: float = Field(default=1.0, ge=0)
    required: bool | None = None
    """Checklist: an unmet required item makes the verdict fail (default true, as AgentV's parser).
    Score ranges: ``true`` means the item must score 10."""
    required_min_score: int | None = Field(default=None, ge=0, le=10)
    """Score ranges: minimum 0-10 score, else the verdict is fail."""
    min_score: float | None = Field(default=None, gt=0, le=1)
    """Score ranges, AgentV 4+'s gate: minimum normalised score (score / 10) in (0, 1], else the verdict is
    fail (``0.7`` is ``required_min_score: 7``)."""
    score_ranges: list[ScoreRange] | None = None
    """Bands covering 0-10: a list of ``{score_range: [lo, hi], outcome}`` or a map ``{lower bound: outcome}``."""

    @field_validator("score_ranges", mode="before")
    @classmethod
    def _ranges(cls, value: Any) -> Any:
        if isinstance(value, dict):
            bounds = sorted((int(k), v) for k, v in value.items())
            return [{"score_range": [lo, (bounds[i + 1][0] - 1) if i + 1 < len(bounds) else 10], "outcome": text}
                    for i, (lo, text) in enumerate(bounds)]
        return value

    @model_validator(mode="after")
    def _check(self) -> RubricItem:
        if self.score_ranges:
            covered: list[int] = []
            for band in sorted(self.score_ranges, key=lambda b: b.score_range[0]):
                lo, hi = band.score_range
                if not 0 <= lo <= hi <= 10:
                    raise ValueError(f"score_range [{lo}, {hi}] must be integers with 0 <= lo <= hi <= 10")
                covered += range(lo, hi + 1)
            if sorted(covered) != list(range(11)):
                raise ValueError("score_ranges must start at 0, not overlap, and cover every score 0-10")
        elif not self.outcome:
            raise ValueError("a rubric item needs 'outcome' (or score_ranges)")
        return self


def rubric_items(value: Any) -> Any:
    """Strings become items; ids default to ``rubric-<n>``."""
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        return value
    items = []
    for index, item in enumerate(value, start=1):
        item = {"outcome": item} if isinstance(item, str) else item
        if isinstance(item, dict) and not item.get("id"):
            item = {**item, "id": f"rubric-{index}"}
        items.append(item)
    return items


def _context(view: CaseView, criteria: str) -> list[str]:
    parts = ["[[ ## question ## ]]", view.question, "", "[[ ## criteria ## ]]", criteria, ""]
    if view.reference_answer.strip():
        parts += ["[[ ## reference_answer ## ]]", view.reference_answer, ""]
    return [*parts, ANSWER_SECTION, view.answer, ""]


def _weight_label(item: RubricItem) -> str:
    return "" if item.weight == 1.0 else f" (weight: {item.weight:g})"


CHECKLIST_SCHEMA = """You are an expert evaluator. Evaluate the candidate answer against each rubric item.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (rubric id)",
      "satisfied": boolean,
      "reasoning": "string (brief explanation)"
    }
  ],
  "overall_reasoning": "string (summary)"
}"""

RANGES_SCHEMA = """You are an expert evaluator. Score the candidate answer on each criterion.
You must return a valid JSON object matching this schema:
{
  "checks": [
    {
      "id": "string (criterion id)",
      "score": integer (0-10),
      "reasoning": "string (brief explanation for score)"
    }
  ],
  "overall_reasoning": "string (summary, optional)"
}

Important: The "score" must be an integer from 0 to 10 that falls within one of the defined score ranges for that criterion."""


def checklist_prompt(view: CaseView, criteria: str, items: list[RubricItem]) -> str:
    lines = ["You are an expert evaluator. Evaluate the candidate answer against each rubric item below.", "",
             *_context(view, criteria), "[[ ## rubrics ## ]]"]
    for item in items:
        required = " (REQUIRED)" if item.required is not False else ""
        lines.append(f"- [{item.id}]{required}{_weight_label(item)}: {item.outcome}")
    return "\n".join([*lines, "", "For each rubric, determine if it is satisfied and provide brief reasoning."])


def ranges_prompt(view: CaseView, criteria: str, items: list[RubricItem]) -> str:
    lines = ["You are an expert evaluator. Score the candidate answer on each criterion below using the provided "
             "score ranges.",
             "For each criterion, output an integer score from 0 to 10 based on which score range best matches "
             "the answer.", "", *_context(view, criteria), "[[ ## scoring_criteria ## ]]"]
    for item in items:
        minimum = _min_score(item)
        gate = f" [REQUIRED: min score {minimum}]" if minimum is not None else ""
        lines += ["", f"### Criterion: {item.id}{_weight_label(item)}{gate}"]
        if item.outcome:
            lines.append(f"Description: {item.outcome}")
        if item.score_ranges:
            lines.append("Score ranges:")
            for band in item.score_ranges:
                lo, hi = band.score_range
                lines.append(f"  - Score {lo if lo == hi else f'{lo}-{hi}'}: {band.outcome}")
    return "\n".join([*lines, "", "For each criterion, provide an integer score 0-10 that matches one of its "
                                 "defined score ranges."])


def _min_score(item: RubricItem) -> int | None:
    if item.required_min_score is not None:
        return item.required_min_score
    if item.min_score is not None:  # score / 10 < min_score fails: the least passing integer score
        return math.ceil(round(item.min_score * 10, 9))
    return 10 if item.required is True else None


def _judged(data: Any, field: str, items: list[RubricItem]) -> list[tuple[RubricItem, dict[str, Any]]]:
    """The judge's checks of known ids, validated (``satisfied`` a bool, ``score`` an integer 0-10)."""
    if not isinstance(data, dict) or not isinstance(data.get("checks"), list):
        raise ValueError("reply has no 'checks' list")
    by_id = {item.id: item for item in items}
    pairs = []
    for check in data["checks"]:
        if not isinstance(check, dict) or not isinstance(check.get("id"), str):
            raise ValueError("every check needs an 'id'")
        value = check.get(field)
        if field == "satisfied" and not isinstance(value, bool):
            raise ValueError(f"check {check['id']!r}: 'satisfied' must be true or false")
        if field == "score" and (isinstance(value, bool) or not isinstance(value, (int, float))
                                 or not float(value).is_integer() or not 0 <= value <= 10):
            raise ValueError(f"check {check['id']!r}: 'score' must be an integer 0-10, got {value!r}")
        if check["id"] in by_id:
            pairs.append((by_id[check["id"]], check))
    return pairs


def _outcome(earned: float, total: float, hits: list[str], misses: list[str], data: dict[str, Any],
             failed_required: bool, **details: Any) -> Outcome:
    reasoning = data.get("overall_reasoning")
    return Outcome(min(1.0, max(0.0, earned / total)) if total > 0 else 0.0, hits=hits, misses=misses,
                   reasoning=reasoning if isinstance(reasoning, str) else None,
                   verdict=Verdict.FAIL if failed_required else None, details=details)


def score_checklist(data: Any, items: list[RubricItem]) -> Outcome:
    """Σ weight of satisfied items / Σ weight of the items the judge checked; an unmet required item fails."""
    pairs = _judged(data, "satisfied", items)
    text = {i.id: f"[{i.id}] {i.outcome}: {c.get('reasoning') or ''}".rstrip(": ") for i, c in pairs}
    return _outcome(running_sum(i.weight for i, c in pairs if c["satisfied"]), running_sum(i.weight for i, _ in pairs),
                    [text[i.id] for i, c in pairs if c["satisfied"]], [text[i.id] for i, c in pairs if not c["satisfied"]],
                    data, any(not c["satisfied"] and i.required is not False for i, c in pairs))


def score_ranges(data: Any, items: list[RubricItem]) -> Outcome:
    """Σ (score / 10 · weight) / Σ weight; an item below its minimum fails the verdict; hit when ≥ 7."""
    hits: list[str] = []
    misses: list[str] = []
    raw: dict[str, int] = {}
    failed_required = False
    pairs = _judged(data, "score", items)
    for item, check in pairs:
        value = raw[item.id] = int(check["score"])
        band = next((b.outcome for b in item.score_ranges or [] if b.score_range[0] <= value <= b.score_range[1]), "")
        reason = f": {check['reasoning']}" if check.get("reasoning") else ""
        text = f"[{item.id}] {item.outcome or item.id} - Score: {value}/10 ({band}){reason}"
        minimum = _min_score(item)
        gated = minimum is not None and value < minimum
        failed_required = failed_required or gated
        (hits if value >= 7 and not gated else misses).append(text)
    return _outcome(running_sum(raw[i.id] / 10 * i.weight for i, _ in pairs), running_sum(i.weight for i, _ in pairs),
                    hits, misses,
                    data, failed_required, raw_scores=raw, normalization="score / 10", aggregation="weighted_average")


async def grade_rubrics(evaluator: AgentVEvaluator, view: CaseView, ctx: EvalContext,
                        items: list[RubricItem]) -> Outcome | MetricResult:
    """Ask the judge about ``items`` and score its reply (checklist, or score ranges when any item has them)."""
    cfg = evaluator.config
    if not isinstance(cfg, JudgeConfig):  # rubric and llm_judge entries, the two callers, are judge configs
        raise TypeError(f"{evaluator.name} grades rubrics only with a judge config, got {type(cfg).__name__}")
    settings = judge_settings(cfg, ctx.options)
    reason = settings.unavailable_reason()
    if reason:
        return evaluator.not_evaluated(f"LLM judge unavailable: {reason}")
    criteria = getattr(cfg, "criteria", None)
    if criteria is None:
        criteria = view.criteria
    ranged = any(item.score_ranges for item in items)
    probe = ctx.options.judge_probe
    shown = list(reversed(items)) if probe is not None and probe.kind == "label-order" else items
    prompt = (ranges_prompt if ranged else checklist_prompt)(view, criteria, shown)
    prompt = probe_prompt(probe, prompt, answer=view.answer.strip(), case_id=ctx.case_id)
    system, scorer = (RANGES_SCHEMA, score_ranges) if ranged else (CHECKLIST_SCHEMA, score_checklist)
    try:
        outcome = await ask_judge(settings, system, prompt, lambda data: scorer(data, items),
                                  timeout=cfg.timeout, temperature=cfg.temperature)
    except JudgeParseError as exc:
        return evaluator.not_evaluated(str(exc))
    outcome.details = {**outcome.details, "judge_model": settings.model}
    return outcome


class RubricEvaluator(AgentVEvaluator):
    """A checklist (``satisfied`` per item, weighted) or analytic 0-10 scores per criterion."""

    name = "rubric"
    aliases = ("rubrics",)

    class Config(JudgeConfig):
        type: str = "rubric"
        rubrics: list[RubricItem] = Field(min_length=1, validation_alias=AliasChoices("rubrics", "criteria"))
        """The criteria: strings or ``{id, outcome, weight, required, required_min_score | min_score, score_ranges}``
        (``type: rubrics`` writes this list as ``criteria:``)."""

        @field_validator("rubrics", mode="before")
        @classmethod
        def _items(cls, value: Any) -> Any:
            return rubric_items(value)

        @model_validator(mode="after")
        def _unique(self) -> RubricEvaluator.Config:
            ids = [item.id for item in self.rubrics]
            duplicates = sorted({i for i in ids if ids.count(i) > 1})
            if duplicates:
                raise ValueError(f"duplicate rubric id(s): {', '.join(duplicates)}")
            return self

    config: Config

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome | MetricResult:
        return await grade_rubrics(self, view, ctx, self.config.rubrics)

