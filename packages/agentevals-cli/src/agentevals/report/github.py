"""GitHub Actions workflow commands: one ``::error`` annotation per failing row (when ``GITHUB_ACTIONS``
is set), so failures show on the job's summary page without opening the log."""

from __future__ import annotations

from ..results import RunResult
from ._context import failing_rows
from ._format import fmt_num

__all__ = ["github_annotations"]

_LIMIT = 50
"""GitHub shows at most 10 error annotations per step; 50 keeps the log short and the total honest."""


def _escape(text: str, *, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def github_annotations(run: RunResult) -> list[str]:
    """``::error title=agentevals tool_trajectory_avg_score::trace 3e28…: FAILED score 0 < threshold 1 …``."""
    lines = []
    rows = failing_rows(run)
    for case, m in rows[:_LIMIT]:
        source = case.sources[0] if case.sources else ""
        score = f" score {fmt_num(m.score)} < threshold {fmt_num(m.threshold)}" if m.score is not None else ""
        why = m.error or m.reason or ""
        message = f"{case.case_id}: {m.status.value}{score}{' · ' + why if why else ''}"
        file_part = f"file={_escape(source, prop=True)}," if source else ""
        lines.append(f"::error {file_part}title={_escape(f'agentevals {m.name}', prop=True)}::{_escape(message)}")
    if len(rows) > _LIMIT:
        lines.append(f"::error title=agentevals::{len(rows) - _LIMIT} more failing results (see the reports)")
    return lines
