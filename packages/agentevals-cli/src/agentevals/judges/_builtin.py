"""Deterministic assertions usable by name in ``agentevals eval assert`` (AgentV semantics, binary 0/1).

``contains``, ``icontains``, ``contains-any``/``-all``, ``icontains-any``/``-all``, ``starts-with``,
``ends-with``, ``regex`` (JavaScript syntax, ``flags`` i/m/s), ``is-json``, ``equals``; snake_case
aliases (``is_json``) are accepted. Each is a row of the AgentV assertion table
(``agentevals.evaluators.agentv._kinds``): the same check, hit and miss texts as the eval_config.yaml
type of that name, and a row added there is a name here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

from ..errors import ConfigError
from ..evaluators.agentv import ASSERTION_KINDS, AssertionKind, find_assertion_kind
from ._runner import JudgeResult

__all__ = ["BUILTIN_ASSERTIONS", "builtin_assertion_names", "run_builtin_assertion"]

BUILTIN_ASSERTIONS: Final[Mapping[str, AssertionKind]] = ASSERTION_KINDS
"""Name (kebab-case) → its row of the AgentV assertion table (``evaluators.agentv._kinds``), live."""


def builtin_assertion_names() -> list[str]:
    """The names ``eval assert`` accepts besides discovered judges (kebab-case; snake_case also works)."""
    return sorted(BUILTIN_ASSERTIONS)


def run_builtin_assertion(name: str, output: str, config: dict[str, Any]) -> JudgeResult:
    """Run builtin assertion ``name`` on ``output``; ``config`` holds ``value`` (and ``flags`` for regex).

    Raises:
        ConfigError: unknown name, a missing/ill-typed ``value``, or a regex that does not compile.
    """
    row = find_assertion_kind(name)
    if row is None:
        raise ConfigError(
            f"unknown builtin assertion '{name}'; known: {', '.join(builtin_assertion_names())}"
        )
    value = config.get("value")
    if row.value == "strings" and isinstance(value, str):
        value = [value]
    if row.value in ("string", "regex") and isinstance(value, list) and len(value) == 1:
        value = value[0]
    ok = {
        "string": isinstance(value, str) and value != "",
        "regex": isinstance(value, str) and value != "",
        "strings": isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value),
        "none": True,
    }[row.value]
    if not ok:
        wanted = "one or more strings" if row.value == "strings" else "a non-empty string"
        raise ConfigError(f"assertion '{row.name}' needs --value ({wanted}), got {value!r}")
    try:
        result = row.run(output, value, flags=str(config.get("flags") or ""))
    except re.error as exc:
        raise ConfigError(f"invalid regex {value!r}: {exc}") from None
    except ValueError as exc:
        if row.value != "regex":
            raise
        raise ConfigError(str(exc)) from None
    return JudgeResult(result.score, result.text, result.hits, result.misses)
