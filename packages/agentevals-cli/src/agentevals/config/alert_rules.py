"""The grammar of alert rules (``serve --alert``, the config's ``alerts:``), checked where the config is read.

    rule = parse_rule("tool_trajectory_avg_score pass_rate < 0.9 over 1h min 20")
    rule.fires(window)      # window: anything with n, passed and interval() (serve.continuous.Window)

What a rule does is documented, and done, in ``agentevals.serve.alerts``; this module only reads it, so that
``agentevals config validate`` refuses a bad rule without importing serve.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal, Protocol

__all__ = ["DEFAULT_MIN_SESSIONS", "RULE_SYNTAX", "AlertRule", "parse_rule"]


class _Tally(Protocol):
    @property
    def n(self) -> int: ...

    @property
    def passed(self) -> int: ...

    def interval(self, z: float = 1.96) -> tuple[float, float]: ...


DEFAULT_MIN_SESSIONS = 10
"""Sessions a window needs before its rule may fire (``min N`` in the rule overrides it)."""
RULE_SYNTAX = "METRIC pass_rate < THRESHOLD over DURATION [min N], e.g. 'tool_trajectory_avg_score pass_rate < 0.9 over 1h'"
_TOKEN = re.compile(r"<=|>=|==|!=|[<>]|[^\s<>=!]+")
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(s|m|h|d|w)$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


@dataclass(frozen=True)
class AlertRule:
    """One parsed rule; ``text`` is its canonical spelling (the key of ``ContinuousState.active``)."""

    metric: str
    comparison: Literal["<", "<="]
    threshold: float
    window_seconds: float
    window: str
    """The window as written (``1h``)."""
    min_sessions: int = DEFAULT_MIN_SESSIONS

    @property
    def text(self) -> str:
        return (f"{self.metric} pass_rate {self.comparison} {self.threshold:g} over {self.window}"
                f" min {self.min_sessions}")

    def fires(self, window: _Tally) -> bool:
        """Enough sessions, and the whole 95% Wilson interval of the pass rate is under the threshold."""
        if window.n < self.min_sessions:
            return False
        upper = window.interval()[1]
        return upper < self.threshold if self.comparison == "<" else upper <= self.threshold

    def clears(self, window: _Tally) -> bool:
        """The window is empty, or its pass rate no longer breaks the rule."""
        if window.n == 0:
            return True
        rate = window.passed / window.n
        return rate >= self.threshold if self.comparison == "<" else rate > self.threshold


def parse_rule(text: str) -> AlertRule:
    """``"METRIC pass_rate < 0.9 over 1h [min 20]"`` → an ``AlertRule``; ``ValueError`` names the column."""
    tokens = [(m.group(), m.start() + 1) for m in _TOKEN.finditer(text)]
    end = len(text.rstrip()) + 1

    def take(i: int, what: str) -> tuple[str, int]:
        if i >= len(tokens):
            raise ValueError(f"column {end}: expected {what}, got the end of the rule (say {RULE_SYNTAX})")
        return tokens[i]

    def wrong(i: int, what: str) -> ValueError:
        token, col = tokens[i]
        return ValueError(f"column {col}: expected {what}, got {token!r} (say {RULE_SYNTAX})")

    metric, _ = take(0, "a metric name")
    if take(1, "'pass_rate'")[0] != "pass_rate":
        raise wrong(1, "'pass_rate'")
    comparison = take(2, "'<' or '<='")[0]
    if comparison not in ("<", "<="):
        raise wrong(2, "'<' or '<=' (a rule watches for a drop)")
    raw, col = take(3, "a threshold between 0 and 1")
    try:
        threshold = float(raw)
    except ValueError:
        raise wrong(3, "a threshold between 0 and 1") from None
    if not (0.0 < threshold <= 1.0) or math.isnan(threshold):
        raise ValueError(f"column {col}: the threshold must be in (0, 1], got {raw} (a pass rate: 0.9 = 90%)")
    if take(4, "'over'")[0] != "over":
        raise wrong(4, "'over'")
    window, col = take(5, "a window such as 30m, 1h or 1d")
    found = _DURATION.match(window)
    if not found or float(found.group(1)) <= 0:
        raise wrong(5, "a window such as 30m, 1h or 1d")
    seconds = float(found.group(1)) * _UNITS[found.group(2)]
    min_sessions = DEFAULT_MIN_SESSIONS
    if len(tokens) > 6:
        if tokens[6][0] != "min":
            raise wrong(6, "'min N' or the end of the rule")
        raw, col = take(7, "the minimum number of sessions")
        if not raw.isdigit() or int(raw) < 1:
            raise wrong(7, "the minimum number of sessions (a whole number, at least 1)")
        min_sessions = int(raw)
        if len(tokens) > 8:
            raise wrong(8, "the end of the rule")
    return AlertRule(metric=metric, comparison=comparison, threshold=threshold,  # type: ignore[arg-type]
                     window_seconds=seconds, window=window, min_sessions=min_sessions)
