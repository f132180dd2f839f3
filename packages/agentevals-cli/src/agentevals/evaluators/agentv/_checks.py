"""AgentV's deterministic assertions as pure checks: passed or not, with AgentV's hit or miss text.

The one implementation behind the eval_config.yaml types (``assertions.py``) and ``agentevals eval
assert <name>`` (``agentevals.judges``). Checks and texts follow AgentV v2.19
(``evaluators/assertions.ts``): ``contains`` is case-sensitive with no trimming, ``starts_with``,
``ends_with`` and ``equals`` trim both sides, ``regex`` is a JavaScript ``RegExp``, ``is_json`` is
``JSON.parse``.

Patterns are matched with the ``regex`` engine (``re``-compatible syntax), whose matcher stops at a
timeout: a catastrophic pattern ends at the evaluator's deadline instead of hanging the run (``re`` holds
the interpreter until it returns, and no thread or deadline can stop it).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import regex as _engine

from ...errors import EvaluatorFailure

__all__ = [
    "REGEX_TIMEOUT",
    "Check",
    "compile_js_regex",
    "contains",
    "contains_all",
    "contains_any",
    "ends_with",
    "equals",
    "is_json",
    "js_trim",
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


_JS_SPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""ECMAScript WhiteSpace and LineTerminator as a character-class body: what JavaScript's ``\\s`` matches."""
_JS_TRIM: Final = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
"""The same characters, listed: what ``String.prototype.trim`` removes."""


def js_trim(text: str) -> str:
    """``String.prototype.trim``: strips JavaScript whitespace (a BOM yes; ``\\x1c``-``\\x1f``, NEL no)."""
    return text.strip(_JS_TRIM)


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
    return Check(js_trim(output).startswith(js_trim(value)), f'Output starts with "{value}"',
                 f'Output does not start with "{value}"')


def ends_with(output: str, value: str) -> Check:
    """``ends-with``: the trimmed output ends with the trimmed ``value``."""
    return Check(js_trim(output).endswith(js_trim(value)), f'Output ends with "{value}"',
                 f'Output does not end with "{value}"')


def equals(output: str, value: str) -> Check:
    """``equals``: output and ``value`` are equal once both are trimmed."""
    return Check(js_trim(output) == js_trim(value), f'Output equals "{value}"', f'Output does not equal "{value}"')


_JS_FLAGS: Final = frozenset("dgimsuvy")

_LINE_END: Final = "\n\r\u2028\u2029"
# JavaScript's \d, \w, \s as class bodies (ASCII digits and word characters; JS whitespace).
_CLASS: Final = {"d": "0-9", "w": "A-Za-z0-9_", "s": _JS_SPACE}
_WORD: Final = "[A-Za-z0-9_]"
_OUTSIDE: Final = {
    "b": rf"(?:(?<={_WORD})(?!{_WORD})|(?<!{_WORD})(?={_WORD}))",
    "B": rf"(?:(?<={_WORD})(?={_WORD})|(?<!{_WORD})(?!{_WORD}))",
}
_PYTHON_ONLY: Final = set("aeghijlmopqyzACEFGHIJKLMNOPQRTUVXYZ")
"""Escapes of letters that JavaScript (without ``u``) reads as the letter itself but Python does not."""


def _escape(pattern: str, i: int) -> tuple[str, int, str | None]:
    """The escape at ``pattern[i]`` (a backslash): (its text, the index after it, a shorthand letter or None)."""
    nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
    if nxt.lower() in _CLASS:
        return "", i + 2, nxt
    if nxt == "c" and i + 2 < len(pattern) and pattern[i + 2].isascii() and pattern[i + 2].isalpha():
        return f"\\x{ord(pattern[i + 2]) % 32:02x}", i + 3, None
    if nxt in _PYTHON_ONLY:
        return re.escape(nxt), i + 2, None
    return pattern[i : i + 2], i + 2, None


def _char_class(pattern: str, i: int) -> tuple[str, int]:
    """Translate the class starting at ``pattern[i] == '['``; returns (Python text, index after ``]``)."""
    negated = pattern.startswith("[^", i)
    j = i + 2 if negated else i + 1
    body, others = "", []
    while j < len(pattern) and pattern[j] != "]":
        char = pattern[j]
        if char == "\\":
            text, j, short = _escape(pattern, j)
            if short is None:
                body += "\\x08" if text == "\\b" else text
            elif short.islower():
                body += _CLASS[short]
            else:
                others.append(f"[^{_CLASS[short.lower()]}]")
            continue
        body += "\\" + char if char in "[&~|" else char
        j += 1
    if j >= len(pattern):
        raise re.error("unterminated character set", pattern, i)
    if not body and not others:
        python = r"[\s\S]" if negated else "(?!)"  # JS [^] is any character, [] matches nothing
    else:
        union = [*([f"[{body}]"] if body else []), *others]
        alternation = union[0] if len(union) == 1 else f"(?:{'|'.join(union)})"
        if not negated:
            python = alternation
        elif not others:
            python = f"[^{body}]"
        else:
            python = rf"(?:(?!{alternation})[\s\S])"
    return python, j + 1


def _translate(pattern: str, multiline: bool, dotall: bool) -> str:
    """A JavaScript ``RegExp`` source as Python ``re`` syntax with JavaScript's meaning."""
    out, i = [], 0
    while i < len(pattern):
        char = pattern[i]
        if char == "\\":
            nxt = pattern[i + 1] if i + 1 < len(pattern) else ""
            if nxt == "k" and pattern.startswith("<", i + 2) and ">" in pattern[i + 3 :]:
                end = pattern.index(">", i + 3)
                out.append(f"(?P={pattern[i + 3 : end]})")
                i = end + 1
                continue
            if nxt in ("b", "B"):
                out.append(_OUTSIDE[nxt])
                i += 2
                continue
            text, i, short = _escape(pattern, i)
            if short is not None:
                body = _CLASS[short.lower()]
                text = f"[{body}]" if short.islower() else f"[^{body}]"
            out.append(text)
        elif char == "[":
            text, i = _char_class(pattern, i)
            out.append(text)
        elif char == "(" and pattern.startswith("(?<", i) and pattern[i + 3 : i + 4] not in ("=", "!"):
            out.append("(?P<")
            i += 3
        else:
            if char == ".":
                out.append(r"[\s\S]" if dotall else f"[^{_LINE_END}]")
            elif char == "$":
                out.append(rf"(?=[{_LINE_END}]|\Z)" if multiline else r"\Z")
            elif char == "^":
                out.append(rf"(?:\A|(?<=[{_LINE_END}]))" if multiline else r"\A")
            else:
                out.append(char)
            i += 1
    return "".join(out)


REGEX_TIMEOUT: Final = 10.0
"""Seconds a ``regex`` check may run when the caller gives no deadline."""


def compile_js_regex(pattern: str, flags: str = "") -> Any:
    """Compile a JavaScript ``RegExp`` to a Python pattern that matches the same strings.

    Translated: ``^``/``$`` (input edges, or every line terminator with ``m``), ``.`` (no line
    terminators unless ``s``), ASCII ``\\d``/``\\w``/``\\b``, JavaScript's ``\\s``, ``[^]``/``[]``,
    named groups and ``\\k<name>``, letter escapes JavaScript reads literally (``\\A`` is ``A``).

    Raises:
        ValueError: a flag JavaScript does not have.
        re.error: the pattern does not compile.
    """
    unknown = sorted(set(flags) - _JS_FLAGS)
    if unknown:
        raise ValueError(f"unknown regex flag(s) {''.join(unknown)!r}; use i, m, s (y anchors at the start; d, g, u, v have no effect)")
    translated = _translate(pattern, "m" in flags, "s" in flags)
    re.compile(translated, re.IGNORECASE if "i" in flags else 0)  # the syntax (and messages) of ``re``
    bits = _engine.IGNORECASE if "i" in flags else 0
    try:
        return _engine.compile(translated, bits | _engine.VERSION0)
    except _engine.error as exc:
        raise re.error(str(exc)) from None  # callers (config validation) catch ``re.error``


def regex(output: str, pattern: str, flags: str = "", *, timeout: float = REGEX_TIMEOUT) -> Check:
    """``regex``: ``new RegExp(pattern, flags).test(output)``; the texts show ``/pattern/flags (flags: …)``.

    Raises:
        ValueError, re.error: as ``compile_js_regex``.
        EvaluatorFailure: the match did not finish within ``timeout`` seconds (catastrophic backtracking).
    """
    compiled = compile_js_regex(pattern, flags)
    # ``test()`` on a fresh RegExp starts at index 0; the sticky flag ``y`` anchors it there.
    try:
        match = compiled.match if "y" in flags else compiled.search
        # concurrent: the matcher releases the GIL, so a caller's thread-based deadline can fire too.
        found = match(output, timeout=timeout, concurrent=True) is not None
    except TimeoutError:
        raise EvaluatorFailure(
            # Worded like the caller's thread deadline, which races this one at the same instant.
            f"regex /{pattern}/{flags} timed out after {timeout:g}s on a {len(output)}-character answer "
            "(catastrophic backtracking?); simplify the pattern or raise the entry's timeout") from None
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
