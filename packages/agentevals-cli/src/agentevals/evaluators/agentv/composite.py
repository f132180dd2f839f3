"""AgentV ``composite`` / ``assert-set``: run member evaluators and combine them (weighted average, threshold,
script, LLM; an AgentV 5 ``assert-set`` without an aggregator: members' own weights, every one passing).

Verdicts follow the config's AgentV rules (``_rules``): under v2.19's a ``threshold`` aggregator counts
``borderline`` members as passing; under the current ones (AgentV 4.2+) only ``pass`` counts."""

from __future__ import annotations

import asyncio
import builtins
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, model_validator

from ...core._docs import ATTRIBUTE_DOCS
from ...core._validation import format_validation_error
from ...engine.options import RunOptions
from ...errors import AgentevalsError, ConfigError, EvaluatorFailure, first_line
from ...results import MetricResult, Status, Verdict
from ...results.scoring import running_sum
from ..base import BaseEvaluator, EvalContext, EvaluatorConfig
from ._base import AgentVConfig, AgentVEvaluator, Outcome
from ._judge import FREEFORM_SCHEMA, JudgeParseError, ask_judge, judge_settings, parse_freeform
from ._rules import Rules, passing_verdicts, verdict_of
from ._script import argv_of, run_script, script_arg, script_file
from ._view import CaseView
from .code_judge import judge_result

__all__ = ["CompositeEvaluator"]

DEFAULT_AGGREGATOR_PROMPT = """Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all evaluator results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail/borderline), and reasoning."""
"""AgentV v2.19's prompt."""
CURRENT_AGGREGATOR_PROMPT = """Review the following evaluation results:
{{EVALUATOR_RESULTS_JSON}}

Decide the final score and verdict based on all grader results.
Return a JSON object with: score (0.0-1.0), verdict (pass/fail), and reasoning."""
"""AgentV's prompt since borderline was removed."""

_SKIPPED = (Status.NOT_EVALUATED, Status.INFORMATIONAL)


class Aggregator(BaseModel):
    """How member results become one score."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, **ATTRIBUTE_DOCS)

    type: Literal["weighted_average", "threshold", "code_judge", "code-judge", "llm_judge", "llm-judge", "assert_set"]
    """weighted_average: Σ score·weight / Σ weight; threshold: share of members passing (pass; under v2.19's
    rules borderline too), pass when ≥ ``threshold``; code_judge: a script decides; llm_judge: an LLM decides;
    assert_set (what an AgentV 5 ``assert-set`` without ``aggregator`` means): Σ score·weight / Σ weight with
    the members' own ``weight``, passing when every member of nonzero weight passes (or, with the entry's
    ``threshold``, when the score reaches it)."""
    weights: dict[str, float] | None = None
    """weighted_average: member name → weight (default 1; the members' own ``weight`` is not used)."""
    threshold: float | None = Field(default=None, ge=0.0, le=1.0)
    """threshold: share of passing members needed."""
    path: str | None = None
    """code_judge: shell command (AgentV's form), run in ``cwd``."""
    command: list[str] | str | None = Field(default=None, validation_alias=AliasChoices("command", "script"))
    """code_judge: argv list (or shell string) instead of ``path``."""
    cwd: str | None = None
    timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    prompt: str | None = None
    """llm_judge: inline prompt or a file; ``{{EVALUATOR_RESULTS_JSON}}`` is replaced by the member results."""
    model: str | None = Field(default=None, validation_alias=AliasChoices("model", "target"))
    base_url: str | None = None
    api_key_env: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _known(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("type") in ("safety_gate", "all_or_nothing", "minimum", "maximum"):
            raise ValueError(f"'{data['type']}' is not an aggregator type; use weighted_average, threshold, "
                             "code_judge (a script such as a safety gate) or llm_judge")
        return data

    @model_validator(mode="after")
    def _needs(self) -> Aggregator:
        kind = self.kind
        if kind == "threshold" and self.threshold is None:
            raise ValueError("aggregator type threshold needs 'threshold' (0-1)")
        if kind == "code_judge" and not (self.path or self.command):
            raise ValueError("aggregator type code_judge needs 'path' (shell command) or 'command' (argv)")
        return self

    @property
    def kind(self) -> str:
        return self.type.replace("-", "_")


def member_verdict(result: MetricResult, rules: Rules) -> Verdict:
    """A scored member's AgentV verdict: its own, else its score's under ``rules`` (an error fails)."""
    if result.status == Status.ERROR:
        return Verdict.FAIL
    return result.verdict or verdict_of(0.0 if result.score is None else result.score, rules)


def member_json(result: MetricResult, rules: Rules = "2.19") -> dict[str, Any]:
    """A member's result as AgentV hands it to aggregators (camelCase, ``skip`` for not evaluated)."""
    skipped = result.status in _SKIPPED
    score = 0.0 if result.score is None else result.score
    verdict = "skip" if skipped else member_verdict(result, rules).value
    misses = [*result.misses, *[m for m in (result.error, result.reason if skipped else None) if m]]
    data: dict[str, Any] = {"score": score, "verdict": verdict, "hits": list(result.hits), "misses": misses,
                            "expectedAspectCount": max(len(result.hits) + len(misses), 1),
                            "reasoning": result.reasoning, "evaluatorRawRequest": None}
    if result.details:
        data["details"] = result.details
    return data


class CompositeEvaluator(AgentVEvaluator):
    """Members (built through the evaluator registry, run in parallel) combined by an ``aggregator``."""

    name = "composite"
    aliases = ("assert-set",)

    class Config(AgentVConfig):
        type: str = "composite"
        evaluators: list[dict[str, Any]] = Field(min_length=1, validation_alias=AliasChoices("evaluators", "assertions", "assert"))
        """Member entries, written like top-level entries (``assertions`` and ``assert`` are accepted too)."""
        aggregator: Aggregator
        """How members combine (an AgentV 5 ``assert-set`` written without one gets ``assert_set``)."""
        timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
        """Seconds for the whole composite (default: the members' longest plus the aggregator's)."""
        config: dict[str, Any] = Field(default_factory=dict)
        """AgentV 5's ``assert-set`` ``config``: given to members that take a ``config`` (``javascript``,
        ``script``), under their own."""
        # builtins.type: the field ``type`` above shadows the builtin in this class body
        _members: list[tuple[builtins.type[BaseEvaluator], EvaluatorConfig]] = PrivateAttr(default_factory=list)

        @model_validator(mode="after")
        def _build_members(self) -> CompositeEvaluator.Config:
            from .. import EVALUATOR_TYPES

            members, seen = [], set()
            for index, entry in enumerate(self.evaluators):
                label = f"member {index + 1}" + (f" '{entry['name']}'" if entry.get("name") else "")
                try:
                    cls = EVALUATOR_TYPES.get(str(entry.get("type") or ""))
                    if self.config and "config" in cls.Config.model_fields:
                        own = entry.get("config")
                        entry = {**entry, "config": {**self.config, **(own if isinstance(own, dict) else {})}}
                    config = cls.Config.model_validate(entry)
                except ConfigError as exc:
                    raise ValueError(f"{label}: {exc}") from None
                except ValidationError as exc:
                    raise ValueError(f"{label}: {format_validation_error(exc)}") from None
                if config.name in seen:
                    raise ValueError(f"{label}: duplicate member name '{config.name}'")
                seen.add(config.name)
                members.append((cls, config))
            self._members = members
            return self

    config: Config

    def __init__(self, config: EvaluatorConfig, *, base_dir: Path, options: RunOptions | None = None) -> None:
        super().__init__(config, base_dir=base_dir, options=options)
        self.members = [cls(cfg, base_dir=base_dir, options=options) for cls, cfg in self.config._members]

    def use_rules(self, rules: Rules) -> None:
        super().use_rules(rules)
        for member in self.members:  # members grade themselves under the same rules
            if isinstance(member, AgentVEvaluator):
                member.use_rules(rules)

    @property
    def timeout(self) -> float:
        if self.config.timeout is not None:
            return self.config.timeout
        known = [m.timeout for m in self.members]
        return max(known) + (self.config.aggregator.timeout or 0) if known else self.default_timeout

    @property
    def _cwd(self) -> Path:
        cwd = self.config.aggregator.cwd
        return self.resolve_path(cwd) if cwd else self.base_dir

    def _argv(self) -> list[str]:
        agg = self.config.aggregator
        return argv_of(agg.path) if agg.path else argv_of(agg.command or [])

    def check(self) -> None:
        for member in self.members:
            try:
                member.check()
            except ConfigError as exc:
                raise ConfigError(f"member '{member.config.name}': {exc}") from None
        if self.config.aggregator.kind == "code_judge":
            argv = self._argv()
            if script_arg(argv) is not None and script_file(argv, self._cwd) is None:
                raise ConfigError(f"aggregator script not found: {self._cwd / str(script_arg(argv))}")

    async def aclose(self) -> None:
        for member in self.members:
            await member.aclose()

    async def _run_member(self, member: BaseEvaluator, ctx: EvalContext) -> list[MetricResult]:
        try:
            outcome = await member.evaluate(ctx)
        except (AgentevalsError, Exception) as exc:
            line = first_line(exc)
            return [MetricResult.errored(member.config.name, f"Evaluator '{member.config.name}' failed: {line}",
                                         type=member.name, score=0.0, misses=[line])]
        return outcome if isinstance(outcome, list) else [outcome]

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome | MetricResult:
        runs = await asyncio.gather(*(self._run_member(m, ctx) for m in self.members))
        results = [r for batch in runs for r in batch]
        scores = [self._child(r) for r in results]
        kind = self.config.aggregator.kind
        if kind in ("weighted_average", "threshold", "assert_set") and all(r.status in _SKIPPED for r in results):
            reasons = "; ".join(f"{r.name}: {r.reason}" for r in results if r.reason)
            return self.not_evaluated(f"no member was evaluated ({reasons})" if reasons else "no member was evaluated")
        outcome: Outcome | MetricResult
        if kind == "weighted_average":
            outcome = self._weighted(results)
        elif kind == "threshold":
            outcome = self._threshold(results)
        elif kind == "assert_set":
            outcome = self._assert_set(results)
        elif kind == "code_judge":
            outcome = await self._code(results)
        else:
            outcome = await self._llm(results, ctx)
            if isinstance(outcome, MetricResult):
                return outcome
        # which of AgentV's rules graded the members and the composite (they differ on ``borderline``)
        outcome.details = {**outcome.details, "aggregator": kind, "agentv_rules": self.rules, "scores": scores}
        return outcome

    def _child(self, result: MetricResult) -> dict[str, Any]:
        data = result.model_dump(mode="json", exclude_none=True, exclude={"per_invocation_scores", "required"})
        data["weight"] = self._weight(result.name)
        return data

    def _weight(self, name: str) -> float:
        if self.config.aggregator.kind == "assert_set":  # AgentV 5: the members' own ``weight``
            return next((m.config.weight for m in self.members if m.config.name == name), 1.0)
        return (self.config.aggregator.weights or {}).get(name, 1.0)

    @staticmethod
    def _merged(results: list[MetricResult]) -> tuple[list[str], list[str], str | None]:
        hits = [f"[{r.name}] {h}" for r in results for h in r.hits]
        misses = [f"[{r.name}] {m}" for r in results for m in (r.misses or ([r.error] if r.error else []))]
        reasons = [f"{r.name}: {r.reasoning}" for r in results if r.reasoning]
        return hits, misses, "; ".join(reasons) if reasons else None

    def _weighted(self, results: list[MetricResult]) -> Outcome:
        counted = [r for r in results if r.status not in _SKIPPED]
        total = running_sum(self._weight(r.name) for r in counted)
        score = running_sum((r.score or 0.0) * self._weight(r.name) for r in counted) / total if total > 0 else 0.0
        hits, misses, reasoning = self._merged(results)
        return Outcome(score, hits=hits, misses=misses, reasoning=reasoning)

    def _threshold(self, results: list[MetricResult]) -> Outcome:
        counted = [r for r in results if r.status not in _SKIPPED]
        passing = [r for r in counted if member_verdict(r, self.rules) in passing_verdicts(self.rules)]
        score = len(passing) / len(counted)
        threshold = self.config.aggregator.threshold or 0.0
        hits, misses, reasoning = self._merged(results)
        summary = f"{len(passing)}/{len(counted)} evaluators passed (threshold {threshold:g})"
        return Outcome(score, hits=hits, misses=misses, reasoning=f"{summary}; {reasoning}" if reasoning else summary,
                       verdict=Verdict.PASS if score >= threshold else Verdict.FAIL)

    def _assert_set(self, results: list[MetricResult]) -> Outcome:
        """AgentV 5's ``AssertSetGrader``: weighted mean by the members' own weights; pass when the score reaches
        the entry's ``threshold``, else when every member of nonzero weight passes. Members that were not
        evaluated are left out (as the other aggregators leave out AgentV's ``skip``)."""
        counted = [r for r in results if r.status not in _SKIPPED]
        total = running_sum(self._weight(r.name) for r in counted)
        score = running_sum((r.score or 0.0) * self._weight(r.name) for r in counted) / total if total > 0 else 0.0
        threshold = self.config.threshold
        if threshold is not None:
            passed = score >= threshold
        else:
            passed = all(self._weight(r.name) == 0 or member_verdict(r, self.rules) == Verdict.PASS for r in counted)
        hits, misses, reasoning = self._merged(results)
        return Outcome(score, hits=hits, misses=misses, reasoning=reasoning,
                       verdict=Verdict.PASS if passed else Verdict.FAIL)

    async def _code(self, results: list[MetricResult]) -> Outcome:
        payload = {"results": {r.name: member_json(r, self.rules) for r in results}}
        what = f"composite '{self.config.name}' aggregator"
        data = await run_script(self._argv(), payload, cwd=self._cwd, timeout=self.config.aggregator.timeout, what=what)
        outcome = judge_result(data)
        if data.get("verdict") in [v.value for v in (Verdict.FAIL, *passing_verdicts(self.rules))]:
            outcome.verdict = Verdict(data["verdict"])
        return outcome

    async def _llm(self, results: list[MetricResult], ctx: EvalContext) -> Outcome | MetricResult:
        agg = self.config.aggregator
        settings = judge_settings(agg.model_dump(), ctx.options)
        reason = settings.unavailable_reason()
        if reason:
            return self.not_evaluated(f"LLM aggregator unavailable: {reason}")
        template = agg.prompt or (CURRENT_AGGREGATOR_PROMPT if self.rules == "current" else DEFAULT_AGGREGATOR_PROMPT)
        if agg.prompt and "\n" not in agg.prompt and self.resolve_path(agg.prompt).is_file():
            template = self.resolve_path(agg.prompt).read_text("utf-8")
        results_json = json.dumps({r.name: member_json(r, self.rules) for r in results}, indent=2, ensure_ascii=False)
        try:
            reply = await ask_judge(settings, FREEFORM_SCHEMA, template.replace("{{EVALUATOR_RESULTS_JSON}}", results_json),
                                    parse_freeform, timeout=agg.timeout)
        except JudgeParseError as exc:
            raise EvaluatorFailure(f"composite '{self.config.name}' LLM aggregator: {exc}") from None
        return Outcome(reply["score"], hits=reply["hits"], misses=reply["misses"], reasoning=reply["reasoning"])
