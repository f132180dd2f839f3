"""CSV cells a spreadsheet will not run: the formula-injection guard on what we write, undone on what we read.

A cell that starts with ``=``, ``+``, ``-``, ``@``, a tab or a carriage return is a formula to Excel, LibreOffice
and Google Sheets (``=HYPERLINK(…)`` in a case id or a note taken from a trace would run when the labels sheet
is opened). As OWASP advises (https://owasp.org/www-community/attacks/CSV_Injection), such a text cell is
written with a leading ``'``, which spreadsheets show as text and do not evaluate. Numbers are not text: a
score is written as the number it is (``-0.5`` stays ``-0.5``), so only text cells go through ``guard_cell``.

The guard is undone on import, exactly: a cell that already starts with quotes before such a character gets one
more quote when written, and reading removes one, so every text survives the round trip.

Example:
    ```python
    guard_cell("=1+1")      # "'=1+1"
    guard_cell("'=1+1")     # "''=1+1"
    unguard_cell("''=1+1")  # "'=1+1"
    guard_cell("ok")        # "ok"
    ```
"""

from __future__ import annotations

import re

__all__ = ["guard_cell", "unguard_cell"]

_FORMULA = re.compile(r"'*[=+\-@\t\r]")
"""A cell a spreadsheet would evaluate, after any quotes we put (or found) in front of it."""
_GUARDED = re.compile(r"'+[=+\-@\t\r]")


def guard_cell(text: str) -> str:
    """``text`` as a CSV text cell no spreadsheet evaluates (a ``'`` in front when it would be a formula)."""
    return "'" + text if _FORMULA.match(text) else text


def unguard_cell(text: str) -> str:
    """The text ``guard_cell`` was given: one leading ``'`` removed where ``guard_cell`` put one."""
    return text[1:] if _GUARDED.match(text) else text
