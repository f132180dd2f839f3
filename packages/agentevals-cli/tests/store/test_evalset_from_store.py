"""Eval sets built from a run stored on SQLite and on a real PostgreSQL: the turns, span ids and provenance,
and the source URI of a pulled run, read back the same on both."""

from __future__ import annotations

from datetime import datetime, timezone

from agentevals.evalsets import parse_eval_set
from agentevals.evalsets.builder import add_from_run, build_from_run
from agentevals.store import RunStore, SourceRecord
from support.stored_runs import HELM, HELM_ID, K8S, K8S_ID, record


def test_build_from_a_stored_run(store_url):
    store = RunStore.open(store_url)
    try:
        run, _ = record(store, [HELM, K8S])
        moment = datetime(2026, 1, 1, tzinfo=timezone.utc)
        uri = "jaeger+http://jaeger:16686?service=helm-agent"
        store.record_sources(run.run_id, [SourceRecord(uri=uri, key=uri, start=moment, end=moment, traces=2)])
        data, summary = build_from_run(store, run.run_id[:20], which=["failed"], eval_set_id="golden")
        assert summary.run_id == run.run_id and summary.written == ["helm_list_releases"]
        (case,) = data["eval_cases"]
        assert case["metadata"]["provenance"] == {
            "run_id": run.run_id, "case_id": K8S_ID, "case_index": 1, "trace_ids": [K8S_ID], "sources": [K8S],
            "status": "FAILED", "source_uris": [uri], "matched_eval_id": "helm_list_releases"}
        (turn,) = case["conversation"]
        assert turn["invocation_id"] == run.cases[1].invocation_spans[0].span_id
        assert turn["user_content"] == {"parts": [{"text": "list all Helm releases"}], "role": "user"}
        data, summary, already = add_from_run(data, store, "latest", [HELM_ID, K8S_ID])
        assert summary.written == ["helm_list_releases_2"] and already == ["helm_list_releases"]
        parsed = parse_eval_set(data, "golden.json")
        assert [c.eval_id for c in parsed.eval_cases] == ["helm_list_releases", "helm_list_releases_2"]
        assert parsed.eval_cases[1].conversation[0].intermediate_steps.tool_calls[0].name == "helm_list_releases"
    finally:
        store.close()
