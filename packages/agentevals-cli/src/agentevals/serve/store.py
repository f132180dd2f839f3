"""Where live sessions and their results are kept: a small interface and a bounded in-memory store.

``SessionStore`` is all the HTTP API, the MCP tools and the UI use; the run store (SQLite/Postgres)
can implement it to keep live results beside batch runs. ``MemorySessionStore`` keeps the newest
``max_sessions`` sessions and forgets the oldest.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Any, Literal, Optional, Protocol

from pydantic import BaseModel, Field

from ..results import SKIP_KINDS, CaseResult, case_key

__all__ = ["MemorySessionStore", "SessionRecord", "SessionStore"]

SessionStatus = Literal["evaluating", "evaluated", "error"]


class SessionRecord(BaseModel):
    """One live session: what arrived, how it was matched, and its evaluation."""

    session_id: str
    """Conversation id, or the trace id of a trace without one."""
    status: SessionStatus = "evaluating"
    trace_ids: list[str] = Field(default_factory=list)
    span_count: int = 0
    eval_set_id: Optional[str] = None
    """The eval set it was evaluated against (``agentevals.eval_set_id`` or the only one loaded)."""
    received_at: float = Field(default_factory=time.time)
    evaluated_at: Optional[float] = None
    invocations: list[dict[str, Any]] = Field(default_factory=list)
    """The agent turns read from the traces (``InvocationData`` as JSON)."""
    result: Optional[CaseResult] = None
    error: Optional[str] = None
    """One-line cause when the session could not be evaluated."""

    def summary(self) -> dict[str, Any]:
        """The compact form listed by ``GET /api/sessions`` and ``list_sessions``."""
        result = self.result
        return {
            "session_id": self.session_id, "status": self.status, "trace_count": len(self.trace_ids),
            "span_count": self.span_count, "invocation_count": len(self.invocations),
            "eval_set_id": self.eval_set_id, "eval_id": result.eval_id if result else None,
            "received_at": self.received_at, "evaluated_at": self.evaluated_at,
            "score": result.score if result else None,
            "metrics": {m.name: m.status.value for m in result.metrics} if result else {},
            "skipped": _skipped(result),
            "error": self.error,
        }


def _skipped(result: Optional[CaseResult]) -> Optional[str]:
    """``sampled_out`` / ``filtered_out`` / ``over_budget`` when no evaluator ran on the session, else None."""
    if result is None:
        return None
    key = case_key(result)
    return key if key in SKIP_KINDS else None


class SessionStore(Protocol):
    """What live mode needs from a store of sessions."""

    def put(self, record: SessionRecord) -> None:
        """Insert or replace the session with ``record.session_id``."""

    def get(self, session_id: str) -> Optional[SessionRecord]:
        """The session, or None when unknown (or forgotten)."""

    def list(self, *, limit: int = 50) -> list[SessionRecord]:
        """The most recently received sessions first."""


class MemorySessionStore:
    """A ``SessionStore`` in memory, keeping the ``max_sessions`` most recent sessions."""

    def __init__(self, max_sessions: int = 1000) -> None:
        self.max_sessions = max_sessions
        self._items: OrderedDict[str, SessionRecord] = OrderedDict()
        self._lock = threading.Lock()

    def put(self, record: SessionRecord) -> None:
        with self._lock:
            self._items[record.session_id] = record
            self._items.move_to_end(record.session_id)
            while len(self._items) > self.max_sessions:
                self._items.popitem(last=False)

    def get(self, session_id: str) -> Optional[SessionRecord]:
        with self._lock:
            return self._items.get(session_id)

    def list(self, *, limit: int = 50) -> list[SessionRecord]:
        with self._lock:
            items = list(self._items.values())
        return items[::-1][:max(0, limit)]
