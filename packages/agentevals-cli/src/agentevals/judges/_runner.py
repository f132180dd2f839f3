"""Run one code judge: pick its interpreter, send the CodeEvaluator payload on stdin, parse its verdict.

The payload is AgentV's (``agentv eval assert``) with snake_case keys, so judges written for AgentV
run unchanged; the judge prints ``{"score": 0..1, "reasoning"?, "hits"?, "misses"?, "details"?}``.
"""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import EvaluatorFailure
from ..execution.process import ProcessTimeout, run_process, tail

__all__ = [
    "PASS_THRESHOLD",
    "JudgeResult",
    "build_payload",
    "judge_command",
    "parse_judge_output",
    "run_judge",
]

PASS_THRESHOLD: Final = 0.5
"""``eval assert`` passes (exit 0) at or above this score, as AgentV's does."""


@dataclass
class JudgeResult:
    """A judge's or assertion's verdict."""

    score: float
    reasoning: str = ""
    hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    details: dict[str, Any] | None = None

    @property
    def passed(self) -> bool:
        return self.score >= PASS_THRESHOLD

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "score": self.score,
            "reasoning": self.reasoning,
            "hits": self.hits,
            "misses": self.misses,
        }
        if self.details is not None:
            out["details"] = self.details
        return out


def build_payload(
    output: str,
    input: str = "",
    *,
    expected_output: str = "",
    criteria: str = "",
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The stdin document for a judge (AgentV's CodeEvaluator payload for a single text answer)."""
    return {
        "answer": output,
        "output": [{"role": "assistant", "content": output}],
        "input": [{"role": "user", "content": input}],
        "question": input,
        "criteria": criteria,
        "expected_output": [{"role": "assistant", "content": expected_output}] if expected_output else [],
        "reference_answer": expected_output,
        "guideline_files": [],
        "input_files": [],
        "trace": None,
        "token_usage": None,
        "cost_usd": None,
        "duration_ms": None,
        "start_time": None,
        "end_time": None,
        "file_changes": None,
        "workspace_path": None,
        "config": config,
        "metadata": {},
        # Plain-text accessors newer AgentV graders read.
        "input_text": input,
        "output_text": output,
        "expected_output_text": expected_output,
    }


def _find_tsx(script: Path) -> str | None:
    on_path = shutil.which("tsx")
    if on_path:
        return on_path
    for directory in (script.parent.resolve(), *script.parent.resolve().parents):
        local = directory / "node_modules" / ".bin" / "tsx"
        if local.is_file():
            return str(local)
    return None


def judge_command(name: str, script: Path) -> list[str]:
    """The argv that runs ``script``; a missing interpreter raises ``EvaluatorFailure`` naming the fix."""
    ext = script.suffix
    where = f"judge '{name}' ({script})"
    if ext == ".py":
        return [sys.executable, str(script)]
    if ext == ".sh":
        bash = shutil.which("bash")
        if not bash:
            raise EvaluatorFailure(
                f"{where} needs bash, which is not on PATH; install bash or rewrite the judge in Python"
            )
        return [bash, str(script)]
    if ext in (".js", ".mjs", ".cjs"):
        node = shutil.which("node")
        if not node:
            raise EvaluatorFailure(f"{where} needs node, which is not on PATH; install Node.js 18+")
        return [node, str(script)]
    if ext in (".ts", ".mts", ".cts"):
        tsx = _find_tsx(script)
        if not tsx:
            raise EvaluatorFailure(
                f"{where} is TypeScript and needs tsx, found neither on PATH nor in node_modules/.bin;"
                " run `npm install --save-dev tsx` in the project (or compile the judge to .js)"
            )
        return [tsx, str(script)]
    raise EvaluatorFailure(f"{where} has an unsupported extension '{ext}'")


def _clamp(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0.0
    return min(1.0, max(0.0, float(value)))


def parse_judge_output(name: str, stdout: str) -> JudgeResult:
    """Read the judge's stdout: one JSON object; a non-numeric ``score`` counts as 0 (as in AgentV)."""
    text = stdout.strip()
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        shown = " ".join(text.split())[:200] or "nothing"
        raise EvaluatorFailure(
            f"judge '{name}' must print one JSON object like {{\"score\": 1}} on stdout, printed: {shown}"
        ) from None
    if not isinstance(data, dict):
        raise EvaluatorFailure(
            f"judge '{name}' must print a JSON object, printed {type(data).__name__}: {text[:200]}"
        )
    reasoning = data.get("reasoning")
    details = data.get("details")
    return JudgeResult(
        score=_clamp(data.get("score")),
        reasoning=reasoning if isinstance(reasoning, str) else "",
        hits=_strings(data.get("hits")),
        misses=_strings(data.get("misses")),
        details=details if isinstance(details, dict) else None,
    )


def _strings(value: Any) -> list[str]:
    return [item for item in value if isinstance(item, str) and item] if isinstance(value, list) else []


def run_judge(
    name: str, script: Path, payload: dict[str, Any], *, timeout: float = 30.0, cwd: Path | None = None
) -> JudgeResult:
    """Run ``script`` with ``payload`` on stdin and return its verdict.

    Raises:
        EvaluatorFailure: the interpreter is missing, the judge timed out (its process tree is killed),
            exited non-zero, or printed something other than one JSON object.
    """
    cmd = judge_command(name, script)
    stdin = json.dumps(payload, indent=2, ensure_ascii=False).encode("utf-8")
    try:
        proc = asyncio.run(run_process(cmd, stdin=stdin, cwd=cwd, timeout=timeout))
    except ProcessTimeout:
        raise EvaluatorFailure(
            f"judge '{name}' ({script}) timed out after {timeout:g}s and was killed; fix the judge or raise --timeout"
        ) from None
    except OSError as exc:
        raise EvaluatorFailure(f"judge '{name}' ({script}) could not start: {exc.strerror or exc}") from None
    if proc.returncode != 0:
        last = " ".join(tail(proc.stderr, 300).split()) or "no stderr"
        raise EvaluatorFailure(f"judge '{name}' ({script}) exited with code {proc.returncode}: {last}")
    return parse_judge_output(name, proc.stdout.decode("utf-8", "replace"))
