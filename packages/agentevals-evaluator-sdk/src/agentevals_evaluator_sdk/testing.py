"""Helpers to unit-test an evaluator in-process, with the same validation ``run()`` applies.

Example:
    ```python
    from agentevals_evaluator_sdk.testing import make_input, run_evaluator
    from my_evaluator import response_quality

    def test_short_answer_scores_half():
        result = run_evaluator(response_quality, make_input(final_response="ok", config={"min_length": 10}))
        assert result.score == 0.5
    ```
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, Union

from .decorator import Evaluator, check_result, parse_input
from .protocol import PROTOCOL_VERSION, negotiate
from .types import EvalInput, EvalResult, IntermediateStepData, InvocationData, ToolCallData

__all__ = ["load_input", "make_input", "run_evaluator"]


def make_input(
    *,
    user_content: str = "What is 2+2?",
    final_response: Optional[str] = "The answer is 4.",
    tool_calls: Optional[list[Union[str, dict[str, Any]]]] = None,
    threshold: float = 0.5,
    config: Optional[dict[str, Any]] = None,
    metric_name: str = "test_evaluator",
    expected: Optional[list[InvocationData]] = None,
    invocations: Optional[list[InvocationData]] = None,
) -> EvalInput:
    """Build a small EvalInput: one invocation unless ``invocations`` is given.

    ``tool_calls`` takes tool names or ``{"name": …, "args": {…}}`` dicts.
    """
    if invocations is None:
        calls = [ToolCallData(name=c) if isinstance(c, str) else ToolCallData.model_validate(c) for c in tool_calls or []]
        invocations = [
            InvocationData(
                invocation_id="inv-001",
                user_content=user_content,
                final_response=final_response,
                intermediate_steps=IntermediateStepData(tool_calls=calls),
            )
        ]
    return EvalInput(
        protocol_version=PROTOCOL_VERSION,
        metric_name=metric_name,
        threshold=threshold,
        config=config or {},
        invocations=invocations,
        expected_invocations=expected,
    )


def load_input(path: Union[str, Path]) -> EvalInput:
    """Read an EvalInput JSON file (for example one saved from a real run)."""
    eval_input, _ = parse_input(Path(path).read_text(encoding="utf-8"))
    return eval_input


def run_evaluator(func: Evaluator, eval_input: Union[EvalInput, dict[str, Any], str]) -> EvalResult:
    """Run an ``@evaluator`` on an input in-process and validate the result as the host would.

    Raises ``ResultError`` for an invalid result, exactly where ``run()`` would exit non-zero.
    """
    if isinstance(eval_input, str):
        eval_input, version = parse_input(eval_input)
    else:
        if isinstance(eval_input, dict):
            eval_input, version = parse_input(json.dumps(eval_input))
        else:
            version = negotiate(eval_input.protocol_version)
    if isinstance(func, Evaluator):
        return func.evaluate(eval_input, version=version)
    return check_result(func(eval_input), eval_input, version, name=getattr(func, "__name__", "evaluator"))
