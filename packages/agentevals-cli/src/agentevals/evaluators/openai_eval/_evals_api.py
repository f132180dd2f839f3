"""``mode: evals_api``: grade through an ephemeral eval on OpenAI's Evals API.

    POST   /evals                              data_source_config {type: custom, item_schema,
                                               include_sample_schema: false}; the grader as the one
                                               testing criterion (with pass_threshold where it has one)
    POST   /evals/{eval_id}/runs               data_source {type: jsonl, source: {type: file_content,
                                               content: [{item: {...}}, ...]}}: one item per turn
    GET    /evals/{eval_id}/runs/{run_id}      polled until completed, failed or canceled
    GET    /evals/{eval_id}/runs/{run_id}/output_items   every page; datasource_item_id = our turn
    DELETE /evals/{eval_id}                    always, also after a failure, a timeout or Ctrl-C

The caller bounds the whole exchange with one deadline; the delete gets ``DELETE_TIMEOUT`` more.
"""

from __future__ import annotations

import asyncio
from typing import Any

from ...errors import EvaluatorFailure
from ...execution.deadline import Deadline
from ..llm import ChatClient, redact
from ._config import (
    LabelModelGrader,
    OpenAIEvalConfig,
    ScoreModelGrader,
    StringCheckGrader,
    TextSimilarityGrader,
)
from ._items import Turn
from ._local import Grade, scaled
from ._templates import for_evals_api

__all__ = ["DELETE_TIMEOUT", "POLL_FIRST", "POLL_MAX", "criterion", "grade_with_evals_api", "item_schema"]

POLL_FIRST = 0.5
"""Seconds before the first status poll; each next wait is 1.5 times longer, up to ``POLL_MAX``."""
POLL_MAX = 5.0
DELETE_TIMEOUT = 5.0
"""Seconds allowed for deleting the ephemeral eval, on top of the entry's timeout."""
_FINISHED = ("completed", "failed", "canceled")


def criterion(config: OpenAIEvalConfig) -> dict[str, Any]:
    """The grader as the eval's testing criterion (``sample.output_text`` → ``item.actual_response``)."""
    grader = config.grader
    body: dict[str, Any] = {"type": grader.type, "name": grader.name or config.name}
    if isinstance(grader, (TextSimilarityGrader, StringCheckGrader)):
        body["input"] = for_evals_api(grader.input)
        body["reference"] = for_evals_api(grader.reference)
    if isinstance(grader, TextSimilarityGrader):
        body["evaluation_metric"] = grader.evaluation_metric
        body["pass_threshold"] = config.pass_threshold
    elif isinstance(grader, StringCheckGrader):
        body["operation"] = "ne" if grader.operation == "neq" else grader.operation
    else:
        body["model"] = grader.model
        body["input"] = [{"role": m.role, "content": for_evals_api(m.content)} for m in grader.input]
    if isinstance(grader, LabelModelGrader):
        body["labels"] = grader.labels
        body["passing_labels"] = grader.passing_labels
    elif isinstance(grader, ScoreModelGrader):
        low, high = grader.range
        body["range"] = [low, high]
        body["pass_threshold"] = low + config.pass_threshold * (high - low)
        if grader.sampling_params:
            body["sampling_params"] = grader.sampling_params.model_dump(exclude_none=True)
    return body


def item_schema(turns: list[Turn]) -> dict[str, Any]:
    """JSON schema of the items: the string fields every turn has."""
    fields = [name for name in turns[0].item if all(name in t.item for t in turns)]
    return {"type": "object", "properties": {name: {"type": "string"} for name in fields}, "required": fields}


async def grade_with_evals_api(
    config: OpenAIEvalConfig, turns: list[Turn], client: ChatClient, deadline: Deadline, info: dict[str, Any]
) -> list[Grade]:
    """Grade the turns on the Evals API; ``info`` collects the eval/run ids and the cleanup outcome."""
    testing = criterion(config)
    schema = item_schema(turns)
    deadline.phase = "creating the eval"
    created = await client.call(
        client.raw.evals.create,
        name=f"agentevals {config.name}",
        data_source_config={"type": "custom", "item_schema": schema, "include_sample_schema": False},
        testing_criteria=[testing],
        metadata={"created_by": "agentevals", "ephemeral": "true"},
    )
    info["eval_id"] = created.id
    try:
        deadline.phase = f"creating a run of {created.id}"
        content = [{"item": {name: t.item[name] for name in schema["required"]}} for t in turns]
        run = await client.call(
            client.raw.evals.runs.create,
            created.id,
            name=f"agentevals {config.name}",
            data_source={"type": "jsonl", "source": {"type": "file_content", "content": content}},
        )
        info["run_id"] = run.id
        run = await _wait_for_run(client, created.id, run, deadline)
        if getattr(run, "report_url", None):
            info["report_url"] = run.report_url
        if run.status != "completed":
            error = getattr(run, "error", None)
            why = f": {_get(error, 'code')}: {_get(error, 'message')}" if error else ""
            raise EvaluatorFailure(redact(f"eval run {run.id} {run.status}{why}", client.settings.api_key))
        deadline.phase = f"reading the results of {run.id}"
        items = await client.call(_output_items, client, created.id, run.id)
        return _grades(config, turns, items, testing["name"])
    finally:
        await _delete(client, created.id, info)


async def _wait_for_run(client: ChatClient, eval_id: str, run: Any, deadline: Deadline) -> Any:
    wait = POLL_FIRST
    while run.status not in _FINISHED:
        deadline.phase = f"waiting for eval run {run.id} (status {run.status})"
        await asyncio.sleep(wait)
        wait = min(wait * 1.5, POLL_MAX)
        run = await client.call(client.raw.evals.runs.retrieve, run.id, eval_id=eval_id)
    return run


async def _output_items(client: ChatClient, eval_id: str, run_id: str) -> list[Any]:
    return [
        item async for item in client.raw.evals.runs.output_items.list(run_id, eval_id=eval_id, limit=100)
    ]


async def _delete(client: ChatClient, eval_id: str, info: dict[str, Any]) -> None:
    try:
        await asyncio.wait_for(client.call(client.raw.evals.delete, eval_id), DELETE_TIMEOUT)
        info["deleted"] = True
    except Exception as exc:  # cleanup must not hide the outcome; report it beside the result
        info["deleted"] = False
        info["cleanup"] = f"could not delete {eval_id}: {exc or type(exc).__name__}"


def _grades(config: OpenAIEvalConfig, turns: list[Turn], items: list[Any], name: str) -> list[Grade]:
    """One grade per turn, matched by ``datasource_item_id`` (the item's index in the run's content)."""
    by_index: dict[int, Any] = {}
    for item in items:
        by_index[int(_get(item, "datasource_item_id"))] = item
    grades = []
    for index, turn in enumerate(turns):
        item = by_index.get(index)
        results = (_get(item, "results") or []) if item is not None else []
        result = next((r for r in results if _get(r, "name") == name), results[0] if results else None)
        if result is None or _get(result, "score") is None:
            error = _get(_get(item, "sample"), "error") if item is not None else None
            why = _get(error, "message") or ("no output item" if item is None else "no grader result")
            raise EvaluatorFailure(f"the Evals API returned no grade for {turn.invocation_id}: {why}")
        raw = float(_get(result, "score"))
        passed = bool(_get(result, "passed"))
        score = scaled(raw, *config.grader.range) if isinstance(config.grader, ScoreModelGrader) else raw
        grades.append(
            Grade(min(1.0, max(0.0, score)), passed, {"service_score": raw, "service_passed": passed})
        )
    return grades


def _get(obj: Any, key: str) -> Any:
    """A field of an API object or of a plain dict (older ``openai`` releases return dicts)."""
    if obj is None:
        return None
    return obj.get(key) if isinstance(obj, dict) else getattr(obj, key, None)
