"""EVAL.yaml (AgentV) → Agent Skills ``evals.json``, plus the grading views of ``eval prompt eval``.

Example:
    ```python
    from agentevals.transpile import plan_outputs, transpile_file, write_outputs

    result = transpile_file("evals/csv-analyzer.EVAL.yaml")
    for warning in result.warnings:
        print("warning:", warning)
    write_outputs(plan_outputs([result]))  # evals.json, or <skill>.evals.json per skill
    ```

The output is byte-identical to AgentV's ``agentv transpile`` except that code judges point to
``agentevals eval assert``. See docs/transpile.md for the mapping table.
"""

from __future__ import annotations

from ._prompt import PromptSuite, PromptTest, grading_brief, load_prompt_suite
from ._render import assertion_to_natural_language, code_judge_instruction, judge_name_from_command
from ._suite import load_suite
from ._transpiler import (
    NO_SKILL,
    EvalsJsonCase,
    EvalsJsonFile,
    TranspileResult,
    plan_outputs,
    transpile_file,
    transpile_suite,
    write_outputs,
)

__all__ = [
    "NO_SKILL",
    "EvalsJsonCase",
    "EvalsJsonFile",
    "PromptSuite",
    "PromptTest",
    "TranspileResult",
    "assertion_to_natural_language",
    "code_judge_instruction",
    "grading_brief",
    "judge_name_from_command",
    "load_prompt_suite",
    "load_suite",
    "plan_outputs",
    "transpile_file",
    "transpile_suite",
    "write_outputs",
]
