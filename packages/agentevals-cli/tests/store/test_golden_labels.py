"""Labels that travel with a golden set: an eval case's ``metadata.labels`` become the labels of the case a trace
matches (``CaseResult.labels``), in the report and in the run store, on both backends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from agentevals.api import prepare_run
from agentevals.engine.run import run_evaluation
from agentevals.store import RunStore, new_run_id
from agentevals.store._recording import StoreConsumer
from support.stored_runs import ES_HELM, HELM, HELM_ID, K8S, META

METRIC = "tool_trajectory_avg_score"


def labelled_set(tmp_path, labels: list) -> str:
    data = json.loads(Path(ES_HELM).read_text())
    data["eval_cases"][0]["metadata"] = {"provenance": {"run_id": "r", "case_id": HELM_ID}, "labels": labels}
    path = tmp_path / "golden.evalset.json"
    path.write_text(json.dumps(data))
    return str(path)


def test_a_matched_case_carries_its_eval_cases_labels_into_the_store(store_url, tmp_path):
    labels = [{"verdict": "fail", "metric": METRIC, "note": "helm twice", "labeler": "ana",
               "created_at": "2026-11-27T06:00:00Z"},
              {"score": 0.9, "labeler": "bo"},
              {"verdict": "maybe", "labeler": "cy"}]  # not a label: left out, with a warning on the case
    evaluators, options, eval_set = prepare_run(eval_set=labelled_set(tmp_path, labels), metrics=[METRIC])
    store = RunStore.open(store_url)
    try:
        run_id = new_run_id()
        run = asyncio.run(run_evaluation([HELM], evaluators, eval_set=eval_set, options=options,
                                         consumers=[StoreConsumer(store, run_id, meta=META)]))
        (helm,) = run.cases
        assert (helm.case_id, helm.eval_id) == (HELM_ID, "helm_list_releases")
        assert [(lb.verdict, lb.score, lb.metric, lb.labeler) for lb in helm.labels] == [
            ("fail", None, METRIC, "ana"), (None, 0.9, None, "bo")]
        assert any("metadata.labels[2].verdict" in w and "label left out" in w for w in helm.warnings), helm.warnings
        assert helm.model_dump(mode="json")["labels"][0]["note"] == "helm twice"  # in -o json
        assert {r.case_id for r in store.labels(run_id)} == {HELM_ID}
        rows = sorted((r.label.labeler, r.label.verdict, r.label.metric, r.label.created_at) for r in store.labels(run_id))
        assert rows == [("ana", "fail", METRIC, "2026-11-27T06:00:00Z"), ("bo", None, None, rows[1][3])]
        (_, loaded), = store.load_cases(run_id)
        assert sorted(lb.labeler for lb in loaded.labels) == ["ana", "bo"]
    finally:
        store.close()


def test_without_labels_in_the_set_a_case_has_none_and_the_store_keeps_a_live_cases_own(store_url, tmp_path):
    """A case re-recorded at the same index (serve's live run re-evaluating a session) keeps the labels a person
    gave it: only labels the case carries are written."""
    evaluators, options, eval_set = prepare_run(eval_set=ES_HELM, metrics=[METRIC])
    store = RunStore.open(store_url)
    try:
        run_id = new_run_id()
        run = asyncio.run(run_evaluation([K8S], evaluators, eval_set=eval_set, options=options,
                                         consumers=[StoreConsumer(store, run_id, meta=META)]))
        (case,) = run.cases
        assert case.labels == [] and "labels" not in case.model_dump(mode="json")
        store.add_label(run_id, 0, verdict="pass", labeler="ana")
        store.record_case(run_id, 0, case, {})
        assert [r.label.labeler for r in store.labels(run_id)] == ["ana"]
    finally:
        store.close()
