"""Deterministic assertions usable by name in ``agentevals eval assert`` (AgentV semantics, binary 0/1).

``contains``, ``icontains``, ``contains-any``/``-all``, ``icontains-any``/``-all``, ``starts-with``,
``ends-with``, ``regex`` (``flags`` i/m/s), ``is-json``, ``equals``; snake_case aliases (``is_json``)
are accepted. Messages follow AgentV's hit/miss wording.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Final

from ..errors import ConfigError
from ._runner import JudgeResult

__all__ = ["BUILTIN_ASSERTIONS", "builtin_assertion_names", "run_builtin_assertion"]


def _verdict(ok: bool, hit: str, miss: str) -> JudgeResult:
    text = hit if ok else miss
    return JudgeResult(1.0 if ok else 0.0, text, [hit] if ok else [], [] if ok else [miss])


def _quoted(values: list[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def _contains(output: str, value: Any, fold: bool) -> JudgeResult:
    suffix = " (case-insensitive)" if fold else ""
    haystack, needle = (output.lower(), value.lower()) if fold else (output, value)
    return _verdict(
        needle in haystack, f'Output contains "{value}"{suffix}', f'Output does not contain "{value}"{suffix}'
    )


def _contains_any(output: str, values: list[str], fold: bool) -> JudgeResult:
    suffix = " (case-insensitive)" if fold else ""
    haystack = output.lower() if fold else output
    found = next((v for v in values if (v.lower() if fold else v) in haystack), None)
    return _verdict(
        found is not None,
        f'Output contains "{found}"{suffix}',
        f"Output does not contain any of: {_quoted(values)}{suffix}",
    )


def _contains_all(output: str, values: list[str], fold: bool) -> JudgeResult:
    suffix = " (case-insensitive)" if fold else ""
    haystack = output.lower() if fold else output
    missing = [v for v in values if (v.lower() if fold else v) not in haystack]
    miss = f"Output missing{suffix}: {_quoted(missing)}"
    return _verdict(not missing, f"Output contains all {len(values)} expected strings{suffix}", miss)


def _affix(output: str, value: str, verb: str, negated: str) -> JudgeResult:
    out, expected = output.strip(), value.strip()
    ok = {"starts with": out.startswith, "ends with": out.endswith, "equals": out.__eq__}[verb](expected)
    return _verdict(ok, f'Output {verb} "{value}"', f'Output {negated} "{value}"')


_FLAGS: Final = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "g": 0, "u": 0, "y": 0, "d": 0}


def _regex(output: str, pattern: str, flags: str) -> JudgeResult:
    bad = sorted(set(flags) - set(_FLAGS))
    if bad:
        raise ConfigError(f"regex flag(s) {''.join(bad)!r} not supported; use i, m or s")
    try:
        compiled = re.compile(pattern, sum(_FLAGS[f] for f in set(flags)))
    except re.error as exc:
        raise ConfigError(f"invalid regex {pattern!r}: {exc}") from None
    shown = f"/{pattern}/{flags}"
    return _verdict(
        compiled.search(output) is not None,
        f"Output matches pattern {shown}",
        f"Output does not match pattern {shown}",
    )


def _is_json(output: str) -> bool:
    def reject(constant: str) -> None:
        raise ValueError(constant)

    try:
        json.loads(output, parse_constant=reject)  # JSON.parse rejects NaN/Infinity
    except ValueError:
        return False
    return True


_STRING, _LIST, _NONE = "string", "list", "none"
# name → (kind of value, check(output, value, config))
BUILTIN_ASSERTIONS: Final[dict[str, tuple[str, Callable[[str, Any, dict[str, Any]], JudgeResult]]]] = {
    "contains": (_STRING, lambda out, v, _: _contains(out, v, False)),
    "icontains": (_STRING, lambda out, v, _: _contains(out, v, True)),
    "contains-any": (_LIST, lambda out, v, _: _contains_any(out, v, False)),
    "icontains-any": (_LIST, lambda out, v, _: _contains_any(out, v, True)),
    "contains-all": (_LIST, lambda out, v, _: _contains_all(out, v, False)),
    "icontains-all": (_LIST, lambda out, v, _: _contains_all(out, v, True)),
    "starts-with": (_STRING, lambda out, v, _: _affix(out, v, "starts with", "does not start with")),
    "ends-with": (_STRING, lambda out, v, _: _affix(out, v, "ends with", "does not end with")),
    "equals": (_STRING, lambda out, v, _: _affix(out, v, "equals", "does not equal")),
    "regex": (_STRING, lambda out, v, cfg: _regex(out, v, str(cfg.get("flags") or ""))),
    "is-json": (
        _NONE,
        lambda out, _v, _c: _verdict(_is_json(out), "Output is valid JSON", "Output is not valid JSON"),
    ),
}


def builtin_assertion_names() -> list[str]:
    """The names ``eval assert`` accepts besides discovered judges (kebab-case; snake_case also works)."""
    return sorted(BUILTIN_ASSERTIONS)


def run_builtin_assertion(name: str, output: str, config: dict[str, Any]) -> JudgeResult:
    """Run builtin assertion ``name`` on ``output``; ``config`` holds ``value`` (and ``flags`` for regex).

    Raises:
        ConfigError: unknown name, or a missing/ill-typed ``value``.
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
    return check(output, value, config)
