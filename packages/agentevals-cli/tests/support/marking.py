"""A ``code`` evaluator that marks each trace it scores, for tests that must see which cases ran: its marks are
kept beside its folder (``<project>/marks``), not in it, since the result cache's key covers that folder."""

from __future__ import annotations

from pathlib import Path

MARKING_JUDGE = '''\
import json, os, sys
here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
trace = json.load(sys.stdin)["invocations"][0]["trace_id"]
with open(os.path.join(here, "marks"), "a") as fh:
    fh.write(trace + "\\n")
'''
"""The judge's first lines (``trace`` is the id of the trace it scores); a test adds how it scores."""


def marks(root: Path) -> list[str]:
    """The traces scored since the last call, in order (the marks are cleared)."""
    path = root / "marks"
    lines = path.read_text().split() if path.exists() else []
    path.unlink(missing_ok=True)
    return lines


def marking_project(root: Path, scoring: str) -> None:
    """``root/eval_config.yaml`` with one evaluator, ``judge``: ``MARKING_JUDGE`` then ``scoring`` (lines that print
    its result), in ``root/judge/judge.py``."""
    (root / "judge").mkdir()
    (root / "judge" / "judge.py").write_text(MARKING_JUDGE + scoring)
    (root / "eval_config.yaml").write_text(
        "evaluators:\n  - name: judge\n    type: code\n    path: ./judge/judge.py\n    threshold: 0.5\n")
