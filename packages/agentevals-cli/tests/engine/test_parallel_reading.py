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


@pytest.mark.parametrize("spill", ["0", "1000"])
@pytest.mark.parametrize("sessions", ["own", "shared"])
def test_a_run_over_packed_traces_matches_the_serial_run(tmp_path, monkeypatch, parallel, spill, sessions):
    """Worker processes hand the engine packed traces; the grouper keeps them packed (spilled as their bytes
    with AGENTEVALS_SPILL_TRACES=0) and unpacks them when their case is formed: the run is the serial run."""
    import agentevals
    from support.stored_runs import ES_HELM

    session_of = (lambda i: f"conversation-{i % 3}") if sessions == "shared" else None
    path = replicate(tmp_path / "t.json", 9, session_of=session_of, passes=lambda i: i % 2 == 0)
    monkeypatch.setenv("AGENTEVALS_SPILL_TRACES", spill)

    def run(concurrency: int) -> list:
        result = agentevals.evaluate([str(path)], eval_set=ES_HELM, metrics=["tool_trajectory_avg_score"],
                                     concurrency=concurrency)
        return [(c.case_id, c.eval_id, [(m.name, m.status, m.score) for m in c.metrics]) for c in result.cases]

    workers = run(2)
    assert workers == run(1)
    assert len(workers) == (3 if sessions == "shared" else 9)
    if sessions == "own":  # a conversation of three turns matches no single-turn eval case
        assert {status for _, _, rows in workers for _, status, _ in rows} == {"PASSED", "FAILED"}


def test_a_trace_the_reader_is_told_to_skip_is_never_parsed(tmp_path, parallel):
    """``ReadContext.skip_trace`` (``run --unscored``) is asked before a worker parses a trace: a skipped trace
    that the reader would refuse (a span without operationName) gives no error, and is counted as skipped."""
    from agentevals.trace_sources import ReadContext, resolve
    from agentevals.traces.model import ConvertedTrace

    path = replicate(tmp_path / "t.json", 8)
    document = json.loads(path.read_text())
    broken = document["data"][2]
    del broken["spans"][0]["operationName"]
    path.write_text(json.dumps(document))
    skipped = {broken["traceID"], document["data"][5]["traceID"]}

    ctx = ReadContext(workers=2, skip_trace=skipped.__contains__)
    items = [item for item, _ in resolve([str(path)], context=ctx)]
    assert all(isinstance(item, ConvertedTrace) for item in items), items
    assert [t.trace_id for t in items] == [t["traceID"] for t in document["data"] if t["traceID"] not in skipped]
    assert ctx.skipped == 2

    ctx = ReadContext(workers=2, skip_trace=lambda trace_id: False)  # the same file, nothing skipped
    items = [item for item, _ in resolve([str(path)], context=ctx)]
    assert sum(not isinstance(item, ConvertedTrace) for item in items) == 1 and ctx.skipped == 0



@pytest.mark.parametrize("workers", [1, 2])
def test_a_file_asks_skip_trace_once_per_trace(tmp_path, parallel, workers):
    """A file source leaves skipped traces out itself (before parsing them in workers, before converting them
    when read serially): ``resolve`` does not ask again (``--unscored`` asks the run store each time)."""
    from collections import Counter

    from agentevals.trace_sources import ReadContext, resolve

    path = replicate(tmp_path / "t.json", 6)
    ids = [t["traceID"] for t in json.loads(path.read_text())["data"]]
    asked: Counter[str] = Counter()

    def skip(trace_id: str) -> bool:
        asked[trace_id] += 1
        return trace_id in ids[1:3]

    ctx = ReadContext(workers=workers, skip_trace=skip)
    items = [item for item, _ in resolve([str(path)], context=ctx)]
    assert [t.trace_id for t in items] == [ids[0], *ids[3:]] and ctx.skipped == 2
    assert asked == Counter(ids)  # each once
