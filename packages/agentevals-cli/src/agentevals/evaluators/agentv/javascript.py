"""AgentV 5's ``javascript`` assertion: a JavaScript expression (or function body) over ``output`` and ``context``.

    - type: javascript
      value: "output.includes('Paris') && context.config.city === 'Paris'"
      threshold: 0.5          # a number result passes at or above it (default: any score above 0)

AgentV evaluates the code in its own process (``new Function('output', 'context', body)``); here a real
``node`` does, one process per evaluation under the entry's deadline, with the same function body rule: one
line without ``return`` is an expression (``return`` is added), anything else is a body. The result is read
by AgentV's rules (``normalizeScriptResult``): ``true``/``false``; a number (the score, passing when it
reaches ``threshold``, else when above 0); or ``{pass, score, reason, assertions, details}``. A throw
scores 0 and says why. ``context`` is AgentV's assertion context in camelCase (``criteria``,
``expectedOutput``, ``input``, ``trace``, ``tokenUsage``, ``costUsd``, ``durationMs``, ``config`` — an
enclosing ``assert-set``'s ``config`` merged under the entry's own).
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from typing import Any, Optional

from pydantic import Field

from ...errors import ConfigError
from ...results import Verdict
from ..base import EvalContext
from ._base import AgentVConfig, AgentVEvaluator, Outcome, clamp
from ._script import run_script
from ._view import CaseView

__all__ = ["JavascriptAssertionEvaluator"]

_RUNNER = r"""
let text = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { text += chunk; });
process.stdin.on('end', async () => {
  const { code, output, context } = JSON.parse(text);
  const trimmed = code.trim().replace(/;+\s*$/, '');
  let body = trimmed;
  if (!trimmed.includes('\n') && !/\breturn\b/.test(trimmed)) {
    const lastSemi = trimmed.lastIndexOf(';');
    body = /^(const|let|var)\s/.test(trimmed) && lastSemi >= 0
      ? `${trimmed.slice(0, lastSemi + 1)} return ${trimmed.slice(lastSemi + 1).trim()}`
      : `return ${trimmed}`;
  }
  let answer;
  try {
    const fn = new Function('output', 'context', body);
    answer = { result: await fn(output, context) };
  } catch (error) {
    answer = { error: error instanceof Error ? error.message : String(error) };
  }
  process.stdout.write(JSON.stringify(answer === undefined ? { result: null } : answer) + '\n');
});
"""
"""AgentV's ``buildFunctionBody`` and ``JavascriptAssertionGrader.evaluate``, fed on stdin."""

_FAILING = "Javascript assertion returned a failing result"


def read_result(result: Any, threshold: Optional[float]) -> Outcome:
    """AgentV's ``normalizeScriptResult``: a boolean, a number, or ``{pass, score, reason, assertions, details}``."""
    limit = 2.220446049250313e-16 if threshold is None else threshold  # JavaScript's Number.EPSILON
    if isinstance(result, bool):
        return _outcome(1.0 if result else 0.0, result, [("Assertion passed" if result else _FAILING, result)])
    if isinstance(result, (int, float)):
        score = clamp(result)
        passed = score >= limit
        return _outcome(score, passed, [("Assertion passed" if passed else _FAILING, passed)])
    if not isinstance(result, dict):  # undefined, null, a string: AgentV's object branch scores it 0
        result = {}
    raw = result.get("score")
    flag = result.get("pass")
    score = clamp(raw) if isinstance(raw, (int, float)) and not isinstance(raw, bool) else (1.0 if flag is True else 0.0)
    passed = flag if isinstance(flag, bool) else score >= limit
    listed = [(str(a.get("text", "")), bool(a.get("passed"))) for a in result.get("assertions") or []
              if isinstance(a, dict)]
    reason = result.get("reason")
    entries = listed or [(reason if isinstance(reason, str) else ("Assertion passed" if passed else _FAILING), passed)]
    details = result.get("details")
    return _outcome(score, passed, entries, details if isinstance(details, dict) else {})


def _outcome(score: float, passed: bool, entries: list[tuple[str, bool]], details: Optional[dict] = None) -> Outcome:
    return Outcome(score, hits=[t for t, ok in entries if ok], misses=[t for t, ok in entries if not ok],
                   details=details or {}, verdict=Verdict.PASS if passed else Verdict.FAIL)


class JavascriptAssertionEvaluator(AgentVEvaluator):
    """AgentV 5's ``javascript`` assertion, run by ``node``."""

    name = "javascript"

    class Config(AgentVConfig):
        type: str = "javascript"
        value: str = Field(min_length=1)
        """The JavaScript: an expression over ``output`` (the answer) and ``context``, or a function body."""
        config: dict[str, Any] = Field(default_factory=dict)
        """Reaches the code as ``context.config`` (an enclosing ``assert-set``'s ``config`` is merged under it)."""
        timeout: Optional[float] = Field(default=None, gt=0, allow_inf_nan=False)
        """Seconds before ``node`` is stopped (default 30)."""

    config: Config
    default_timeout = 30.0

    @classmethod
    def runs_code(cls, entry: Mapping[str, Any]) -> Optional[str]:
        return "runs JavaScript with node (type javascript)"

    def check(self) -> None:
        if shutil.which("node") is None:
            raise ConfigError("type javascript needs node on PATH (https://nodejs.org)")

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        context = {
            "criteria": view.criteria, "expectedOutput": view.expected_output, "input": view.input,
            "metadata": None, "trace": view.trace_summary(), "tokenUsage": view.token_usage,
            "costUsd": view.cost_usd, "durationMs": view.duration_ms, "fileChanges": None, "workspacePath": None,
            "dependencyResults": None, "config": dict(self.config.config),
        }
        data = await run_script(["node", "-e", _RUNNER], {"code": self.config.value, "output": view.answer,
                                                          "context": context},
                                cwd=self.base_dir, timeout=self.timeout, what=f"javascript assertion '{self.config.name}'")
        if "error" in data:
            message = f"Javascript assertion failed: {data['error']}"
            return Outcome(0.0, misses=[message], reasoning=message, verdict=Verdict.FAIL)
        return read_result(data.get("result"), self.config.threshold)
