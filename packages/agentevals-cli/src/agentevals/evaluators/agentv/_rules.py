"""Which of AgentV's scoring rules an AgentV entry follows: those of the format its config is written in.

* ``2.19``: AgentV v2.19's verdicts: ``pass`` at 0.8, ``borderline`` from 0.6, ``fail`` below; a composite's
  ``threshold`` aggregator counts ``pass`` and ``borderline`` members as passing; a code aggregator may answer
  ``borderline``.
* ``current``: AgentV 4.2 and later (PR #857 removed ``borderline``): ``pass`` at 0.8, else ``fail``; only
  ``pass`` members count for ``threshold``; an ``assert-set`` without an aggregator passes when every member
  with a nonzero weight passes (or, with ``threshold:``, when its weighted score reaches it).

A config is in the current format when any entry (or composite member) uses a spelling that exists only
after v2.19 (``assert-set``, ``script``, ``llm-rubric``, ``skill-used``, ``code-grader``, ``metric:``, …);
``agentv_rules:`` at the top of the config chooses explicitly.

    >>> detect_rules([{"type": "composite", "evaluators": [{"type": "contains", "value": "x"}]}])
    '2.19'
    >>> detect_rules([{"type": "assert-set", "assert": [{"type": "contains", "value": "x"}]}])
    'current'
    >>> verdict_of(0.7, "2.19").value, verdict_of(0.7, "current").value
    ('borderline', 'fail')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal, Optional

from ...results import Verdict, verdict_for
from ._vocabulary import CURRENT_TYPES

__all__ = ["RULES", "Rules", "current_spelling", "detect_rules", "passing_verdicts", "verdict_of"]

Rules = Literal["2.19", "current"]
RULES: tuple[Rules, ...] = ("2.19", "current")
PASS_LINE = 0.8
_MEMBER_KEYS = ("assert", "assertions", "evaluators")


def verdict_of(score: Optional[float], rules: Rules) -> Verdict:
    """AgentV's ``scoreToVerdict`` under ``rules`` (no score: ``fail``)."""
    if rules == "current":
        return Verdict.PASS if score is not None and score >= PASS_LINE else Verdict.FAIL
    return verdict_for(score) or Verdict.FAIL


def passing_verdicts(rules: Rules) -> tuple[Verdict, ...]:
    """The member verdicts a ``threshold`` aggregator counts as passing."""
    return (Verdict.PASS,) if rules == "current" else (Verdict.PASS, Verdict.BORDERLINE)


def current_spelling(entry: Any) -> Optional[str]:
    """The first spelling in ``entry`` (or its members) that exists only after v2.19, or None."""
    if not isinstance(entry, dict):
        return None
    if entry.get("type") in CURRENT_TYPES:
        return f"type: {entry['type']}"
    if "metric" in entry:
        return "metric:"
    for key in _MEMBER_KEYS:
        members = entry.get(key)
        for member in members if isinstance(members, list) else ():
            found = current_spelling(member)
            if found:
                return found
    return None


def detect_rules(entries: Iterable[Any]) -> Rules:
    """``current`` when any entry is written in a format after v2.19, else ``2.19``."""
    return "current" if any(current_spelling(e) for e in entries) else "2.19"
