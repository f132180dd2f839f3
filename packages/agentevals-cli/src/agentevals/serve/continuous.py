"""What ``serve`` knows about continuous evaluation: pulled sources, skip counters, rolling outcomes, alerts.

One ``ContinuousState`` per server, shared (thread-safe) by the parts that write it and the API/UI that
read it::

    state = ContinuousState()
    state.sources[uri] = SourceStatus(uri)         # the puller (``serve --pull``) updates it every poll
    consumers.append(StateRecorder(state))         # every finished session: counters and rolling outcomes
    state.outcomes.window("tool_trajectory_avg_score", 3600)   # -> Window(n, passed, failed_sessions)
    state.outcomes.series("tool_trajectory_avg_score", 6 * 3600, 600)  # the UI's rolling pass rate

Rolling outcomes are one row per (session, metric) that passed or failed, kept for ``keep_seconds`` (and at
most ``max_rows``): skipped, NOT_EVALUATED, ERROR and INFORMATIONAL rows are not outcomes.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, Optional

from ..engine.admission import SKIP_KINDS, skip_kind
from ..engine.consumers import RunConsumer
from ..evaluators.usage import JudgeUsage
from ..results import CaseResult, Status, stats

__all__ = ["AlertEvent", "ContinuousState", "JudgeUsage", "LiveCounters", "Outcomes", "SourceStatus",
           "StateRecorder", "Window", "bucket_series", "wilson_interval"]

SourceState = Literal["starting", "ok", "backing_off", "down"]


def wilson_interval(passed: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a pass rate (95% by default); ``(0, 1)`` with no observations (the live view
    draws a band for an empty bucket). ``results.stats.wilson_interval`` computes it::

        wilson_interval(0, 0) == (0.0, 1.0)
    """
    return stats.wilson_interval(passed, n, z) or (0.0, 1.0)


def bucket_series(tallies: list[list[int]], start: float, bucket: float) -> list[dict[str, Any]]:
    """``[n, passed]`` per bucket from ``start`` → ``{start, n, passed, rate, lower, upper}`` each (rate None
    when empty): what ``Outcomes.series`` returns and the live view draws."""
    out = []
    for i, (n, passed) in enumerate(tallies):
        lower, upper = wilson_interval(passed, n)
        out.append({"start": start + i * bucket, "n": n, "passed": passed,
                    "rate": passed / n if n else None, "lower": lower, "upper": upper})
    return out


@dataclass
class SourceStatus:
    """One ``--pull`` source as the API, UI and log show it."""

    uri: str
    state: SourceState = "starting"
    watermark: Optional[float] = None
    """Epoch seconds up to which the source has been read (kept in the run store across restarts)."""
    last_poll: Optional[float] = None
    last_success: Optional[float] = None
    next_poll: Optional[float] = None
    failures: int = 0
    """Consecutive failed polls (0 once one succeeds)."""
    error: Optional[str] = None
    """The last failure's one line (kept after recovery until the next failure, with ``state`` = ok)."""
    traces_read: int = 0
    sessions_scored: int = 0
    unsettled: int = 0
    """New traces read but not yet confirmed complete: a second read must agree on them, and find the
    source quiet (``serve.pull``)."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AlertEvent:
    """An alert rule firing or clearing, with the window's figures and the sessions behind it."""

    rule: str
    metric: str
    state: Literal["firing", "cleared"]
    at: float
    window_seconds: float
    n: int
    passed: int
    pass_rate: float
    lower: float
    upper: float
    threshold: float
    sessions: list[str] = field(default_factory=list)
    """Failing sessions in the window (ids), most recent first, at most 20."""
    comparison: str = "<"
    """The rule's comparison (``<`` or ``<=``)."""
    min_sessions: int = 10
    """Sessions the window needed before the rule could fire."""

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


class LiveCounters:
    """Sessions scored, and left out by kind (``sampled_out``, ``filtered_out``, ``over_budget``)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {"scored": 0, **{kind: 0 for kind in SKIP_KINDS}}

    def add(self, kind: str, n: int = 1) -> None:
        with self._lock:
            self._counts[kind] = self._counts.get(kind, 0) + n

    def as_json(self) -> dict[str, int]:
        with self._lock:
            return dict(self._counts)


@dataclass(frozen=True)
class Window:
    """Outcomes of one metric over a window: ``n`` sessions, ``passed`` of them, the failing ones' ids."""

    n: int
    passed: int
    failed_sessions: tuple[str, ...] = ()

    @property
    def pass_rate(self) -> float:
        return self.passed / self.n if self.n else 1.0

    def interval(self, z: float = 1.96) -> tuple[float, float]:
        return wilson_interval(self.passed, self.n, z)


class Outcomes:
    """Pass/fail rows ``(time, metric, session, passed)`` of the last ``keep_seconds``, for windows and series."""

    def __init__(self, keep_seconds: float = 48 * 3600, max_rows: int = 500_000,
                 clock: Callable[[], float] = time.time) -> None:
        self.keep_seconds = keep_seconds
        self.max_rows = max_rows
        self.clock = clock
        self._rows: deque[tuple[float, str, str, bool]] = deque()
        self._lock = threading.Lock()

    def add(self, metric: str, session: str, passed: bool, at: Optional[float] = None) -> None:
        with self._lock:
            self._rows.append((self.clock() if at is None else at, metric, session, passed))
            self._trim()

    def metrics(self) -> list[str]:
        with self._lock:
            return sorted({row[1] for row in self._rows})

    def window(self, metric: str, seconds: float, *, now: Optional[float] = None) -> Window:
        """The outcomes of ``metric`` in the last ``seconds``: a session evaluated again (a late trace of its
        conversation) counts once, with its latest outcome."""
        start = (self.clock() if now is None else now) - seconds
        with self._lock:
            rows = [r for r in self._rows if r[1] == metric and r[0] >= start]
        latest: dict[str, bool] = {}
        for row in reversed(rows):
            latest.setdefault(row[2], row[3])
        failed = tuple(session for session, ok in latest.items() if not ok)
        return Window(n=len(latest), passed=sum(latest.values()), failed_sessions=failed)

    def snapshot(self, since: float = 0.0) -> list[tuple[float, str, str, bool]]:
        """A copy of the rows ``(time, metric, session, passed)`` from ``since`` on, oldest first (the UI tallies
        every metric from one copy instead of holding the lock for a pass per metric)."""
        with self._lock:
            return [r for r in self._rows if r[0] >= since]

    def between(self, metric: str, start: float, end: float) -> Window:
        """The outcomes of ``metric`` with ``start <= time < end`` (a bucket of ``series``: the UI's drill-down)."""
        with self._lock:
            rows = [r for r in self._rows if r[1] == metric and start <= r[0] < end]
        failed = tuple(dict.fromkeys(r[2] for r in reversed(rows) if not r[3]))
        return Window(n=len(rows), passed=sum(1 for r in rows if r[3]), failed_sessions=failed)

    def series(self, metric: str, seconds: float, bucket: float, *,
               now: Optional[float] = None) -> list[dict[str, Any]]:
        """Per bucket of the last ``seconds``: ``{start, n, passed, rate, lower, upper}`` (rate None when empty)."""
        end = self.clock() if now is None else now
        count = max(1, math.ceil(seconds / bucket))
        start = end - count * bucket
        tallies = [[0, 0] for _ in range(count)]
        with self._lock:
            for at, name, _, ok in self._rows:
                if name == metric and start <= at < end:
                    slot = tallies[min(count - 1, int((at - start) // bucket))]
                    slot[0] += 1
                    slot[1] += int(ok)
        return bucket_series(tallies, start, bucket)

    def _trim(self) -> None:
        horizon = self.clock() - self.keep_seconds
        while self._rows and (self._rows[0][0] < horizon or len(self._rows) > self.max_rows):
            self._rows.popleft()


class ContinuousState:
    """The shared state; every part is thread-safe on its own."""

    def __init__(self, *, clock: Callable[[], float] = time.time) -> None:
        self.sources: dict[str, SourceStatus] = {}
        """By URI, in ``--pull`` order (the puller owns the objects and replaces fields in place)."""
        self.counters = LiveCounters()
        self.outcomes = Outcomes(clock=clock)
        self.alerts: deque[AlertEvent] = deque(maxlen=500)
        """Alerts fired and cleared, oldest first."""
        self.active: dict[str, AlertEvent] = {}
        """The firing event of each rule that is firing now, by rule text."""
        self.judge_usage: dict[str, JudgeUsage] = {}
        """By evaluator name."""
        self.lock = threading.Lock()
        """For ``alerts``, ``active`` and ``judge_usage``."""
        self.alerting: Any = None
        """The ``serve.alerts.AlertMonitor`` (its ``rules``, ``figures()``, ``webhook``); None without rules."""

    def as_json(self) -> dict[str, Any]:
        with self.lock:
            return {
                "sources": [s.as_json() for s in self.sources.values()],
                "counters": self.counters.as_json(),
                "alerts": {"active": [a.as_json() for a in self.active.values()],
                           "recent": [a.as_json() for a in list(self.alerts)[-50:]]},
                "judges": {name: usage.as_json() for name, usage in self.judge_usage.items()},
            }


class StateRecorder(RunConsumer):
    """Feeds the counters and rolling outcomes from each finished case (one case = one session in serve)."""

    def __init__(self, state: ContinuousState) -> None:
        self.state = state

    def case_finished(self, index: int, case: CaseResult) -> None:
        kinds = [skip_kind(m) for m in case.metrics]
        if case.metrics and all(kinds):
            self.state.counters.add(kinds[0] or "sampled_out")
            return
        self.state.counters.add("scored")
        now = self.state.outcomes.clock()
        for metric, kind in zip(case.metrics, kinds, strict=True):
            if kind is None and metric.status in (Status.PASSED, Status.FAILED):
                self.state.outcomes.add(metric.name, case.case_id, metric.status == Status.PASSED, at=now)
