"""Deterministic sampling of sessions: the same sessions on every run, machine and evaluator.

A session's *sample point* is a number in [0, 1) computed from its key alone: the conversation id of its
traces (``ConvertedTrace.session_id``), else its first trace's id. The rule, stable across releases
(a change would get a new salt)::

    point = int.from_bytes(sha256(b"agentevals-sample-v1:" + key.encode("utf-8")).digest()[:8], "big") / 2**64
    in_sample = point < rate

So (a) every evaluator at the same rate keeps the same sessions, (b) a lower rate's sessions are a subset of
a higher rate's (nested), (c) reruns and other machines choose the same ones. A run-level ``sample`` and an
evaluator's own ``sample:`` both apply: the evaluator scores a session iff its point is below both.

    >>> sample_point("conv-42") < 1.0
    True
    >>> Sampler(0.25).skip(case, evaluator)   # None (scored) or Skip("sampled_out", "sampled out (sample: 0.25)")
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Optional

from .admission import Skip

if TYPE_CHECKING:
    from ..evaluators.base import BaseEvaluator
    from .grouping import Case

__all__ = ["SALT", "Sampler", "in_sample", "sample_key", "sample_point"]

SALT = b"agentevals-sample-v1:"
"""Prefixed to the key before hashing; documented so other tools can reproduce the choice."""


def sample_point(key: str) -> float:
    """The key's fixed point in [0, 1): the first 8 bytes of ``sha256(SALT + key)`` over 2**64."""
    digest = hashlib.sha256(SALT + key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def in_sample(key: str, rate: Optional[float]) -> bool:
    """Whether the session with this key is in a sample of ``rate`` (None or ≥ 1: every session)."""
    return rate is None or rate >= 1.0 or sample_point(key) < rate


def sample_key(case: Case) -> str:
    """What a case is sampled by: its traces' conversation id, else its first trace's id (else its case id).
    Under ``group_by: trace`` the traces of one conversation are still in or out together."""
    for trace in case.traces:
        if trace.session_id:
            return str(trace.session_id)
    return str(case.traces[0].trace_id) if case.traces else case.case_id


class Sampler:
    """The ``sampled_out`` admission: the run's ``sample`` and each evaluator's ``sample:`` (both apply).
    Stateless, so thread-safe."""

    def __init__(self, rate: Optional[float] = None) -> None:
        self.rate = rate

    @staticmethod
    def evaluator_rate(evaluator: BaseEvaluator) -> Optional[float]:
        rate = getattr(evaluator.config, "sample", None)
        return float(rate) if rate is not None else None

    def skip(self, case: Case, evaluator: BaseEvaluator) -> Optional[Skip]:
        own = self.evaluator_rate(evaluator)
        rates = [r for r in (self.rate, own) if r is not None and r < 1.0]
        if not rates:
            return None
        rate = min(rates)  # one point per session: in at both rates iff in at the lower
        if sample_point(sample_key(case)) < rate:
            return None
        return Skip("sampled_out", f"sampled out (sample: {rate:g})")

    @classmethod
    def needed(cls, rate: Optional[float], evaluators: list[BaseEvaluator]) -> bool:
        """Whether any rate below 1 applies, so the check is worth asking."""
        rates = [rate, *(cls.evaluator_rate(e) for e in evaluators)]
        return any(r is not None and r < 1.0 for r in rates)
