"""Judge token usage of one evaluation, counted where the LLM client reads each response.

The engine opens a meter around each evaluation; ``ChatClient`` (``evaluators.llm``) adds every chat and
embeddings response's ``usage`` to the meter of the evaluation it runs in (a context variable: tasks and
threads the evaluator starts inherit it). Evaluators need not do anything::

    with metering() as meter:
        await evaluator.evaluate(ctx)          # ChatClient.complete(...) calls record_usage(...)
    meter.calls, meter.input_tokens, meter.output_tokens, meter.by_model
    # -> 3, 1840, 212, {"gpt-4o-mini": (3, 1840, 212)}

Outside a meter (``agentevals eval assert``, a direct ``evaluate`` call in a test) nothing is recorded.
Not metered: judges that evaluator programs call themselves, google-adk's LLM metrics, the Evals API mode
of ``openai_eval`` (OpenAI runs the graders).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from typing import Any, Optional

__all__ = ["JudgeUsage", "UsageMeter", "metering", "record_usage"]


class UsageMeter:
    """Calls and tokens of one evaluation, per model (thread-safe: an evaluator may call from threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.by_model: dict[str, tuple[int, int, int]] = {}
        """``model -> (calls, input tokens, output tokens)``."""

    def add(self, model: str, input_tokens: int, output_tokens: int) -> None:
        with self._lock:
            calls, tokens_in, tokens_out = self.by_model.get(model, (0, 0, 0))
            self.by_model[model] = (calls + 1, tokens_in + input_tokens, tokens_out + output_tokens)

    @property
    def calls(self) -> int:
        return sum(row[0] for row in self.by_model.values())

    @property
    def input_tokens(self) -> int:
        return sum(row[1] for row in self.by_model.values())

    @property
    def output_tokens(self) -> int:
        return sum(row[2] for row in self.by_model.values())


@dataclass
class JudgeUsage:
    """Judge calls, tokens and priced cost of an evaluator's evaluations, and how many a budget skipped.

        usage = JudgeUsage()
        usage.add(metric.details["judge_usage"])     # one evaluation (see ``engine.budget.usage_details``)
        usage.as_json()   # {"calls": 3, "input_tokens": 1840, "output_tokens": 212, "cost_usd": 0.0004, ...}
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    over_budget: int = 0
    evaluations: int = 0
    """Evaluations that called the judge (``calls`` counts their requests, retries included)."""

    def add(self, usage: Mapping[str, Any]) -> float:
        """Count one evaluation's ``details["judge_usage"]``; returns its cost in USD."""
        cost = float(usage.get("cost_usd") or 0.0)
        self.evaluations += 1
        self.calls += int(usage.get("calls", 0))
        self.input_tokens += int(usage.get("input_tokens", 0))
        self.output_tokens += int(usage.get("output_tokens", 0))
        self.cost_usd = round(self.cost_usd + cost, 8)
        return cost

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


_current: ContextVar[Optional[UsageMeter]] = ContextVar("agentevals_judge_usage", default=None)


@contextmanager
def metering() -> Iterator[UsageMeter]:
    """A fresh meter for the code inside (and the tasks and threads it starts)."""
    meter = UsageMeter()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)


def record_usage(model: Optional[str], response: Any) -> None:
    """Add one API response's ``usage`` to the current evaluation's meter (no meter, no usage: nothing).

    Reads chat completions' ``prompt_tokens``/``completion_tokens`` and the Responses API's
    ``input_tokens``/``output_tokens``; ``model`` is the one asked for (the response's own when None).
    """
    meter = _current.get()
    if meter is None:
        return
    usage = getattr(response, "usage", None)
    if usage is None:
        return
    tokens_in = _count(usage, "prompt_tokens", "input_tokens")
    tokens_out = _count(usage, "completion_tokens", "output_tokens")
    meter.add(model or getattr(response, "model", None) or "unknown", tokens_in, tokens_out)


def _count(usage: Any, *names: str) -> int:
    for name in names:
        value = usage.get(name) if isinstance(usage, dict) else getattr(usage, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return 0
