"""Traces → cases: the ``Case`` unit, ``group_traces`` for a list, ``Grouper`` for the run's stream, and
``LoneCase``, agentevals-cli 0.11's single-case eval set rule.

Example:
    ```python
    grouper = Grouper("auto")
    for trace in traces:
        seq, ready = grouper.add(trace)      # cases complete now (a trace with a session id waits)
    last = grouper.finish()                  # the waiting traces, as cases (lazily), once the input has ended
    ```
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Optional, Union

from ..core.spill import Spilled, SpillFile, spill_threshold
from ..evalsets import EvalCase
from ..results import MetricResult
from ..traces._collect import PackedTrace, unpacked
from ..traces.model import ConvertedTrace

__all__ = ["Case", "Grouper", "LoneCase", "Stored", "group_traces"]


@dataclass
class Case:
    """A unit of evaluation: one trace, or the traces of one conversation."""

    case_id: str
    traces: list[ConvertedTrace]
    eval_case: Optional[EvalCase] = None
    match_reason: Optional[str] = None
    warnings: list[str] = field(default_factory=list)

    @property
    def invocations(self) -> list:
        return [inv for t in self.traces for inv in t.invocations]

    @property
    def eval_id_hint(self) -> Optional[str]:
        return next((t.eval_id for t in self.traces if t.eval_id), None)


Stored = dict[int, list[MetricResult]]
"""Results that stand in for running some of a case's evaluators, by the evaluator's index in the run."""


def group_traces(traces: Sequence[ConvertedTrace], group_by: str) -> list[Case]:
    """Cases in input order. ``conversation`` groups traces sharing a session id; ``auto`` does so only
    when some session id is shared by two or more traces; ``trace`` never groups."""
    if group_by == "auto":
        seen: dict[str, int] = {}
        for t in traces:
            if t.session_id:
                seen[t.session_id] = seen.get(t.session_id, 0) + 1
        group_by = "conversation" if any(n > 1 for n in seen.values()) else "trace"
    cases: dict[str, Case] = {}
    for t in traces:
        key = t.session_id if group_by == "conversation" and t.session_id else f"trace:{t.trace_id}:{len(cases)}"
        case_id = t.session_id if group_by == "conversation" and t.session_id else t.trace_id
        cases.setdefault(key, Case(case_id=case_id, traces=[])).traces.append(t)
    for case in cases.values():
        case.traces.sort(key=lambda t: t.start_ns)
    return list(cases.values())


class Grouper:
    """Traces → cases, in input order. Each trace gets a sequence number; a case is known by the number
    of its first trace, which orders the output.

    A trace without a session id (or any trace with ``group_by: trace``) is a case at once. A trace with
    one waits for the end of the input under ``conversation`` and ``auto``: a later trace anywhere in the
    input may belong to the same conversation (and under ``auto`` a single shared session id groups every
    conversation). Waiting traces are converted ones: compact, their raw spans dropped unless an
    evaluator reads them; past ``spill_after`` of them (``AGENTEVALS_SPILL_TRACES``, default 2,000) they
    wait pickled in a temporary file, so memory stays flat however long the input.
    """

    def __init__(self, group_by: str, *, spill_after: Optional[int] = None) -> None:
        self.group_by = group_by
        self.count = 0
        """Cases formed so far."""
        self._seq = 0
        self._sessions: dict[str, list[tuple[int, Union[ConvertedTrace, PackedTrace, Spilled]]]] = {}
        self._waiting = 0
        self._threshold = spill_threshold("AGENTEVALS_SPILL_TRACES") if spill_after is None else spill_after
        self._spill: Optional[SpillFile] = None
        """Waiting traces past the threshold, pickled (a day of production traces would not fit in memory)."""
        self._shared = False
        """Some session id has two traces or more (``auto`` then groups conversations)."""

    def add(self, trace: Union[ConvertedTrace, PackedTrace]) -> tuple[int, list[tuple[int, Case]]]:
        """The trace's sequence number and the cases it completes (itself, or none while it waits).
        A ``PackedTrace`` waits packed (a spilled one as its bytes) and is unpacked when its case is formed."""
        seq, self._seq = self._seq, self._seq + 1
        if self.group_by == "trace" or not trace.session_id:
            self.count += 1
            return seq, [(seq, Case(case_id=trace.trace_id, traces=[unpacked(trace)]))]
        members = self._sessions.setdefault(trace.session_id, [])
        if self._waiting >= self._threshold:
            if self._spill is None:
                self._spill = SpillFile()
            members.append((seq, self._spill.put_pickled(trace.blob) if isinstance(trace, PackedTrace)
                            else self._spill.put(trace)))
        else:
            members.append((seq, trace))
        self._waiting += 1
        self._shared = self._shared or len(members) > 1
        return seq, []

    def reserve(self, *, shares: bool = False) -> int:
        """A sequence number that is no trace: where a stored file's cases go in the output order. ``shares``:
        two of that file's traces share a session id (``auto`` then groups conversations, as if they were read)."""
        seq, self._seq = self._seq, self._seq + 1
        self._shared = self._shared or shares
        return seq

    def pending(self) -> int:
        """The cases the waiting traces would make if the input ended now."""
        return len(self._sessions) if self._conversations() else self._waiting

    def dropped(self) -> list[int]:
        """At the end: numbers of waiting traces that join an earlier trace's case (no case of their own)."""
        if not self._conversations():
            return []
        return [seq for members in self._sessions.values() for seq, _ in members[1:]]

    def finish(self) -> Iterator[tuple[int, Case]]:
        """The waiting traces as cases, in order, once the input has ended. Lazy: a spilled trace is read
        back only when its case is taken, so the caller bounds what is in memory (the pool's room)."""
        sessions, spill = self._sessions, self._spill
        self._sessions, self._waiting, self._spill = {}, 0, None
        if self._conversations():
            self.count += len(sessions)
            # A session's first trace orders its case, and sessions were added in that order.
            for session, members in sessions.items():
                traces = sorted((self._load(spill, t) for _, t in members), key=lambda t: t.start_ns)
                yield members[0][0], Case(case_id=session, traces=traces)
        else:
            order = sorted((seq, session, i) for session, members in sessions.items()
                           for i, (seq, _) in enumerate(members))
            self.count += len(order)
            for seq, session, i in order:
                trace = self._load(spill, sessions[session][i][1])
                yield seq, Case(case_id=trace.trace_id, traces=[trace])
        if spill is not None:
            spill.close()

    @staticmethod
    def _load(spill: Optional[SpillFile], item: Union[ConvertedTrace, PackedTrace, Spilled]) -> ConvertedTrace:
        if isinstance(item, Spilled):
            assert spill is not None
            trace: ConvertedTrace = spill.get(item)
            return trace
        return unpacked(item)

    def _conversations(self) -> bool:
        return self._shared if self.group_by == "auto" else self.group_by == "conversation"


class LoneCase:
    """agentevals-cli 0.11's rule: a single-case eval set pairs with the run's only case (or with every case
    when cases are independent). Whether a case is the only one is known when a second one comes or the
    input ends, so with such an eval set the first case waits until then (the others never wait)."""

    def __init__(self, *, hold: bool, independent: bool) -> None:
        self.hold = hold
        self.independent = independent
        self._first: Optional[tuple[int, Case]] = None
        self._seen = 0

    def take(self, ready: list[tuple[int, Case]]) -> list[tuple[int, Case, bool]]:
        """The cases that can start now, each with its ``only_trace`` flag."""
        out: list[tuple[int, Case, bool]] = []
        for seq, case in ready:
            self._seen += 1
            if not self.hold:
                out.append((seq, case, self.independent))
            elif self._seen == 1:
                self._first = (seq, case)
            else:
                if self._first is not None:
                    out.append((*self._first, False))
                    self._first = None
                out.append((seq, case, False))
        return out

    def finish(self) -> list[tuple[int, Case, bool]]:
        """At the end of the input: the first case, if it turned out to be the only one."""
        first, self._first = self._first, None
        return [(*first, True)] if first is not None else []
