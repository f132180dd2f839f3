"""Streaming reads of large files give the whole-file reader's traces and messages; spans are kept only when needed."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agentevals.engine import load_traces, run_evaluation
from agentevals.errors import InputFileError
from agentevals.evaluators.agentv.assertions import ContainsEvaluator
from agentevals.evaluators.agentv.tool_trajectory import ToolTrajectoryEvaluator
from agentevals.evaluators.base import BaseEvaluator, EvalContext, EvaluatorConfig
from agentevals.evaluators.python import PythonEvaluator
from agentevals.results import MetricResult
from agentevals.traces.readers import _stream, read_traces

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE_FILES = sorted(
    [*(DATA / "adk").glob("*.json"), *(DATA / "traces" / "genai").glob("*.json")], key=lambda p: p.name
)
TRACE_FILES = [p for p in TRACE_FILES if "eval" not in p.name and "otlp-logs" not in p.name]
LOGS = DATA / "traces" / "genai" / "openai_otel_genai_v2_latest.otlp-logs.json"
OTLP = DATA / "traces" / "genai" / "openai_otel_genai_v2_latest.otlp.json"


@pytest.fixture
def stream_all(monkeypatch):
    """Stream every file, whatever its size."""
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)


def whole_then_streamed(path: Path, monkeypatch, **kwargs):
    whole = list(read_traces(path, **kwargs))
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)
    return whole, list(read_traces(path, **kwargs))


def test_every_fixture_is_covered():
    names = {p.name for p in TRACE_FILES}
    assert {"helm.json", "tempo_export_with_batches.json", "langchain_openinference.otlp.json",
            "langchain_openinference.jaeger.json"} <= names
    assert len(TRACE_FILES) >= 33


@pytest.mark.parametrize("path", TRACE_FILES, ids=lambda p: p.name)
def test_streaming_yields_the_whole_file_traces(path, monkeypatch):
    whole, streamed = whole_then_streamed(path, monkeypatch)
    assert _stream.plan_stream(path, None) is not None  # really streamed
    assert streamed == whole
    assert whole


def test_small_files_are_not_streamed():
    assert _stream.plan_stream(DATA / "adk" / "helm.json", None) is None


def otlp_batch(trace_id: str, span_id: str, name: str) -> dict:
    span = {"traceId": trace_id, "spanId": span_id, "name": name, "startTimeUnixNano": "1", "endTimeUnixNano": "2"}
    return {"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]},
            "scopeSpans": [{"scope": {"name": "s"}, "spans": [span]}]}


def test_otlp_traces_spread_over_batches_keep_first_seen_order(tmp_path, monkeypatch):
    a, b, c = "a" * 32, "b" * 32, "c" * 32
    batches = [otlp_batch(a, "1" * 16, "a1"), otlp_batch(b, "2" * 16, "b1"), otlp_batch(c, "3" * 16, "c1"),
               otlp_batch(a, "4" * 16, "a2"), otlp_batch(b, "5" * 16, "b2")]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"resourceSpans": batches}))
    whole, streamed = whole_then_streamed(path, monkeypatch)
    assert [(t.trace_id, [s.name for s in t.spans]) for t in streamed] == [(a, ["a1", "a2"]), (b, ["b1", "b2"]),
                                                                            (c, ["c1"])]
    assert streamed == whole


@pytest.mark.parametrize(
    "document",
    [
        {"total": 1, "limit": 0, "data": json.loads((DATA / "adk" / "helm.json").read_text())["data"]},
        {"batches": json.loads((DATA / "adk" / "tempo_export_with_batches.json").read_text())["batches"]},
    ],
    ids=["jaeger-after-scalars", "tempo"],
)
def test_streaming_pretty_printed_and_with_a_bom(tmp_path, monkeypatch, document):
    path = tmp_path / "t.json"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(document, indent=2).encode())
    whole, streamed = whole_then_streamed(path, monkeypatch)
    assert _stream.plan_stream(path, None) is not None
    assert streamed == whole and len(streamed) == 1


def test_json_lines_keep_the_whole_file_path(tmp_path, monkeypatch):
    docs = [{"resourceSpans": [otlp_batch("a" * 32, "1" * 16, "x")]},
            {"resourceSpans": [otlp_batch("a" * 32, "2" * 16, "y")]}]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(json.dumps(d) for d in docs) + "\n")
    whole, streamed = whole_then_streamed(path, monkeypatch)
    assert _stream.plan_stream(path, None) is None
    assert streamed == whole and len(streamed) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"data": [{"traceID": "x", "spans": [', ":1:38: invalid JSON: Expecting value (file looks truncated)"),
        ('{"data": [{"traceID": "x", "spans": []}, {"traceID": "y", "spans": [{"traceID": "y"',
         "invalid JSON: Expecting ',' delimiter (file looks truncated)"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "5b8efff798038103d269b633813fc60c"',
         "invalid JSON: Expecting ',' delimiter (file looks truncated)"),
        ('{"data": [{"traceID": "x", "spans": []}, {"traceID": "y", "spans": [{"spanID": "1", "operationName": "a"}]}]}',
         "data[1].spans[0] has no 'traceID'"),
        ('{"data": [{"traceID": "x", "spans": [{"traceID": "x", "spanID": "1", "operationName": "a", '
         '"startTime": "soon"}]}]}', "data[0].spans[0] (a) has a non-numeric startTime/duration"),
        ('{"data": [{"traceID": "x", "spans": []}, 5]}', "data[1] is not a Jaeger trace (no 'spans' list)"),
        ('{"data": [1, 2]}', "not a trace file: expected Jaeger JSON"),
        ('{"data": "nope"}', "not a trace file"),
        ('{"data": []}', "no spans in the file"),
        ('{"resourceSpans": []}', "no spans in the file"),
        ('{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "5b8efff798038103d269b633813fc60c"}]}]}]}',
         "resourceSpans[0].scopeSpans[0].spans[0] has no 'spanId'"),
        ('{"batches": [{"scopeSpans": "x"}]}', "batches[0].scopeSpans must be a list"),
        ('{"data": [{"traceID": "a", "spans": [{"traceID": "a", "spanID": "b", "operationName": "x", "logs": [5]}]}]}',
         "unexpected jaeger-json structure: AttributeError: 'int' object has no attribute 'get'"),
    ],
)
def test_streaming_errors_are_the_whole_file_messages(tmp_path, monkeypatch, content, message):
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InputFileError) as whole:
        list(read_traces(path))
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)
    with pytest.raises(InputFileError) as streamed:
        list(read_traces(path))
    assert str(streamed.value) == str(whole.value)
    assert str(streamed.value).startswith(f"{path}") and message in str(streamed.value)
    assert "\n" not in str(streamed.value)


def test_forced_format_mismatch_reads_whole(stream_all):
    helm = DATA / "adk" / "helm.json"
    assert _stream.plan_stream(helm, "otlp-json") is None
    with pytest.raises(InputFileError, match="not OTLP JSON"):
        list(read_traces(helm, format="otlp-json"))
    assert [t.trace_id for t in read_traces(helm, format="jaeger-json")] == ["3e289017fe03ffd7c4145316d2eb3d0d"]


# --- runner: convert as read, keep spans only when needed, logs files first ---------------------------------


def test_load_traces_drops_spans_unless_kept(stream_all):
    dropped, errors = load_traces([DATA / "adk" / "helm.json"], keep_spans=False)
    kept, _ = load_traces([DATA / "adk" / "helm.json"])
    assert not errors
    assert dropped[0].trace is None and len(kept[0].trace.spans) == 96
    kept[0].trace = None
    assert dropped == kept


@pytest.mark.parametrize("order", ["logs-first", "logs-last", "logs-last-unsniffed"])
def test_logs_files_are_attached_whatever_their_place(tmp_path, stream_all, order):
    logs = LOGS
    if order == "logs-last-unsniffed":  # first key is not resourceLogs: found while reading, then reloaded
        logs = tmp_path / "logs.json"
        logs.write_text(json.dumps({"schema": "x", **json.loads(LOGS.read_text())}))
    inputs = [logs, OTLP] if order == "logs-first" else [OTLP, logs]
    converted, errors = load_traces(inputs)
    alone, _ = load_traces([OTLP])
    assert not errors
    assert len(converted) == 1
    with_events = sum(len(s.events) for s in converted[0].trace.spans)
    assert with_events > sum(len(s.events) for s in alone[0].trace.spans)


def test_errors_keep_input_order_and_a_broken_file_gives_no_traces(tmp_path, stream_all):
    broken = tmp_path / "broken.json"
    broken.write_text('{"data": [' + json.dumps(json.loads((DATA / "adk" / "helm.json").read_text())["data"][0])
                      + ', {"traceID": "y", "spans": [')
    converted, errors = load_traces([tmp_path / "missing.json", broken, DATA / "adk" / "k8s.json"])
    assert [c.trace_id for c in converted] == ["d497c9dd55717f2c5ecb79bda3028993"]
    assert [e.source for e in errors] == [str(tmp_path / "missing.json"), str(broken)]


class _SeesSpans(BaseEvaluator):
    name = "sees_spans"

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        kept = all(t.trace is not None for t in ctx.traces)
        return MetricResult.scored(self.config.name, float(kept), 1.0, type=self.name)


class _NeedsSpans(_SeesSpans):
    needs_spans = True


@pytest.mark.parametrize(("evaluators", "kept"), [([_SeesSpans], 0.0), ([_SeesSpans, _NeedsSpans], 1.0)])
def test_run_keeps_spans_only_when_an_evaluator_needs_them(evaluators, kept):
    evs = [cls(EvaluatorConfig(name=f"e{i}", type=cls.name), base_dir=Path(".")) for i, cls in enumerate(evaluators)]
    run = asyncio.run(run_evaluation(DATA / "adk" / "helm.json", evs))
    assert run.cases[0].metrics[0].score == kept


def test_needs_spans_flags():
    assert BaseEvaluator.needs_spans is False
    assert PythonEvaluator.needs_spans and ToolTrajectoryEvaluator.needs_spans
    assert not ContainsEvaluator.needs_spans


def test_in_memory_traces_get_log_records_once_and_keep_their_place(tmp_path):
    logs = tmp_path / "logs.json"  # not sniffed as a logs file: found while reading, then everything reloaded
    logs.write_text(json.dumps({"schema": "x", **json.loads(LOGS.read_text())}))
    (expected,), _ = load_traces([OTLP, LOGS])
    trace = next(read_traces(OTLP))
    converted, errors = load_traces([trace, DATA / "adk" / "k8s.json", logs])
    assert not errors
    assert [c.trace_id for c in converted] == [expected.trace_id, "d497c9dd55717f2c5ecb79bda3028993"]
    assert converted[0].trace.spans == expected.trace.spans


def test_invalid_utf8_is_the_whole_file_message(tmp_path, monkeypatch):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"data": [{"traceID": "x", "spans": [{"traceID": "x", "spanID": "1", "operationName": "caf\xe9"}]}]}')
    with pytest.raises(InputFileError) as whole:
        list(read_traces(path))
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)
    with pytest.raises(InputFileError) as streamed:
        list(read_traces(path))
    assert str(streamed.value) == str(whole.value) == f"{path}: not UTF-8 text, expected JSON"
