"""Which eval case does a trace (or a conversation) belong to? The rule, in order:

1. **Eval id**: the trace carries ``agentevals.eval_id`` (or an alias) naming a case; when the named case
   is not in the set, the trace is unmatched (no other rule is tried).
2. **Invocation ids**: a case's conversation has an ``invocation_id`` equal to one of the trace's turn ids
   (eval sets generated from traces keep the span ids).
3. **User input**: the first user message of the trace equals the first user message of exactly one case
   (whitespace-collapsed, case-insensitive). When several cases match, the first in file order is taken.
4. **Only case**: the eval set has a single case and the run has a single trace (or conversation) to
   match: that pairing is explicit. With several traces, a trace that no rule above matched stays
   unmatched rather than being scored against the one case (as agentevals-cli 0.11 did).

Otherwise the trace is unmatched and its metrics that need a golden case are NOT_EVALUATED.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from ..protocol import InvocationData
from .model import EvalCase, EvalSet

__all__ = ["match_case", "normalize_text"]


def normalize_text(text: Optional[str]) -> str:
    return re.sub(r"\s+", " ", text or "").strip().casefold()


def match_case(
    eval_set: EvalSet, invocations: Sequence[InvocationData], *, eval_id: Optional[str] = None,
    only_trace: bool = True,
) -> tuple[Optional[EvalCase], str]:
    """Return the matched case (or None) and a one-line reason saying how.

    ``only_trace``: this is the run's only case to match, so a single-case eval set pairs with it.
    """
    cases = eval_set.eval_cases
    if eval_id:
        for case in cases:
            if case.eval_id == eval_id:
                return case, f"eval id '{eval_id}' recorded in the trace"
        # The trace says which case it ran; guessing another one would score it against the wrong gold.
        return None, f"the trace names eval case '{eval_id}', which is not in {eval_set.source or eval_set.eval_set_id}"
    ids = {inv.invocation_id for inv in invocations if inv.invocation_id}
    for case in cases:
        if ids & {turn.invocation_id for turn in case.conversation}:
            return case, "invocation id"
    if invocations:
        first = normalize_text(invocations[0].user_content)
        same = [c for c in cases if c.conversation and normalize_text(c.conversation[0].user_content) == first]
        if same:
            note = f" ({len(same)} cases match; took the first)" if len(same) > 1 else ""
            return same[0], f"first user message{note}"
    if len(cases) == 1 and only_trace:
        return cases[0], "only case in the eval set, only trace in the run"
    text = invocations[0].user_content if invocations else ""
    preview = text if len(text) <= 60 else text[:60] + "…"
    return None, f"no eval case matches (first user message: {preview!r}; {len(cases)} cases in {eval_set.source})" if invocations \
        else f"no eval case matches (the trace has no turns; {len(cases)} cases in {eval_set.source})"
