"""Runs recorded into a run store by the real engine, for the store tests."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentevals.api import prepare_run
from agentevals.engine import run_evaluation
from agentevals.store import RunStore, StoreConsumer, StoreReuse, new_run_id

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"
HELM, K8S = str(ADK / "helm.json"), str(ADK / "k8s.json")
HELM_ID, K8S_ID = "3e289017fe03ffd7c4145316d2eb3d0d", "d497c9dd55717f2c5ecb79bda3028993"
"""The trace ids of the HELM and K8S samples."""
HELM_3_ID = "c9a03cc4e80ea7a22332db0fe4dc3adf"
"""The trace id of ``examples/traces/helm_3.json`` (it matches no eval case of ``eval_set_helm.json``)."""
ES_HELM = str(ADK / "eval_set_helm.json")
META = {"command": "agentevals run …", "cwd": "/x", "config_digest": None, "eval_set_digest": "abc",
        "versions": {"agentevals": "test"}, "options": {"strict": False}}


def record(store: RunStore, inputs: list[str], *, run_id: str | None = None, cache: bool = True, **reuse_kw):
    evaluators, options, eval_set = prepare_run(eval_set=ES_HELM)
    run_id = run_id or new_run_id()
    reuse = StoreReuse(store, cache=cache, **reuse_kw)
    consumer = StoreConsumer(store, run_id, meta=META, reuse=reuse, resume="resume_from" in reuse_kw)
    run = asyncio.run(run_evaluation(inputs, evaluators, eval_set=eval_set, options=options, consumers=[consumer],
                                     reuse=reuse))
    return run, reuse
