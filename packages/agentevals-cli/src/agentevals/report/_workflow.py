"""Untrusted text never starts a CI workflow command: ``defuse`` is applied to every rendered report.

A GitHub Actions runner reads each line a step prints: a line that starts (after whitespace) with ``::``
is a workflow command (``::add-mask::``, ``::stop-commands::``, ``::error::``, the retired ``::set-env``),
and ``##[command]`` is one anywhere in a line (the older form). A trace's tool names, the agent's output,
case ids all reach the reports, so a trace could mask a secret, stop command processing or forge an
annotation in the CI log. ``defuse`` breaks both forms in a way each format keeps readable:

- text (table, summary, markdown): an invisible WORD JOINER (U+2060) between the characters;
- ``json``: ``[`` written as ``\\u005b`` (the same string once parsed; a JSON line never starts with ``::``);
- ``junit``, ``html``: character references (``&#58;``, ``&#91;``), the same text once parsed.

    defuse("ok\\n::add-mask::x", "table")   # 'ok\\n:\\u2060:add-mask::x'

agentevals' own annotations (``report.github``) are built apart and are not passed through it.
"""

from __future__ import annotations

import re

__all__ = ["defuse"]

_JOINER = "\u2060"
_LINE_START = re.compile(r"(?:\A|(?<=[\r\n]))([^\S\r\n]*)::")
"""``::`` after a line's leading whitespace (the runner splits lines at ``\\r`` too, and trims every Unicode
space, which Python's ``\\s`` covers)."""
_OLD_FORM = "##["

_BY_FORMAT = {
    "json": ("::", "##\\u005b"),
    "junit": ("&#58;:", "##&#91;"),
    "html": ("&#58;:", "##&#91;"),
}
_TEXT = (f":{_JOINER}:", f"##{_JOINER}[")


def defuse(text: str, fmt: str) -> str:
    """``text`` (a report in format ``fmt``) with no line able to run a workflow command."""
    line_start, old_form = _BY_FORMAT.get(fmt, _TEXT)
    text = _LINE_START.sub(lambda m: m.group(1) + line_start, text)
    return text.replace(_OLD_FORM, old_form)
