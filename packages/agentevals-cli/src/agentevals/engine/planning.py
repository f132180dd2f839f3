"""How many cases a run will have, estimated while the input is read (``RunResult.planned``), and how far
the reading has got (``RunConsumer.input_read``)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Optional

from ..results import RunResult
from .consumers import RunConsumer, emit

__all__ = ["Planner"]


class Planner:
    """How many cases the run will have, for progress bars: estimated while the input is read, exact once
    it has been (``RunResult.planned``, ``RunConsumer.cases_planned``).

    The estimate extends the cases known so far (formed, plus those the waiting traces would make) over
    the unread input at the rate they came over the later half of what has been read. For traces without
    session ids that is ``known / fraction read``; for conversations spread through the whole input it
    levels off once no new session ids come. It costs a few operations per trace: no extra reading.
    """

    EVERY = 0.1
    """Seconds between two estimates sent to the consumers (the exact total is sent at once)."""
    FIRST = 16
    """Traces read before the first estimate, unless 5 % of the input is read (a conversation's first
    trace says nothing yet of how many traces the conversation has)."""

    def __init__(self, run: RunResult, consumers: Sequence[RunConsumer]) -> None:
        self.run = run
        self.consumers = consumers
        self._marks: list[tuple[float, int]] = [(0.0, 0)]  # (fraction read, cases known), ~10 % apart
        self._anchor = 0  # the latest mark at or before half the fraction read
        self._at = (0.0, 0)  # the last trace's (fraction read, cases known)
        self._traces = 0
        self._sent: Optional[int] = None
        self._when = 0.0
        self._read_when = 0.0

    def read(self, fraction: float, known: int, *, waiting: int = 0) -> None:
        """A trace was read: ``fraction`` of the input is read, ``known`` cases are known, ``waiting`` of them
        wait for the end of the input (``RunConsumer.input_read``).

        Readers report their position in steps (a streamed file by read buffer, a file converted in worker
        processes by batch: several traces share one value, which is where the step's last trace ends), so
        the estimate is made when the position moves, from the cases known at the end of the step before.
        """
        (last, before), self._at = self._at, (fraction, known)
        self._traces += 1
        if fraction == last:
            return
        now = time.monotonic()
        if now - self._read_when >= self.EVERY:
            self._read_when = now
            for consumer in self.consumers:  # a consumer written before input_read existed may lack it
                told = getattr(consumer, "input_read", None)
                if told is not None:
                    told(self._traces, fraction, waiting)
        if not 0.0 < last < 1.0:
            return
        marks = self._marks
        if last >= marks[-1][0] * 1.1:
            marks.append((last, before))
        while self._anchor + 1 < len(marks) and marks[self._anchor + 1][0] <= last / 2:
            self._anchor += 1
        start, then = marks[self._anchor]
        rate = (before - then) / (last - start) if last > start else 0.0
        estimate = max(known, round(before + rate * (1.0 - last)))
        if self._traces < self.FIRST and last < 0.05:
            return
        if estimate != self._sent and (self._sent is None or now - self._when >= self.EVERY):
            self._when = now
            self._send(estimate, estimated=True)

    def exact(self, total: int) -> None:
        """The input has been read: ``total`` cases."""
        self._send(total, estimated=False)

    def _send(self, total: int, *, estimated: bool) -> None:
        self._sent = total
        self.run._planned, self.run._planned_estimated = total, estimated
        emit(self.consumers, "cases_planned", total, estimated)
