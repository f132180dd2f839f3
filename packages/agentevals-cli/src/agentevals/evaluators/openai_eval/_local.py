"""``mode: local``: each OpenAI grader computed by us; model graders through chat completions.

Model graders ask for OpenAI's documented grader output, ``{"steps": [{"description", "conclusion"}],
"result": …}``, as structured output: ``result`` constrained to the labels (label_model) or a number
(score_model: clipped to ``range``, non-numeric = 0, as OpenAI documents).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ...errors import EvaluatorFailure
from ...execution.inprocess import run_in_thread
from ..llm import ChatClient
from ._config import (
    LabelModelGrader,
    OpenAIEvalConfig,
    ScoreModelGrader,
    StringCheckGrader,
    TextSimilarityGrader,
)
from ._items import Turn
from ._templates import render
from ._text_similarity import cosine, preload, similarity

__all__ = ["CONCURRENCY", "Grade", "grade_locally", "map_bounded", "scaled"]

T = TypeVar("T")
R = TypeVar("R")

CONCURRENCY = 4
"""Model calls in flight at once for one case."""


@dataclass
class Grade:
    """The grade of one turn."""

    score: float
    """On our [0, 1] scale."""
    passed: bool
    details: dict[str, Any] = field(default_factory=dict)
    reasoning: str | None = None


def scaled(raw: float, low: float, high: float) -> float:
    """``raw`` in ``[low, high]`` mapped to [0, 1] (clipped)."""
    return min(1.0, max(0.0, (raw - low) / (high - low)))


async def grade_locally(
    config: OpenAIEvalConfig, turns: list[Turn], client: ChatClient | None
) -> list[Grade]:
    """Grade every turn; ``client`` is given when the grader calls an API (cosine, model graders)."""
    grader = config.grader
    threshold = config.pass_threshold
    if isinstance(grader, StringCheckGrader):
        return [_string_check(grader, turn) for turn in turns]
    if isinstance(grader, TextSimilarityGrader):
        pairs = [(render(grader.input, t.item), render(grader.reference, t.item)) for t in turns]
        if grader.evaluation_metric == "cosine":
            # the caller gives a client to every grader that calls an API, cosine included
            scores = await _cosines(pairs, client, config.embedding_model)  # type: ignore[arg-type]
        else:
            metric = grader.evaluation_metric
            preload(metric)  # imports in this thread: nltk cannot be imported by two threads at once
            scores = await run_in_thread(lambda: [similarity(metric, text, ref) for text, ref in pairs],
                                         timeout=config.timeout, what=f"{metric} grading")
        return [Grade(score, score >= threshold) for score in scores]
    assert client is not None
    if isinstance(grader, LabelModelGrader):
        return await map_bounded(lambda turn: _label(grader, turn, client), turns)
    return await map_bounded(lambda turn: _score(grader, turn, client, threshold), turns)


async def map_bounded(
    function: Callable[[T], Awaitable[R]], items: Iterable[T], limit: int = CONCURRENCY
) -> list[R]:
    """``[await function(x) for x in items]`` with ``limit`` at once; the first failure cancels the rest."""
    semaphore = asyncio.Semaphore(limit)

    async def one(item: T) -> R:
        async with semaphore:
            return await function(item)

    tasks = [asyncio.ensure_future(one(item)) for item in items]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _string_check(grader: StringCheckGrader, turn: Turn) -> Grade:
    text, reference = render(grader.input, turn.item), render(grader.reference, turn.item)
    operation = grader.operation
    if operation == "eq":
        ok = text == reference
    elif operation in ("ne", "neq"):
        ok = text != reference
    elif operation == "like":
        ok = reference in text
    else:
        ok = reference.lower() in text.lower()
    return Grade(float(ok), ok)


async def _cosines(pairs: list[tuple[str, str]], client: ChatClient, model: str) -> list[float]:
    texts = sorted({text for pair in pairs for text in pair if text.strip()})
    vectors = dict(zip(texts, await client.embed(texts, model=model), strict=True)) if texts else {}
    scores = []
    for text, reference in pairs:
        if text.strip() and reference.strip():
            scores.append(cosine(vectors[text], vectors[reference]))
        else:  # the same rule as the other metrics: both empty 1, one empty 0
            scores.append(float(not text.strip() and not reference.strip()))
    return scores


def _reply_schema(result: dict[str, Any]) -> dict[str, Any]:
    step = {
        "type": "object",
        "properties": {"description": {"type": "string"}, "conclusion": {"type": "string"}},
        "required": ["description", "conclusion"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"steps": {"type": "array", "items": step}, "result": result},
        "required": ["steps", "result"],
        "additionalProperties": False,
    }


async def _ask(
    grader: LabelModelGrader | ScoreModelGrader,
    turn: Turn,
    client: ChatClient,
    result: dict[str, Any],
    wanted: str,
) -> tuple[Any, list[Any], str | None]:
    """Ask the grader model about one turn: ``(result, steps, reasoning)``."""
    messages = [
        {"role": "system" if m.role == "developer" else m.role, "content": render(m.content, turn.item)}
        for m in grader.input
    ]
    messages.append(
        {
            "role": "user",
            "content": 'Reply with a JSON object: "steps", your reasoning as a list of {"description", '
            f'"conclusion"}}, and "result", {wanted}.',
        }
    )
    try:
        reply = await client.complete(
            messages, json_schema=_reply_schema(result), schema_name="grader_output", **grader.chat_params()
        )
    except EvaluatorFailure as exc:
        raise EvaluatorFailure(f"{turn.invocation_id}: {exc}") from None
    if not isinstance(reply, dict) or "result" not in reply:
        snippet = json.dumps(reply)[:200]
        raise EvaluatorFailure(f"{turn.invocation_id}: the grader model's reply has no 'result': {snippet}")
    steps: list[Any] = reply["steps"] if isinstance(reply.get("steps"), list) else []
    conclusions = [str(s.get("conclusion")) for s in steps if isinstance(s, dict) and s.get("conclusion")]
    return reply["result"], steps, " ".join(conclusions) or None


async def _label(grader: LabelModelGrader, turn: Turn, client: ChatClient) -> Grade:
    quoted = ", ".join(json.dumps(label) for label in grader.labels)
    label, steps, reasoning = await _ask(
        grader,
        turn,
        client,
        {"type": "string", "enum": grader.labels},
        f"exactly one of these labels: {quoted}",
    )
    if label not in grader.labels:
        raise EvaluatorFailure(
            f"{turn.invocation_id}: the grader model answered {label!r}, not one of the labels {grader.labels}"
        )
    passed = label in grader.passing_labels
    return Grade(float(passed), passed, {"label": label, "steps": steps}, reasoning)


async def _score(grader: ScoreModelGrader, turn: Turn, client: ChatClient, threshold: float) -> Grade:
    low, high = grader.range
    raw, steps, reasoning = await _ask(
        grader, turn, client, {"type": "number"}, f"a number from {low:g} to {high:g}"
    )
    numeric = isinstance(raw, (int, float)) and not isinstance(raw, bool)
    value = min(high, max(low, float(raw) if numeric else 0.0))
    score = scaled(value, low, high)
    details: dict[str, Any] = {"raw_score": value, "steps": steps}
    if not numeric:
        details["note"] = f"non-numeric result {raw!r} counted as 0"
    return Grade(score, score >= threshold, details, reasoning)
