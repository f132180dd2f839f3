"""openai_eval's model calls are metered like llm_judge's (``evaluators.usage``): chat completions for model
graders and the embeddings endpoint for cosine similarity, against the loopback OpenAI-compatible server
(``support/openai_server.py``: chat completions and embeddings with ``usage``, API as of openai 1.x)."""

from __future__ import annotations

import asyncio

from agentevals.engine.evaluate import run_one
from agentevals.evaluators.usage import metering

LABEL = {
    "type": "label_model",
    "model": "judge-model",
    "input": [{"role": "user", "content": "Question: {{ item.user_content }}\nAnswer: {{ sample.output_text }}"}],
    "labels": ["good", "bad"],
    "passing_labels": ["good"],
}


def verdict(label: str) -> dict:
    return {"steps": [{"description": "read the answer", "conclusion": "checked"}], "result": label}


def test_label_model_calls_are_counted_per_turn(build, case, chat_server, api_key):
    chat_server.chat = lambda body: verdict("good")
    evaluator = build(LABEL, server=chat_server)
    with metering() as meter:
        asyncio.run(evaluator.evaluate(case(["a", "b"], ["x", "y"])))
    assert meter.by_model == {"judge-model": (2, 2, 2)}  # two turns, one call each: 1 in / 1 out token each


def test_embeddings_are_priced_from_the_table_in_the_engine(build, case, chat_server, api_key):
    evaluator = build({"type": "text_similarity", "evaluation_metric": "cosine"}, server=chat_server)
    [metric], _ = asyncio.run(run_one(evaluator, case(["abc", "xyz"], ["abd", ""])))
    usage = metric.details["judge_usage"]
    assert (usage["calls"], usage["input_tokens"], usage["output_tokens"]) == (1, 3, 0)  # 3 texts embedded
    assert usage["models"]["text-embedding-3-large"]["cost_usd"] == round(3 * 0.13 / 1e6, 8)
