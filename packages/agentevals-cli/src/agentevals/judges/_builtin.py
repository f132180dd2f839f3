"""Deterministic assertions usable by name in ``agentevals eval assert`` (AgentV semantics, binary 0/1).

``contains``, ``icontains``, ``contains-any``/``-all``, ``icontains-any``/``-all``, ``starts-with``,
``ends-with``, ``regex`` (JavaScript syntax, ``flags`` i/m/s), ``is-json``, ``equals``; snake_case
aliases (``is_json``) are accepted. The checks and their hit/miss texts are the AgentV family's
(``agentevals.evaluators.agentv._checks``), the same as the eval_config.yaml types of these names.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final

from ..errors import ConfigError
from ..evaluators.agentv import _checks as checks
from ._runner import JudgeResult

__all__ = ["BUILTIN_ASSERTIONS", "builtin_assertion_names", "run_builtin_assertion"]


def _regex(output: str, pattern: str, config: dict[str, Any]) -> checks.Check:
    try:
        return checks.regex(output, pattern, str(config.get("flags") or ""))
    except re.error as exc:
        raise ConfigError(f"invalid regex {pattern!r}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


_STRING, _LIST, _NONE = "string", "list", "none"
# name → (kind of value, check(output, value, config))
BUILTIN_ASSERTIONS: Final[dict[str, tuple[str, Callable[[str, Any, dict[str, Any]], checks.Check]]]] = {
    "contains": (_STRING, lambda out, v, _: checks.contains(out, v)),
    "icontains": (_STRING, lambda out, v, _: checks.contains(out, v, ignore_case=True)),
    "contains-any": (_LIST, lambda out, v, _: checks.contains_any(out, v)),
    "icontains-any": (_LIST, lambda out, v, _: checks.contains_any(out, v, ignore_case=True)),
    "contains-all": (_LIST, lambda out, v, _: checks.contains_all(out, v)),
    "icontains-all": (_LIST, lambda out, v, _: checks.contains_all(out, v, ignore_case=True)),
    "starts-with": (_STRING, lambda out, v, _: checks.starts_with(out, v)),
    "ends-with": (_STRING, lambda out, v, _: checks.ends_with(out, v)),
    "equals": (_STRING, lambda out, v, _: checks.equals(out, v)),
    "regex": (_STRING, _regex),
    "is-json": (_NONE, lambda out, _v, _c: checks.is_json(out)),
}


def builtin_assertion_names() -> list[str]:
    """The names ``eval assert`` accepts besides discovered judges (kebab-case; snake_case also works)."""
    return sorted(BUILTIN_ASSERTIONS)


def run_builtin_assertion(name: str, output: str, config: dict[str, Any]) -> JudgeResult:
    """Run builtin assertion ``name`` on ``output``; ``config`` holds ``value`` (and ``flags`` for regex).

    Raises:
        ConfigError: unknown name, a missing/ill-typed ``value``, or a regex that does not compile.
    """
    key = name.replace("_", "-")
    if key not in BUILTIN_ASSERTIONS:
        raise ConfigError(
            f"unknown builtin assertion '{name}'; known: {', '.join(builtin_assertion_names())}"
        )
    kind, check = BUILTIN_ASSERTIONS[key]
    value = config.get("value")
    if kind == _LIST and isinstance(value, str):
        value = [value]
    if kind == _STRING and isinstance(value, list) and len(value) == 1:
        value = value[0]
    ok = {
        _STRING: isinstance(value, str) and value != "",
        _LIST: isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value),
        _NONE: True,
    }[kind]
    if not ok:
        wanted = "a non-empty string" if kind == _STRING else "one or more strings"
        raise ConfigError(f"assertion '{key}' needs --value ({wanted}), got {value!r}")
    result = check(output, value, config)
    return JudgeResult(result.score, result.text, result.hits, result.misses)
