"""AgentV ``code_judge``: a script reads AgentV's payload on stdin and prints ``{score, hits, misses, …}``."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from pydantic import AliasChoices, Field

from ...errors import ConfigError
from ...execution.sandbox_env import EnvField, env_scope
from ..base import EvalContext, NotCacheable
from ._base import AgentVConfig, AgentVEvaluator, Outcome, clamp
from ._script import argv_of, run_script, script_arg, script_file
from ._view import CaseView

__all__ = ["CodeJudgeEvaluator"]

OUTPUT_INLINE_LIMIT = 50_000
"""Above this many characters of JSON, ``output`` is written to a file and sent as ``output_path``."""


def judge_result(data: dict[str, Any]) -> Outcome:
    """Read a judge's ``{score, hits, misses, reasoning, details}`` by AgentV's rules: a ``score`` that is not
    a number counts as 0 (the reasoning says so when the judge gave none), scores are clamped, hits and
    misses keep their non-empty strings. Composite code aggregators are read the same way."""
    score = data.get("score")
    numeric = isinstance(score, (int, float)) and not isinstance(score, bool)
    strings = lambda key: [s for s in data.get(key) or [] if isinstance(s, str) and s.strip()]  # noqa: E731
    reasoning = data.get("reasoning")
    if not isinstance(reasoning, str):
        reasoning = None if numeric else f"no numeric 'score' in the judge's output (got {score!r}): counted as 0"
    details = data.get("details")
    return Outcome(clamp(score) if numeric else 0.0, hits=strings("hits"), misses=strings("misses"),
                   reasoning=reasoning, details=details if isinstance(details, dict) else {})


class CodeJudgeEvaluator(AgentVEvaluator):
    """Judges written for AgentV run unchanged: same stdin payload (snake_case), same stdout result."""

    name = "code_judge"
    aliases = ("code-judge", "code_grader", "code-grader", "script")  # AgentV 4 and 5 names

    class Config(AgentVConfig):
        type: str = "code_judge"
        command: list[str] | str = Field(validation_alias=AliasChoices("command", "script"))
        """argv list (``[node, ./judges/check.js]``) or a shell string; ``script`` is accepted too."""
        cwd: str | None = None
        """Working directory, relative to this config file (default: the config file's directory)."""
        timeout: float | None = Field(default=None, gt=0, allow_inf_nan=False)
        """Seconds before the judge is killed (default 30, like ``type: code``)."""
        env: EnvField = Field(default_factory=list)
        """Environment variables passed to the judge by name (on top of PATH, HOME, locale, temp dir);
        ``inherit`` passes the whole environment."""
        config: dict[str, Any] = Field(default_factory=dict)
        """Sent to the judge as the payload's ``config``."""
        description: str | None = None
        """What the judge checks (also sent in ``config.description``)."""
        criteria: str | None = None
        """Criteria text sent to the judge (default: the eval case's criteria)."""

    config: Config

    @classmethod
    def runs_code(cls, entry: Mapping[str, Any]) -> Optional[str]:
        return f"runs a command (type {entry.get('type') or cls.name})"

    @property
    def cwd(self) -> Path:
        return self.resolve_path(self.config.cwd) if self.config.cwd else self.base_dir

    @property
    def argv(self) -> list[str]:
        return argv_of(self.config.command)

    def code_paths(self) -> list[Path]:
        script = script_file(self.argv, self.cwd, self.base_dir)
        if script is None:  # a shell string, a binary: what it runs is unknown
            raise NotCacheable("its command is not a script file agentevals can find, so its code is unknown")
        return [script]

    def check(self) -> None:
        if not self.argv or not all(self.argv):
            raise ConfigError("'command' is empty (give an argv list like [node, ./judges/check.js])")
        if not self.cwd.is_dir():
            raise ConfigError(f"cwd not found: {self.cwd}")
        arg = script_arg(self.argv)
        if arg is not None and script_file(self.argv, self.cwd, self.base_dir) is None:
            raise ConfigError(f"code judge script not found: {self.cwd / arg} (relative paths start at {self.cwd})")

    async def score(self, view: CaseView, ctx: EvalContext) -> Outcome:
        extra = dict(self.config.config)
        if self.config.description:
            extra.setdefault("description", self.config.description)
        payload = view.payload(criteria=self.config.criteria, config=extra)
        what = f"code judge '{self.config.name}'"
        inline = len(json.dumps(payload["output"], ensure_ascii=False)) <= OUTPUT_INLINE_LIMIT
        with contextlib.nullcontext() if inline else tempfile.TemporaryDirectory(prefix="agentevals-judge-") as tmp:
            if tmp:
                path = Path(tmp) / "output.json"
                path.write_text(json.dumps(payload["output"], ensure_ascii=False), "utf-8")
                payload.update(output=None, output_path=str(path))
            with env_scope(self.config.env):
                data = await run_script(self.argv, payload, cwd=self.cwd, timeout=self.timeout, what=what,
                                        base_dir=self.base_dir)
        return judge_result(data)
