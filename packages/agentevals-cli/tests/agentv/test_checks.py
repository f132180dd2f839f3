"""AgentV's assertion checks behave like the JavaScript AgentV runs: ``RegExp`` and ``String.prototype.trim``.

Every expected value below is what Node 20 gives for ``new RegExp(pattern, flags).test(text)`` (or for
``text.trim() === value.trim()``), so a team moving from AgentV keeps its scores.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from agentevals.evaluators.agentv import _checks as checks
from agentevals.evaluators.agentv._checks import Check

JS_REGEX = [
    # `$` is the end of input, not "before a final newline"; `^`/`$` with `m` see \r, \u2028, \u2029 too
    ("^Paris$", "", "Paris\n", False),
    ("(?:a|b)$", "", "a\n", False),
    ("[a-z]+$", "i", "ABC\n", False),
    ("Paris$", "", "The capital is Paris", True),
    ("^Paris$", "m", "x\nParis\r\ny", True),
    ("^Paris$", "m", "x\rParis\ry", True),
    ("end$", "m", "end\u2028x", True),
    ("^x", "m", "a\u2029x", True),
    # \d, \w, \b are ASCII in JavaScript
    (r"\d+", "", "٣", False),
    (r"^\w+$", "", "café", False),
    (r"\bcafé\b", "", "le café noir", False),
    (r"\Bfé", "", "café", True),
    (r"[\d]", "", "٣", False),
    (r"[\w-]+$", "", "é", False),
    (r"\D", "", "٣", True),
    (r"\W", "", "é", True),
    (r"[^\d]", "", "٣", True),
    (r"[a\D]", "", "٣", True),
    (r"[^a\W]", "", "é", False),
    (r"\bword\b", "", "a word here", True),
    # \s is JavaScript's whitespace (BOM yes; \x1c and NEL no)
    (r"\s", "", "\x1c", False),
    (r"\s", "", "\ufeff", True),
    (r"^\S+$", "", "a\x85b", True),
    # `.` stops at every line terminator unless `s`
    ("a.b", "", "a\rb", False),
    ("a.b", "", "a\u2028b", False),
    ("a.b", "s", "a\nb", True),
    # JavaScript-only syntax and flags
    ("[^]", "", "x", True),
    ("a[]", "", "a", False),
    ("b", "y", "ab", False),
    ("a", "y", "ab", True),
    (r"\A", "", "A", True),
    (r"\Z", "", "xZ", True),
    (r"(?<y>\d{4})-\k<y>", "", "2024-2024", True),
    ("[$]", "", "a$", True),
    (r"\$", "", "a$", True),
    (r"[\s\S]", "", "\n", True),
    ("É", "i", "é", True),
]


@pytest.mark.parametrize(("pattern", "flags", "text", "matches"), JS_REGEX)
def test_regex_is_javascript_regexp(pattern: str, flags: str, text: str, matches: bool) -> None:
    assert checks.regex(text, pattern, flags).passed is matches


@pytest.mark.parametrize(
    ("check", "output", "value", "passed"),
    [
        (checks.equals, "\ufeff42", "42", True),  # trim() removes a BOM
        (checks.equals, "42\x1c", "42", False),  # ... but not the information separators
        (checks.equals, "42\x85", "42", False),  # ... nor NEL
        (checks.starts_with, "\ufeff The answer", "The", True),
        (checks.ends_with, "done\u3000", "done", True),
        (checks.ends_with, "done\x1f", "done", False),
    ],
)
def test_trimming_is_javascript_trim(check: Callable[[str, str], Check], output: str, value: str, passed: bool) -> None:
    assert check(output, value).passed is passed
