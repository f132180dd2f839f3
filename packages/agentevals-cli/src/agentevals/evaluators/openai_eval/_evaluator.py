"""``OpenAIEvalEvaluator``: load-time checks, per-turn grading (local or Evals API), mean aggregation."""

from __future__ import annotations

import asyncio
import importlib.util
from typing import Any, ClassVar

from ...execution.deadline import Deadline
from ...results import MetricResult
from ..base import BaseEvaluator, EvalContext
from ..llm import LLMSettings
from ._config import LabelModelGrader, OpenAIEvalConfig, ScoreModelGrader, TextSimilarityGrader
from ._evals_api import DELETE_TIMEOUT, criterion, grade_with_evals_api
from ._items import Turn, build_turns
from ._local import Grade, grade_locally
from ._text_similarity import meteor_unavailable, preload

__all__ = ["OpenAIEvalEvaluator"]

_INSTALL = 'pip install "agentevals-cli[openai]"'

class OpenAIEvalEvaluator(BaseEvaluator):
    """OpenAI grader configs graded locally (default) or on the Evals API, per turn, averaged."""

    name: ClassVar[str] = "openai_eval"
    Config: ClassVar[type[OpenAIEvalConfig]] = OpenAIEvalConfig
    config: OpenAIEvalConfig

    @property
    def timeout(self) -> float:
        """The entry's timeout plus the grace for deleting an ephemeral eval."""
        return self.config.timeout + DELETE_TIMEOUT + 1.0

    def api_use(self) -> str | None:
        """What in this entry calls an API (None: graded offline)."""
        grader = self.config.grader
        if self.config.mode == "evals_api":
            return "mode evals_api"
        if isinstance(grader, (LabelModelGrader, ScoreModelGrader)):
            return f"grader {grader.type}"
        if isinstance(grader, TextSimilarityGrader) and grader.evaluation_metric == "cosine":
            return "evaluation_metric cosine"
        return None

    def missing_dependency(self) -> str | None:
        """Why this entry cannot call its API here (the ``openai`` extra is missing or too old), or None.

        One rule for every optional extra: the entry is NOT_EVALUATED with the install command and the
        run goes on (as for ``llm_judge`` and ADK's metrics); local text metrics need no extra.
        """
        use = self.api_use()
        if use is None:
            return None
        if importlib.util.find_spec("openai") is None:
            return f"{use} calls an OpenAI-compatible API and needs the 'openai' extra: {_INSTALL}"
        if self.config.mode == "evals_api" and importlib.util.find_spec("openai.resources.evals") is None:
            return 'mode evals_api needs an openai package with the Evals API: pip install -U "openai"'
        return None

    def settings(self) -> LLMSettings:
        grader = self.config.grader
        model = getattr(grader, "model", None) if self.config.mode == "local" else None
        if isinstance(grader, TextSimilarityGrader) and self.config.mode == "local":
            model = self.config.embedding_model
        return LLMSettings(model=model, base_url=self.config.base_url, api_key_env=self.config.api_key_env)

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        config = self.config
        turns, note = build_turns(ctx, needs_expected=config.grader.needs_expected)
        if not turns:
            return self._not_evaluated(note or "nothing to grade")
        use = self.api_use()
        settings = self.settings()
        if use is not None:
            missing = self.missing_dependency()
            if missing:
                return self._not_evaluated(missing)
            reason = settings.unavailable_reason(need_model=False)
            if reason:
                return self._not_evaluated(f"{use}: {reason}")
        elif getattr(config.grader, "evaluation_metric", None) == "meteor":
            preload("meteor")
            reason = await asyncio.to_thread(meteor_unavailable)
            if reason:
                return self._not_evaluated(reason)
        deadline = Deadline(config.timeout)
        info: dict[str, Any] = {}
        client = settings.client(timeout=config.timeout, deadline=deadline.end) if use is not None else None
        try:
            if config.mode == "evals_api":
                assert client is not None
                graded = grade_with_evals_api(config, turns, client, deadline, info)
            else:
                deadline.phase = f"grading with {settings.endpoint}" if client else "grading"
                graded = grade_locally(config, turns, client)
            grades = await deadline.wait(graded)
        finally:
            if client is not None:
                await client.aclose()
        return self._scored(ctx, turns, grades, note, info)

    def _not_evaluated(self, reason: str) -> MetricResult:
        return MetricResult.not_evaluated(
            self.config.name, reason, type=self.name, threshold=self.config.pass_threshold
        )

    def _scored(
        self, ctx: EvalContext, turns: list[Turn], grades: list[Grade], note: str | None, info: dict[str, Any]
    ) -> MetricResult:
        config = self.config
        per_turn: list[float | None] = [None] * len(ctx.invocations)
        rows = []
        for turn, grade in zip(turns, grades, strict=True):
            per_turn[turn.position] = grade.score
            rows.append(
                {
                    "invocation_id": turn.invocation_id,
                    "score": grade.score,
                    "passed": grade.passed,
                    **grade.details,
                    **({"reasoning": grade.reasoning} if grade.reasoning else {}),
                }
            )
        grader = criterion(config)  # the grader as the Evals API sees it, pass_threshold included
        if not isinstance(grader.get("input"), str):
            del grader["input"]  # prompt messages: in the config, not repeated in every result
        details: dict[str, Any] = {"mode": config.mode, "grader": grader, "turns": rows, **info}
        reasoning = "; ".join(
            f"{row['invocation_id']}: {row['reasoning']}" for row in rows if "reasoning" in row
        )
        return MetricResult.scored(
            config.name,
            sum(g.score for g in grades) / len(grades),
            config.pass_threshold,
            type=self.name,
            per_invocation_scores=per_turn,
            details=details,
            reason=note,
            reasoning=reasoning or None,
        )
