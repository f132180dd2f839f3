"""AgentV's deterministic assertions as pure checks: passed or not, with AgentV's hit or miss text.

The one implementation behind the eval_config.yaml types (``assertions.py``) and ``agentevals eval
assert <name>`` (``agentevals.judges``). Checks and texts follow AgentV v2.19
(``evaluators/assertions.ts``): ``contains`` is case-sensitive with no trimming, ``starts_with``,
``ends_with`` and ``equals`` trim both sides, ``regex`` is a JavaScript ``RegExp``, ``is_json`` is
``JSON.parse``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "Check",
    "compile_js_regex",
    "contains",
    "contains_all",
    "contains_any",
    "ends_with",
    "equals",
    "is_json",
    "loads_strict",
    "regex",
    "starts_with",
]


@dataclass(frozen=True)
class Check:
    """One assertion's result: AgentV scores it 1 or 0 and reports ``hit`` or ``miss``."""

    passed: bool
    hit: str
    """AgentV's text when the check passes."""
    miss: str
    """AgentV's text when it fails."""

    @property
    def score(self) -> float:
        return 1.0 if self.passed else 0.0

    @property
    def text(self) -> str:
        """The text that applies: ``hit`` when passed, else ``miss``."""
        return self.hit if self.passed else self.miss

    @property
    def hits(self) -> list[str]:
        return [self.hit] if self.passed else []

    @property
    def misses(self) -> list[str]:
        return [] if self.passed else [self.miss]


def _fold(text: str, ignore_case: bool) -> str:
    return text.lower() if ignore_case else text


def _suffix(ignore_case: bool) -> str:
    return " (case-insensitive)" if ignore_case else ""


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def contains(output: str, value: str, *, ignore_case: bool = False) -> Check:
    """``contains`` (``icontains`` with ``ignore_case``): ``value`` occurs in ``output``, no trimming."""
    found = _fold(value, ignore_case) in _fold(output, ignore_case)
    tail = _suffix(ignore_case)
    return Check(found, f'Output contains "{value}"{tail}', f'Output does not contain "{value}"{tail}')


def contains_any(output: str, values: Sequence[str], *, ignore_case: bool = False) -> Check:
    """``contains-any`` / ``icontains-any``: at least one of ``values`` occurs; the hit names the first."""
    haystack = _fold(output, ignore_case)
    first = next((v for v in values if _fold(v, ignore_case) in haystack), None)
    tail = _suffix(ignore_case)
    return Check(first is not None, f'Output contains "{first}"{tail}',
                 f"Output does not contain any of: {_quoted(values)}{tail}")


def contains_all(output: str, values: Sequence[str], *, ignore_case: bool = False) -> Check:
    """``contains-all`` / ``icontains-all``: every one of ``values`` occurs; the miss lists the missing."""
    haystack = _fold(output, ignore_case)
    missing = [v for v in values if _fold(v, ignore_case) not in haystack]
    tail = _suffix(ignore_case)
    return Check(not missing, f"Output contains all {len(values)} expected strings{tail}",
                 f"Output missing{tail}: {_quoted(missing)}")


def starts_with(output: str, value: str) -> Check:
    """``starts-with``: the trimmed output starts with the trimmed ``value``."""
    return Check(output.strip().startswith(value.strip()), f'Output starts with "{value}"',
                 f'Output does not start with "{value}"')


def ends_with(output: str, value: str) -> Check:
    """``ends-with``: the trimmed output ends with the trimmed ``value``."""
    return Check(output.strip().endswith(value.strip()), f'Output ends with "{value}"',
                 f'Output does not end with "{value}"')


def equals(output: str, value: str) -> Check:
    """``equals``: output and ``value`` are equal once both are trimmed."""
    return Check(output.strip() == value.strip(), f'Output equals "{value}"', f'Output does not equal "{value}"')


_JS_FLAGS: Final = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "d": 0, "g": 0, "u": 0, "v": 0, "y": 0}


def compile_js_regex(pattern: str, flags: str = "") -> re.Pattern[str]:
    """Compile a JavaScript ``RegExp`` (named groups and back-references translated) with JS flags.

    Raises:
        ValueError: a flag JavaScript does not have.
        re.error: the pattern does not compile.
    """
    unknown = sorted(set(flags) - set(_JS_FLAGS))
    if unknown:
        raise ValueError(f"unknown regex flag(s) {''.join(unknown)!r}; use i, m, s (d, g, u, v, y have no effect)")
    bits = 0
    for flag in flags:
        bits |= _JS_FLAGS[flag]
    python = re.sub(r"\(\?<(?![=!])", "(?P<", pattern)
    python = re.sub(r"\\k<([A-Za-z_]\w*)>", r"(?P=\1)", python)
    return re.compile(python, bits)


def regex(output: str, pattern: str, flags: str = "") -> Check:
    """``regex``: ``new RegExp(pattern, flags).test(output)``; the texts show ``/pattern/flags (flags: …)``.

    Raises:
        ValueError, re.error: as ``compile_js_regex``.
    """
    found = compile_js_regex(pattern, flags).search(output) is not None
    shown = f"/{pattern}/{flags}" + (f" (flags: {flags})" if flags else "")
    return Check(found, f"Output matches pattern {shown}", f"Output does not match pattern {shown}")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def loads_strict(text: str) -> Any:
    """``JSON.parse``: like ``json.loads`` but NaN/Infinity are errors."""
    return json.loads(text, parse_constant=_reject_constant)


def is_json(output: str) -> Check:
    """``is-json``: ``JSON.parse(output)`` succeeds (no NaN/Infinity, no code fences)."""
    try:
        loads_strict(output)
        parsed = True
    except ValueError:
        parsed = False
    return Check(parsed, "Output is valid JSON", "Output is not valid JSON")
