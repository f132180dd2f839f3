"""Run one code judge: send AgentV's payload on stdin through ``run_file``, parse its verdict.

The payload is AgentV's (``agentv eval assert``) with snake_case keys, built by the AgentV family's
``CaseView`` so judges written for AgentV run unchanged; the judge prints
``{"score": 0..1, "reasoning"?, "hits"?, "misses"?, "details"?}``. The judge runs like a ``code_judge``
script: the ``type: code`` runtimes pick the interpreter by extension (``.sh``, ``.mts`` and ``.cts``,
which no such runtime takes, run with bash and tsx), under one deadline that kills its process tree.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from ..errors import EvaluatorFailure
from ..evaluators.agentv._base import clamp
from ..evaluators.agentv._script import run_file
from ..evaluators.agentv._view import CaseView
from ..execution.deadline import Deadline
from ..execution.process import tail
from ..execution.runtimes import TSX_ENV, Runtime, find_local_tsx, supported_extensions

__all__ = [
    "PASS_THRESHOLD",
    "JudgeResult",
    "build_payload",
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
    """The stdin document for a judge: AgentV's ``eval assert`` payload for a single text answer."""
    view = CaseView.of_text(output, input, expected_output=expected_output, criteria=criteria)
    return view.assert_payload(config=config)


class _JudgeRuntime(Runtime):
    """Judge extensions no ``type: code`` runtime takes: ``.sh`` with bash, ``.mts``/``.cts`` with tsx."""

    @property
    def extensions(self) -> tuple[str, ...]:
        return (".sh", ".mts", ".cts")

    def build_command(self, path: Path) -> list[str]:
        if path.suffix == ".sh":
            bash = shutil.which("bash")
            if not bash:
                raise RuntimeError("it needs bash, which is not on PATH; install bash or rewrite the judge in Python")
            return [bash, str(path)]
        local = find_local_tsx(path.parent.resolve())
        tsx = os.environ.get(TSX_ENV) or (str(local) if local else shutil.which("tsx"))
        if not tsx:
            raise RuntimeError(
                "it is TypeScript and needs tsx, found neither on PATH nor in node_modules/.bin;"
                " run `npm install --save-dev tsx` in the project (or compile the judge to .js)"
            )
        return [tsx, str(path)]


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
        score=clamp(data.get("score")),
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
    """Run ``script`` with ``payload`` on stdin, in ``cwd`` (default: the current directory), and return its verdict.

    Raises:
        EvaluatorFailure: the interpreter is missing, the judge timed out (its process tree is killed),
            exited non-zero, or printed something other than one JSON object.
    """
    where = f"judge '{name}' ({script})"
    deadline = Deadline(timeout)
    runtime = None if script.suffix in supported_extensions() else _JudgeRuntime()
    try:
        proc = asyncio.run(run_file(script, payload, cwd=cwd or Path.cwd(), deadline=deadline, runtime=runtime))
    except EvaluatorFailure as exc:
        if deadline.remaining() <= 0:
            raise EvaluatorFailure(
                f"{where} timed out after {timeout:g}s and was killed; fix the judge or raise --timeout"
            ) from None
        raise EvaluatorFailure(f"{where} cannot run: {exc}") from None
    if proc.returncode != 0:
        last = " ".join(tail(proc.stderr, 300).split()) or "no stderr"
        raise EvaluatorFailure(f"{where} exited with code {proc.returncode}: {last}")
    return parse_judge_output(name, proc.stdout.decode("utf-8", "replace"))
