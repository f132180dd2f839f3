"""Code judges and builtin assertions run one at a time (``agentevals eval assert``).

Judges are scripts found in ``.agentevals/judges/`` or ``.agentv/judges/`` (see ``discover_judges``);
they read AgentV's CodeEvaluator payload on stdin and print ``{"score", "reasoning", "hits", "misses"}``.
The payload, the way a judge is run and the deterministic assertions usable by name (``contains``,
``regex``, ``is-json``…) are the AgentV evaluator family's (``agentevals.evaluators.agentv``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core._registry import did_you_mean
from ..errors import ConfigError
from ._builtin import builtin_assertion_names, run_builtin_assertion
from ._builtin import find_assertion as _find_assertion
from ._discovery import JUDGE_DIRS, JUDGE_EXTENSIONS, discover_judges, find_judge, repo_root
from ._discovery import JUDGE_NAME as _JUDGE_NAME
from ._runner import PASS_THRESHOLD, JudgeResult, build_payload, parse_judge_output, run_judge

__all__ = [
    "JUDGE_DIRS",
    "JUDGE_EXTENSIONS",
    "PASS_THRESHOLD",
    "JudgeResult",
    "build_payload",
    "builtin_assertion_names",
    "discover_judges",
    "find_judge",
    "parse_judge_output",
    "repo_root",
    "run_assertion",
    "run_builtin_assertion",
    "run_judge",
]


def run_assertion(
    name: str,
    *,
    output: str,
    input: str = "",
    expected_output: str = "",
    criteria: str = "",
    config: dict[str, Any] | None = None,
    start: Path | None = None,
    timeout: float = 30.0,
) -> JudgeResult:
    """Score ``output`` with the judge or builtin assertion called ``name``.

    A judge visible from ``start`` (default: the current directory) wins over a builtin of the same
    name, so every name AgentV's ``eval assert`` resolves resolves the same way here.

    Raises:
        ConfigError: ``name`` is malformed or names neither a judge nor a builtin (the message lists
            what was found), or a builtin's ``value`` is missing.
        EvaluatorFailure: the judge could not run, timed out, failed, or printed no JSON object.
    """
    if not _JUDGE_NAME.match(name):
        raise ConfigError(
            f"invalid judge name '{name}': only letters, digits, hyphens and underscores are allowed"
        )
    start = start or Path.cwd()
    script = find_judge(name, start)
    if script is not None:
        payload = build_payload(
            output, input, expected_output=expected_output, criteria=criteria, config=config
        )
        return run_judge(name, script, payload, timeout=timeout)
    if _find_assertion(name) is not None:
        return run_builtin_assertion(name, output, config or {})
    judges = sorted(discover_judges(start))
    searched = f"{' and '.join(d + '/' for d in JUDGE_DIRS)} from {start.resolve()} up to {repo_root(start)}"
    raise ConfigError(
        f"unknown judge '{name}'{did_you_mean(name, [*judges, *builtin_assertion_names()])};"
        f" judges found: {', '.join(judges) or 'none'} (searched {searched});"
        f" builtin assertions: {', '.join(builtin_assertion_names())}"
    )
