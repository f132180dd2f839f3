"""Bounded memory: runs spill case results (``CaseList``) and waiting traces (``Grouper``) to a temporary file
past a threshold, and their reports are the same as without spilling. The thresholds are lowered here
through ``AGENTEVALS_SPILL_CASES`` / ``AGENTEVALS_SPILL_TRACES`` (the defaults keep 2,000 in memory)."""

from __future__ import annotations

import copy
import json
import os
import pickle
import re
import subprocess
import sys
from pathlib import Path

import agentevals
import orjson
import pytest
from agentevals.core.redact import redact
from agentevals.core.spill import SpillFile, spill_threshold
from agentevals.engine.grouping import Grouper
from agentevals.report import render, render_chunks
from agentevals.report._workflow import defuse
from agentevals.report.json import run_extras
from agentevals.report.legacy import legacy_keys
from agentevals.results import CaseResult, MetricResult, RunResult, Status
from agentevals.results.cases import CaseList
from agentevals.traces.model import ConvertedTrace

ROOT = Path(__file__).resolve().parents[4]
HELM = ROOT / "examples" / "traces" / "helm.json"
EVAL_SET = ROOT / "examples" / "evalsets" / "eval_set_helm.json"


def _case(i: int) -> CaseResult:
    case = CaseResult(case_id=f"c{i}", trace_ids=[f"t{i}"], sources=["s"],
                      metrics=[MetricResult.scored("m", i / 10, 0.5, details={"i": i})])
    case._transcript = [{"user": f"turn {i}"}]  # private attributes survive the spill too
    return case


def test_case_list_reads_like_a_list_past_the_threshold():
    cases = [_case(i) for i in range(7)]
    spilled = CaseList(threshold=3)
    for case in cases:
        spilled.append(case)
    assert (len(spilled), spilled.spilled) == (7, 4)
    assert list(spilled) == cases and spilled == cases
    assert spilled[5] == cases[5] and spilled[-1] == cases[-1] and spilled[2] is cases[2]
    assert spilled[1:6:2] == cases[1:6:2] and spilled[-2:] == cases[-2:]
    assert spilled[6]._transcript == [{"user": "turn 6"}]
    with pytest.raises(IndexError):
        spilled[7]
    assert bool(CaseList(threshold=0)) is False and bool(CaseList([cases[0]], threshold=0)) is True
    assert pickle.loads(pickle.dumps(spilled)) == cases  # a plain list: no file behind it
    assert copy.deepcopy(spilled) == cases
    spilled.close()


def test_a_run_holding_a_case_list_dumps_as_with_a_list():
    cases = [_case(i) for i in range(5)]
    run = RunResult(cases=cases)
    expected = run.model_dump(mode="json")
    run.cases = CaseList(cases, threshold=1)
    assert run.model_dump(mode="json") == expected
    assert run.totals() == RunResult(cases=cases).totals()


def test_spill_file_round_trip_and_threshold_variable(monkeypatch):
    spill = SpillFile()
    refs = [spill.put({"n": i, "blob": "x" * i}) for i in range(100)]
    assert [spill.get(r)["n"] for r in reversed(refs)] == list(range(99, -1, -1))
    spill.close()
    monkeypatch.setenv("AGENTEVALS_SPILL_CASES", "5")
    assert spill_threshold("AGENTEVALS_SPILL_CASES") == 5
    monkeypatch.setenv("AGENTEVALS_SPILL_CASES", "many")
    assert spill_threshold("AGENTEVALS_SPILL_CASES") == 2000  # unreadable: the default


def _trace(i: int, session: str | None) -> ConvertedTrace:
    return ConvertedTrace(trace_id=f"t{i:03}", source="s", invocations=[{"turn": i}], session_id=session,
                          start_ns=1_000 - i)  # later traces start earlier: a case sorts its own


def _cases(group_by: str, traces: list[ConvertedTrace], spill_after: int | None):
    grouper = Grouper(group_by, spill_after=spill_after)
    out = []
    for t in traces:
        out.extend((seq, case.case_id, [x.trace_id for x in case.traces]) for seq, case in grouper.add(t)[1])
    dropped = grouper.dropped()
    out.extend((seq, case.case_id, [x.trace_id for x in case.traces]) for seq, case in grouper.finish())
    return out, dropped, grouper.count


@pytest.mark.parametrize("group_by", ["auto", "conversation", "trace"])
@pytest.mark.parametrize("shared", [True, False])
def test_grouper_spilling_waiting_traces_forms_the_same_cases(group_by, shared):
    sessions = [f"s{i % 4}" if shared else f"s{i}" for i in range(20)]
    traces = [_trace(i, None if i % 5 == 0 else sessions[i]) for i in range(20)]
    kept = _cases(group_by, copy.deepcopy(traces), None)
    spilled = _cases(group_by, copy.deepcopy(traces), 0)
    half = _cases(group_by, copy.deepcopy(traces), 3)
    assert kept == spilled == half
    assert kept[2] == len(kept[0])


def _helm_file(path: Path, n: int) -> Path:
    """``n`` copies of the shipped helm trace with new trace ids: two of every six share a conversation,
    the others are conversations of their own (so the grouper both groups and waits)."""
    base = json.loads(HELM.read_text())["data"][0]
    traces = []
    for i in range(n):
        trace = copy.deepcopy(base)
        trace["traceID"] = f"{i + 1:032x}"
        for span in trace["spans"]:
            span["traceID"] = trace["traceID"]
            span["startTime"] += i * 60_000_000
            for tag in span["tags"]:
                if tag["key"] in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id"):
                    tag["value"] = f"pair-{i // 6}" if i % 6 < 2 else f"single-{i}"
        traces.append(trace)
    path.write_text(json.dumps({"data": traces}))
    return path


_VOLATILE = re.compile(rb'"(started_at|finished_at|duration_ms|run_id)": ("[^"]*"|[0-9.e-]+|null)'
                       rb'|time="[^"]*"|timestamp="[^"]*"|started [0-9T:.-]+Z')


def _reports(tmp_path: Path, traces: Path, env: dict[str, str], tag: str, *extra: str) -> dict[str, bytes]:
    out = tmp_path / tag
    out.mkdir()
    cmd = [sys.executable, "-m", "agentevals", "run", str(traces), *extra, "-e", str(EVAL_SET),
           "-m", "tool_trajectory_avg_score", "-m", "response_match_score", "--no-store", "--no-color",
           "-o", f"json={out / 'r.json'}", "-o", f"junit={out / 'r.xml'}", "-o", f"markdown={out / 'r.md'}",
           "-o", f"table={out / 'r.txt'}", "-o", f"summary={out / 's.txt'}"]
    proc = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr.decode()[-2000:]
    return {p.name: _VOLATILE.sub(b"", p.read_bytes()) for p in sorted(out.iterdir())}


def test_reports_are_identical_with_and_without_spilling(tmp_path):
    traces = _helm_file(tmp_path / "helm_x24.json", 24)
    plain = _reports(tmp_path, traces, {"AGENTEVALS_SPILL_CASES": "100000", "AGENTEVALS_SPILL_TRACES": "100000"},
                     "plain")
    spilled = _reports(tmp_path, traces, {"AGENTEVALS_SPILL_CASES": "1", "AGENTEVALS_SPILL_TRACES": "0"}, "spilled")
    assert plain.keys() == spilled.keys() == {"r.json", "r.md", "r.txt", "r.xml", "s.txt"}
    for name in plain:
        assert plain[name] == spilled[name], name
    doc = json.loads((tmp_path / "spilled" / "r.json").read_text())
    assert len(doc["cases"]) == len(doc["traces"]) == 20  # 24 traces, 4 conversations of two
    assert {m["status"] for c in doc["cases"] for m in c["metrics"]} <= {s.value for s in Status}


@pytest.mark.parametrize("n", [0, 1, 5])
def test_the_json_report_in_pieces_is_the_whole_dump(n):
    """``-o json`` is written case by case; the text is byte for byte the one-shot dump of the whole document
    (orjson, indented by two; then redacted and defused as a whole), and reads back as the stdlib's dump."""
    cases = [_case(i) for i in range(n)]
    if cases:  # what defusing and redaction rewrite, inside a spilled case
        cases[-1].metrics[0].details.update(note="::warning::x ##[y] ünï\ncode", url="https://u:pw@h.example/x")
    run = RunResult(cases=cases, notes=["a note"], run_id="r1")
    document = {**run.model_dump(mode="json"), **legacy_keys(run), **run_extras(run)}
    whole = orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
    assert json.loads(whole) == json.loads(json.dumps(document, indent=2, ensure_ascii=False))
    run.cases = CaseList(cases, threshold=2)
    pieces = list(render_chunks(run, "json"))
    assert len(pieces) > 2
    assert "".join(pieces) == defuse(redact(whole), "json") == render(run, "json")
    assert [c["case_id"] for c in json.loads("".join(pieces))["cases"]] == [f"c{i}" for i in range(n)]
    assert ":pw@" not in "".join(pieces) and ("::warning" in whole) == bool(n)


def test_python_api_run_cases_is_a_list_unless_the_run_spilled(tmp_path, monkeypatch):
    traces = _helm_file(tmp_path / "helm_x8.json", 8)
    small = agentevals.evaluate([str(traces)], eval_set=str(EVAL_SET), metrics=["tool_trajectory_avg_score"],
                                repeat_key="eval_id")
    assert type(small.cases) is list and len(small.cases) == 6  # two conversations of two
    monkeypatch.setenv("AGENTEVALS_SPILL_CASES", "2")
    monkeypatch.setenv("AGENTEVALS_SPILL_TRACES", "1")
    big = agentevals.evaluate([str(traces)], eval_set=str(EVAL_SET), metrics=["tool_trajectory_avg_score"],
                              repeat_key="eval_id")
    assert isinstance(big.cases, CaseList) and big.cases.spilled == 4
    assert [c.case_id for c in big.cases] == [c.case_id for c in small.cases]
    assert big.totals() == small.totals() and big.repetitions == small.repetitions
    assert [c.repeat_index for c in big.cases] == [c.repeat_index for c in small.cases] == list(range(6))


def test_sampled_run_reports_are_identical_with_and_without_spilling(tmp_path):
    """The running tallies of a spilled run count sampled-out sessions as the plain count does."""
    traces = _helm_file(tmp_path / "helm_x24.json", 24)
    plain = _reports(tmp_path, traces, {"AGENTEVALS_SPILL_CASES": "100000", "AGENTEVALS_SPILL_TRACES": "100000"},
                     "plain", "--sample", "0.5")
    spilled = _reports(tmp_path, traces, {"AGENTEVALS_SPILL_CASES": "1", "AGENTEVALS_SPILL_TRACES": "0"}, "spilled",
                       "--sample", "0.5")
    for name in plain:
        assert plain[name] == spilled[name], name
    totals = json.loads((tmp_path / "spilled" / "r.json").read_text())["totals"]
    assert 0 < totals["cases"]["sampled_out"] < 20
    assert totals["cases"]["total"] == 20
