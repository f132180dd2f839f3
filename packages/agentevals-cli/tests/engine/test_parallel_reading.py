"""Large Jaeger files converted by worker processes give exactly what the serial reader gives."""

from __future__ import annotations

import json

import pytest
from agentevals.engine import iter_traces
from agentevals.traces.readers import _parallel, _stream
from support.generate import replicate


def summary(items) -> list:
    return [(t.trace_id, t.session_id, [inv.model_dump() for inv in t.invocations], t.performance_metrics, t.warnings)
            for t in items]


@pytest.fixture
def parallel(monkeypatch):
    monkeypatch.setattr(_parallel, "MIN_BYTES", 0)
    monkeypatch.setattr(_parallel, "_BATCH", 3)
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)


@pytest.mark.parametrize("layout", ["plain", "api", "spans-first"])
def test_workers_read_what_the_serial_reader_reads(tmp_path, parallel, layout):
    path = replicate(tmp_path / "t.json", 10)
    document = json.loads(path.read_text())
    if layout == "api":  # the Jaeger query API adds scalar keys after the array
        document = {**document, "total": 0, "limit": 0, "offset": 0, "errors": None}
    elif layout == "spans-first":  # another key order: not recognised, read serially
        document["data"] = [{"spans": t["spans"], "traceID": t["traceID"], "processes": t["processes"]}
                            for t in document["data"]]
    path.write_text(json.dumps(document))
    if layout == "spans-first":
        with pytest.raises(_parallel.Fallback):
            _parallel.trace_slices(path)
    else:
        assert len(_parallel.trace_slices(path)) == 10
    serial = list(iter_traces([path], keep_spans=False, workers=1))
    assert summary(list(iter_traces([path], keep_spans=False, workers=2))) == summary(serial)
    assert len(serial) == 10


def test_a_nested_object_that_looks_like_a_trace_falls_back_without_losing_or_repeating_traces(tmp_path, parallel):
    path = replicate(tmp_path / "t.json", 8)
    document = json.loads(path.read_text())
    document["data"][4]["warnings"] = [{"traceID": "x", "spans": []}]  # a false trace start in the 5th trace
    path.write_text(json.dumps(document))
    assert len(_parallel.trace_slices(path)) == 9
    serial = list(iter_traces([path], keep_spans=False, workers=1))
    assert summary(list(iter_traces([path], keep_spans=False, workers=2))) == summary(serial)
    assert [t.trace_id for t in serial] == [f"{i + 1:032x}" for i in range(8)]
