"""AgentV ``llm_judge``: an LLM grades the answer from a prompt template (file, inline text or a script)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, field_validator

from ...errors import ConfigError
from ...results import MetricResult
from ..base import EvalContext
from ._base import AgentVEvaluator, Outcome
from ._judge import (
    FREEFORM_SCHEMA,
    JudgeConfig,
    JudgeParseError,
    ask_judge,
    judge_settings,
    parse_freeform,
    probe_prompt,
    substitute,
)
from ._script import argv_of, run_text_script, script_arg, script_file
from ._view import CaseView
from .rubric import RubricItem, grade_rubrics, rubric_items

__all__ = ["DEFAULT_TEMPLATE", "LlmJudgeEvaluator"]

DEFAULT_TEMPLATE = """You are an expert evaluator. Your goal is to grade the answer based on how well it achieves the criteria for the original task.

Use the reference_answer as a gold standard for a high-quality response (if provided). The reference_answer may be a simple text response, or it may contain a sequence of expected agent messages including tool calls. When it contains multiple messages, the last message represents the final expected answer. The answer does not need to match it verbatim, but should capture the key points and follow the same spirit.

Be concise and focused in your evaluation. Provide succinct, specific feedback rather than verbose explanations.

[[ ## criteria ## ]]
{{criteria}}

[[ ## question ## ]]
{{question}}

[[ ## reference_answer ## ]]
{{reference_answer}}

[[ ## answer ## ]]
{{answer}}"""
"""The user prompt when the entry gives none (AgentV's default evaluator template)."""

_NEEDS = re.compile(r"\{\{\s*(answer|expected_output|candidate_answer)\s*\}\}")
_PROMPT_SUFFIXES = {".md", ".txt", ".prompt", ".j2", ".jinja", ".tmpl", ".hbs", ".mustache"}


class PromptCommand(BaseModel):
    """An executable prompt template: the script gets the code-judge payload and prints the prompt."""

    model_config = ConfigDict(extra="forbid")

    command: list[str] | str = Field(validation_alias=AliasChoices("command", "script"))
    config: dict[str, Any] = Field(default_factory=dict)


def _looks_like_path(text: str) -> bool:
    return "\n" not in text and not any(c.isspace() for c in text) and (
        "/" in text or "\\" in text or Path(text).suffix.lower() in _PROMPT_SUFFIXES)


class LlmJudgeEvaluator(AgentVEvaluator):
    """Freeform ``{score, hits, misses, reasoning}`` grading, or rubric grading when ``rubrics`` is given."""

    name = "llm_judge"
    aliases = ("llm-judge", "llm_grader", "llm-grader", "llm-rubric", "agent-rubric")

    class Config(JudgeConfig):
        type: str = "llm_judge"
        prompt: str | PromptCommand | None = None
        """A file (relative to this config; must use ``{{answer}}`` or ``{{expected_output}}``), inline text used
        as the whole prompt, or ``{command: [...], config: {...}}``. Default: AgentV's template."""
        rubrics: list[RubricItem] | None = None
        """Grade these criteria instead (same as ``type: rubric``)."""
        criteria: str | None = None
        """Text for ``{{criteria}}`` (default: the eval case's ``criteria``)."""
        config: dict[str, Any] = Field(default_factory=dict)
        """Passed to an executable prompt template as ``config``."""

        @field_validator("rubrics", mode="before")
        @classmethod
        def _items(cls, value: Any) -> Any:
            return rubric_items(value)

    config: Config

    _template: str | None = None

    @classmethod
    def runs_code(cls, entry: Mapping[str, Any]) -> Optional[str]:
        prompt = entry.get("prompt")
        return "its prompt is a command" if isinstance(prompt, Mapping) else None

    def check(self) -> None:
        prompt = self.config.prompt
        if isinstance(prompt, PromptCommand):
            argv = argv_of(prompt.command)
            cwd = self.base_dir
            if not argv or (script_arg(argv) is not None and script_file(argv, cwd) is None):
                raise ConfigError(f"prompt command not found: {' '.join(argv) or '(empty)'} (relative to {cwd})")
        else:
            self._load_template()

    def _load_template(self) -> str:
        if self._template is not None:
            return self._template
        prompt = self.config.prompt
        template = DEFAULT_TEMPLATE
        if isinstance(prompt, str):
            path = self.resolve_path(prompt) if _looks_like_path(prompt) else None
            if path is not None and path.is_file():
                template = path.read_text("utf-8")
                if not _NEEDS.search(template):
                    raise ConfigError(f"prompt file {path} uses neither {{{{answer}}}} nor {{{{expected_output}}}}")
            elif path is not None:
                raise ConfigError(f"prompt file not found: {path} (paths are relative to the config file)")
            else:
                template = prompt
        self._template = template
        return template

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome | MetricResult:
        cfg = self.config
        if cfg.rubrics:
            return await grade_rubrics(self, view, ctx, cfg.rubrics)
        settings = judge_settings(cfg, ctx.options)
        reason = settings.unavailable_reason()
        if reason:
            return self.not_evaluated(f"LLM judge unavailable: {reason}")
        variables = view.variables()
        if cfg.criteria is not None:
            variables["criteria"] = variables["expected_outcome"] = cfg.criteria.strip()
        if isinstance(cfg.prompt, PromptCommand):
            payload = view.payload(criteria=cfg.criteria, config=cfg.prompt.config or cfg.config)
            user = await run_text_script(argv_of(cfg.prompt.command), payload, cwd=self.base_dir,
                                         timeout=cfg.timeout, what=f"prompt template of '{cfg.name}'")
        else:
            user = substitute(self._load_template(), variables)
        user = probe_prompt(ctx.options.judge_probe, user, answer=variables["answer"], case_id=ctx.case_id)
        try:
            reply = await ask_judge(settings, FREEFORM_SCHEMA, user, parse_freeform, timeout=cfg.timeout,
                                    temperature=cfg.temperature)
        except JudgeParseError as exc:
            return self.not_evaluated(str(exc))
        return Outcome(reply["score"], hits=reply["hits"], misses=reply["misses"], reasoning=reply["reasoning"],
                       details={"judge_model": settings.model})
