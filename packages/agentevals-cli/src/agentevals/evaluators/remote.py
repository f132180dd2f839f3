"""``type: remote``: an evaluator fetched from a source (``github``, ``local``, or a registered one).

```yaml
evaluators:
  - name: response_quality
    type: remote
    source: github                                   # default
    ref: evaluators/response_quality/response_quality.py
    sha256: 9f86d0…                                  # optional pin, checked before anything runs
    revision: v1.2.0                                 # optional branch/tag/commit (github, local)
```
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator

from ..errors import ConfigError
from ..execution.deadline import Deadline
from .backend import BackendEvaluator, ProgramConfig

__all__ = ["RemoteEvaluator"]


class RemoteEvaluator(BackendEvaluator):
    """Downloads (and caches) the evaluator from its source, then runs it like ``type: code``."""

    name = "remote"

    class Config(ProgramConfig):
        type: Literal["remote"] = "remote"
        source: str = Field(default="github", min_length=1)
        """Evaluator source: ``github``, ``local``, or one added with ``register_source``."""
        ref: str = Field(min_length=1)
        """Path of the evaluator within the source (e.g. ``evaluators/x/x.py``)."""
        sha256: str | None = None
        """Expected SHA-256 of the evaluator file (hex, optionally prefixed ``sha256:``)."""
        revision: str | None = Field(default=None, min_length=1)
        """Branch, tag or commit to fetch from (``github``: instead of AGENTEVALS_EVALUATOR_BRANCH)."""
        path: str | None = Field(default=None, min_length=1)
        """``source: local`` only: the registry directory or git repository (relative to the config)."""

        @field_validator("sha256")
        @classmethod
        def _hex_digest(cls, value: str | None) -> str | None:
            if value is None:
                return None
            digest = value.strip().lower().removeprefix("sha256:")
            if not re.fullmatch(r"[0-9a-f]{64}", digest):
                raise ValueError(f"sha256 must be 64 hex digits (optionally 'sha256:…'), got {value!r}")
            return digest

    config: Config

    @property
    def reproducible(self) -> bool:
        return self.config.sha256 is not None  # otherwise the fetched file may differ from the last run's

    @property
    def not_reproducible_reason(self) -> str:
        return "a remote evaluator without a pinned sha256 may fetch other code each run"

    def _source(self):  # -> EvaluatorSource
        from ..sources import get_source

        source = get_source(self.config.source)
        path = str(self.resolve_path(self.config.path)) if self.config.path is not None else None
        try:
            return source.configured(revision=self.config.revision, path=path)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    def check(self) -> None:
        from ..execution.runtimes import supported_extensions
        from ..sources.base import check_ref

        if self.config.source == "builtin":
            raise ConfigError("source 'builtin' cannot be fetched; use 'type: builtin' for builtin metrics")
        try:
            check_ref(self.config.ref, supported_extensions())
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        if self.config.path is not None and not self.resolve_path(self.config.path).is_dir():
            raise ConfigError(
                f"path {self.config.path!r} is not a directory ({self.resolve_path(self.config.path)}; "
                "relative to the config file's directory)"
            )
        self.check_executor()
        from ..sources import SourceError

        try:
            self._source().check()
        except SourceError as exc:
            raise ConfigError(str(exc)) from None

    async def locate(self, deadline: Deadline) -> Path:
        from ..sources.resolver import EvaluatorResolver

        deadline.phase = f"resolving {self.config.source}:{self.config.ref}"
        return await EvaluatorResolver().resolve(
            self._source(), self.config.ref, deadline=deadline, sha256=self.config.sha256
        )
