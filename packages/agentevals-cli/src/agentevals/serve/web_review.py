"""The review queue of the web UI: which cases of a stored run a person should label first, and why.

    /review?run=RUN&seed=S&sample=N&show=unlabelled|all

The queue is, in this order: the failures (FAILED, ERROR: run order), the cases whose human label disagrees
with the evaluator (``results.labels.label_disagrees``), the passed cases whose score sits near a threshold
(``|score - threshold| <= NEAR_BAND`` on any result row, closest first), then a random sample of ``N`` of
the rest, drawn with ``random.Random(S)`` (the same seed gives the same sample). ``show=unlabelled`` (the
default) leaves out the cases a person already labelled, except those in disagreement: they want a second
look. At most ``MAX_ROWS`` rows are listed; the run store is read on a worker thread.

Each row links to its case page with ``?queue=SPEC`` (``QueueSpec``): the case page then shows previous and
next links (``queue_nav``, rendered by ``_queue_nav.html``; ``accesskey`` p and n, ``rel`` prev and next).

    rows, counts = build_queue(store.load_cases(run_id), QueueSpec(seed=7))
    nav = queue_nav(store, run_id, 3, "7-20-u")   # on the case page of case #3, or None
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse

from ..results import CaseResult, Status, case_status
from ..results.labels import human_text, label_disagrees
from ._input import refuse_long_ref

if TYPE_CHECKING:
    from ..store import RunStore

__all__ = ["MAX_ROWS", "NEAR_BAND", "QueueRow", "QueueSpec", "add_review_pages", "build_queue", "queue_nav"]


NEAR_BAND = 0.1
"""A passed result whose score is within this of its threshold is "near the threshold" (scores are in [0, 1])."""
MAX_ROWS = 500
"""Rows the queue lists (and the case pages step through)."""
DEFAULT_SAMPLE = 20
_MAX_SAMPLE = 500
_FAILING = (Status.FAILED, Status.ERROR)
KINDS = ("failure", "disagreement", "near", "sample")


@dataclass(frozen=True)
class QueueSpec:
    """How a queue was drawn; ``str(spec)`` is the ``?queue=`` value of the case links (``7-20-u``)."""

    seed: int = 0
    sample: int = DEFAULT_SAMPLE
    unlabelled: bool = True
    """Leave out the cases already labelled (but not those whose label disagrees with the evaluator)."""

    def __str__(self) -> str:
        return f"{self.seed}-{self.sample}-{'u' if self.unlabelled else 'a'}"

    @classmethod
    def parse(cls, text: str) -> Optional[QueueSpec]:
        """The spec of a ``?queue=`` value, or None when it is not one (the case page then shows no queue bar)."""
        match = re.fullmatch(r"(\d{1,9})-(\d{1,4})-([ua])", text.strip())
        if not match:
            return None
        return cls(int(match[1]), min(int(match[2]), _MAX_SAMPLE), match[3] == "u")

    @classmethod
    def from_form(cls, seed: str, sample: str, show: str) -> QueueSpec:
        """From the review page's GET fields; what is not a number falls back to the default."""
        return cls(int(seed) if seed.strip().isdigit() and len(seed.strip()) <= 9 else 0,
                   min(int(sample), _MAX_SAMPLE) if sample.strip().isdigit() and len(sample.strip()) <= 4
                   else DEFAULT_SAMPLE, show != "all")


@dataclass
class QueueRow:
    """One case of the queue: why it is there (``kind`` and a one-line ``reason``) and its labels."""

    index: int
    case: CaseResult
    kind: str
    """One of ``KINDS``: failure, disagreement, near (the threshold), sample."""
    reason: str
    status: str
    labels: list[str] = field(default_factory=list)
    """Each label as ``fail (ana): note``; empty: unlabelled."""
    disagrees: bool = False
    distance: float = 0.0


def build_queue(pairs: Iterable[tuple[int, CaseResult]], spec: QueueSpec,
                *, keep: Optional[int] = None) -> tuple[list[QueueRow], dict[str, int]]:
    """The queue of a run's ``(index, case)`` pairs (``RunStore.load_cases``) and how many cases each kind has
    (before the filter, plus ``hidden``: labelled cases left out). ``keep``: a case index shown even when
    labelled (the case page's own case: labelling it must not drop it out of its queue)."""
    groups: dict[str, list[QueueRow]] = {kind: [] for kind in KINDS}
    for index, case in pairs:
        row = _classify(index, case, spec.seed)
        groups[row.kind].append(row)
    groups["near"].sort(key=lambda r: r.distance)
    random.Random(spec.seed).shuffle(groups["sample"])  # over every other case: the same seed, the same order
    counts = {kind: len(rows) for kind, rows in groups.items()}

    def shown(row: QueueRow) -> bool:
        return not spec.unlabelled or not row.labels or row.disagrees or row.index == keep

    queue: list[QueueRow] = []
    for kind in KINDS:
        rows = [r for r in groups[kind] if shown(r)]
        queue.extend(rows[:spec.sample] if kind == "sample" else rows)
    counts["hidden"] = sum(1 for rows in groups.values() for r in rows if not shown(r))
    return queue[:MAX_ROWS], counts


def _classify(index: int, case: CaseResult, seed: int) -> QueueRow:
    status = case_status(case)
    labels = [(f"{label.metric}: " if label.metric else "") + human_text(label) for label in case.labels]
    against = []
    for label in case.labels:
        found = label_disagrees(label, case)
        if found is not None:
            against.append(f"{label.metric or 'whole case'}: evaluator {found[0].value} · human {human_text(label)}")
    row = QueueRow(index, case, "sample", f"random sample (seed {seed})", status.value, labels, bool(against))
    if status in _FAILING:
        failing = next((m for m in case.metrics if m.status == status), None)
        row.kind = "failure"
        row.reason = status.value
        if failing is not None:
            row.reason += f": {failing.name}"
            if failing.score is not None and failing.threshold is not None:
                row.reason += f" {failing.score:.3g} < threshold {failing.threshold:.3g}"
            why = " ".join((failing.error or failing.reason or "").split())
            row.reason += f" ({why[:200]})" if why else ""
        row.reason += "".join(f"; disagrees: {a}" for a in against)
    elif against:
        row.kind, row.reason = "disagreement", "; ".join(against)
    else:
        near = _nearest(case)
        if near is not None:
            name, score, threshold = near
            row.kind, row.distance = "near", abs(score - threshold)
            row.reason = f"{name} {score:.3g}, threshold {threshold:.3g} (within {NEAR_BAND:g})"
    return row


def _nearest(case: CaseResult) -> Optional[tuple[str, float, float]]:
    """The scored row closest to its threshold, when within ``NEAR_BAND``: (name, score, threshold)."""
    scored = [(abs(m.score - m.threshold), m.name, m.score, m.threshold) for m in case.metrics
              if m.status in (Status.PASSED, Status.FAILED) and m.score is not None and m.threshold is not None]
    if not scored:
        return None
    distance, name, score, threshold = min(scored)
    return (name, score, threshold) if distance <= NEAR_BAND else None


def queue_nav(store: RunStore, run_id: str, index: int, queue: str) -> Optional[dict[str, Any]]:
    """What ``_queue_nav.html`` shows on the case page of case ``index`` opened from the review queue (``queue``:
    the ``?queue=`` value): its position, the previous and next case indexes, why it is in the queue. None
    when ``queue`` is not a queue spec."""
    spec = QueueSpec.parse(queue)
    if spec is None:
        return None
    rows, _ = build_queue(store.load_cases(run_id), spec, keep=index)
    order = [r.index for r in rows]
    nav: dict[str, Any] = {"run_id": run_id, "queue": str(spec), "total": len(order), "position": None,
                           "prev": None, "next": None, "reason": "", "seed": spec.seed, "sample": spec.sample,
                           "show": "unlabelled" if spec.unlabelled else "all"}
    if index in order:
        at = order.index(index)
        nav.update(position=at + 1, reason=rows[at].reason, prev=order[at - 1] if at else None,
                   next=order[at + 1] if at + 1 < len(order) else None)
    return nav


Page = Callable[..., HTMLResponse]


def add_review_pages(app: FastAPI, ctx: Any, page: Page) -> None:
    """Add ``/review``; ``ctx.runs`` is the ``RunStore`` (or None), ``page`` renders a template."""

    @app.get("/review", include_in_schema=False)
    async def review(request: Request, run: str = "", seed: str = "", sample: str = "",
                     show: str = "") -> HTMLResponse:
        from .web_runs import store_page  # here: web_runs imports this module

        spec = QueueSpec.from_form(seed, sample, show)
        return await store_page(ctx, page, request, "Review queue",
                                lambda store: ("review.html", _review(store, run, spec)),
                                no_store="No run store: this server records no runs (serve --no-store), so there "
                                         "is nothing to review.")


def _review(store: RunStore, ref: str, spec: QueueSpec) -> dict[str, Any]:
    refuse_long_ref(ref)
    run_id = store.resolve(ref or None)  # by default the newest run, serve's live run included
    rows, counts = build_queue(store.load_cases(run_id), spec)
    record = store.get_run(run_id)
    return {"record": record, "run_id": run_id, "rows": rows, "counts": counts, "spec": spec,
            "queue": str(spec), "band": NEAR_BAND, "max_rows": MAX_ROWS,
            "runs": [r.run_id for r in store.list_runs(limit=50)],
            "refresh": 0}
