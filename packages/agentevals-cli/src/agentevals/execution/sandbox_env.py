"""The environment an evaluator process gets: minimal by default, so no secret of the CI job leaks into it.

Every evaluator program (``code``, ``remote``, AgentV ``code_judge``, ``agentevals eval judge``) starts with
only ``PATH``, ``HOME``, the locale (``LANG``, ``LANGUAGE``, ``LC_*``), the temp directory (``TMPDIR``,
``TEMP``, ``TMP``), the time zone (``TZ``), the variables Windows needs to start a program, and what its
config entry lists by name under ``env:``. ``env: inherit`` passes the whole environment, as before.

    evaluators:
      - name: judge
        type: code
        path: ./judge.py
        env: [OPENAI_API_KEY, OPENAI_BASE_URL]     # or: env: inherit

Dependency installers (``uv``, ``pip``, ``npm``, ``git``, ``docker``) keep the full environment: they need
proxies and registry credentials, and they are not the evaluator.

Example:
    ```python
    env = evaluator_env(["OPENAI_API_KEY"])      # {"PATH": …, "HOME": …, "OPENAI_API_KEY": …}
    with env_scope(["OPENAI_API_KEY"]):
        await run_program(path, payload)         # uses evaluator_env(current_env_setting())
    ```
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Annotated, Literal, Optional, Union

from pydantic import BeforeValidator

__all__ = ["BASE_VARIABLES", "EnvField", "EnvSetting", "check_env_setting", "current_env_setting", "env_scope",
           "evaluator_env"]

EnvSetting = Union[Literal["inherit"], list[str]]
"""An entry's ``env:``: ``inherit``, or the names of the variables to pass on top of the minimal set."""

BASE_VARIABLES = (
    "PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP",
    # Windows cannot start most programs without these.
    "SYSTEMROOT", "SYSTEMDRIVE", "COMSPEC", "PATHEXT", "WINDIR", "USERPROFILE", "APPDATA", "LOCALAPPDATA",
)
_LOCALE = re.compile(r"^LC_[A-Z]+$")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_env_setting(value: object) -> EnvSetting:
    """Validate an ``env:`` value (pydantic validators call this); raise ``ValueError`` with the fix."""
    if value == "inherit":
        return "inherit"
    if isinstance(value, str):
        raise ValueError(f"env must be 'inherit' or a list of variable names, got {value!r}")
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"env must be 'inherit' or a list of variable names, got {type(value).__name__}")
    bad = [v for v in value if not isinstance(v, str) or not _NAME.match(v)]
    if bad:
        raise ValueError(f"env lists names of environment variables; not a name: {bad[0]!r}")
    return list(value)


EnvField = Annotated[EnvSetting, BeforeValidator(check_env_setting)]
"""The ``env:`` field of a config model: ``env: EnvField = Field(default_factory=list)``."""


def evaluator_env(setting: Optional[EnvSetting] = None, *, environ: Optional[Mapping[str, str]] = None) -> dict[str, str]:
    """The environment for an evaluator process under ``setting`` (None: the minimal set only)."""
    environ = os.environ if environ is None else environ
    if setting == "inherit":
        return dict(environ)
    names = set(BASE_VARIABLES) | set(setting or ())
    return {k: v for k, v in environ.items() if k in names or _LOCALE.match(k)}


_CURRENT: ContextVar[Optional[EnvSetting]] = ContextVar("agentevals_env_setting", default=None)


def current_env_setting() -> Optional[EnvSetting]:
    """The ``env:`` of the evaluator entry this task runs for (None outside one: the minimal set)."""
    return _CURRENT.get()


class env_scope:
    """``with env_scope(config.env):`` makes the entry's ``env:`` apply to programs started in this task."""

    def __init__(self, setting: Optional[EnvSetting]) -> None:
        self._setting = setting

    def __enter__(self) -> Optional[EnvSetting]:
        self._token = _CURRENT.set(self._setting)
        return self._setting

    def __exit__(self, *exc: object) -> None:
        _CURRENT.reset(self._token)
