"""agentevals-cli 0.11's session exports (``/api/streaming/sessions/{id}/otlp``, the UI's ``trace_<id>.jsonl``)
hold ``resourceSpans`` and ``resourceLogs`` in one document: they are trace files, not logs files."""

from __future__ import annotations

import json

from agentevals.traces.readers import read_traces

SPAN = {"traceId": "ab" * 16, "spanId": "cd" * 8, "name": "invoke_agent a", "startTimeUnixNano": "1",
        "endTimeUnixNano": "2", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "invoke_agent"}}]}


def test_a_document_with_spans_and_logs_is_a_trace_file(tmp_path):
    for logs in ([], [{"resource": {}, "scopeLogs": []}]):
        path = tmp_path / "trace_session.jsonl"
        path.write_text(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [{"spans": [SPAN]}]}],
                                    "resourceLogs": logs}))
        assert [t.trace_id for t in read_traces(path)] == ["ab" * 16]
