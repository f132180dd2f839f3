"""AgentV ``skill_trigger``: did the agent's first tool call load the named skill (Claude Code style)?"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..base import EvalContext
from ._base import AgentVConfig, AgentVEvaluator, Outcome
from ._view import CaseView

__all__ = ["SkillTriggerEvaluator"]


class SkillTriggerEvaluator(AgentVEvaluator):
    """Only the first tool call counts: a skill tool whose ``skill`` argument contains the name, or a read
    tool whose ``file_path`` contains it. Score 1 when that matches ``should_trigger``."""

    name = "skill_trigger"
    aliases = ("skill-trigger", "skill-used", "not-skill-used")
    default_timeout: ClassVar[float] = 10.0  # deterministic and cheap

    class Config(AgentVConfig):
        auto_name: ClassVar[str | None] = "skill-trigger-{skill}"
        type: str = "skill_trigger"
        skill: str = Field(min_length=1)
        """Skill name (case-sensitive substring of the call's argument)."""
        should_trigger: bool = True
        """false: pass when the skill was NOT the first thing loaded."""
        skill_tools: list[str] = Field(default_factory=lambda: ["Skill"])
        """Tools that invoke a skill (default Claude Code's ``Skill``)."""
        skill_input_field: str = "skill"
        read_tools: list[str] = Field(default_factory=lambda: ["Read"])
        """Tools that read a skill file (default ``Read``)."""
        read_input_field: str = "file_path"

    config: Config

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        cfg = self.config
        skill, should = cfg.skill, cfg.should_trigger
        first = view.tool_calls[0] if view.tool_calls else None
        triggered, evidence = False, ""
        if first is not None:
            if first.tool in cfg.skill_tools:
                argument = str(first.input.get(cfg.skill_input_field) or "")
                if skill in argument:
                    triggered, evidence = True, f'Skill tool invoked with {cfg.skill_input_field}="{argument}"'
            elif first.tool in cfg.read_tools:
                path = str(first.input.get(cfg.read_input_field) or "")
                if skill in path:
                    triggered, evidence = True, f"Read tool loaded skill file: {path}"
        if triggered == should:
            hit = (evidence or f'Skill "{skill}" triggered as expected') if should else f'Skill "{skill}" correctly did not trigger'
            return Outcome(1.0, hits=[hit], reasoning="Skill triggered correctly" if should else "No false trigger")
        if should:
            miss = f'First tool was "{first.tool}" — not Skill/Read for "{skill}"' if first else "No tool calls recorded"
            return Outcome(0.0, misses=[miss], reasoning=f'Skill "{skill}" was not triggered')
        return Outcome(0.0, misses=[f'Skill "{skill}" triggered unexpectedly'],
                       reasoning="False trigger: skill fired when it should not have")
