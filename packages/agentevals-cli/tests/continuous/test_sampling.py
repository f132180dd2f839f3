"""Deterministic sampling and session filters (issue 25 item 2): the sampler's properties, the filter
language on real converted traces, ``run --sample/--filter`` end to end, and serve's counters."""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from agentevals.api import prepare_run
from agentevals.engine import load_traces
from agentevals.engine.admission import admissions_for, skip_kind
from agentevals.engine.filters import FilterAdmission, FilterError, parse_filter
from agentevals.engine.grouping import Case
from agentevals.engine.run import run_evaluation
from agentevals.engine.sampling import SALT, Sampler, in_sample, sample_key, sample_point
from agentevals.errors import ConfigError
from agentevals.results import SKIP_KINDS as RESULT_SKIP_KINDS
from agentevals.results import Status
from agentevals.serve.continuous import ContinuousState, StateRecorder
from agentevals.serve.live import EvalSettings, LiveEvaluator
from agentevals.serve.sessions import ReadySession, SessionAssembler
from agentevals.serve.store import MemorySessionStore
from agentevals.traces.readers import read_traces
from hypothesis import given, settings
from hypothesis import strategies as st
from support.generate import replicate

DATA = Path(__file__).resolve().parents[1] / "data"
GENAI = DATA / "traces" / "genai"
EXAMPLES = Path(__file__).resolve().parents[4] / "examples"

keys = st.text(min_size=1, max_size=64)
rates = st.floats(min_value=0.0, max_value=1.0, exclude_min=True)


def documented_point(key: str) -> float:
    """The rule as docs/continuous.md states it, written out independently of the module."""
    digest = hashlib.sha256(b"agentevals-sample-v1:" + key.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


class _Ev:
    """An evaluator as the sampler sees one: a config with an optional ``sample``."""

    def __init__(self, sample=None, name="m") -> None:
        self.config = type("C", (), {"sample": sample, "name": name})()


def _case(key: str, *, session: bool = True) -> Case:
    trace = type("T", (), {"session_id": key if session else None, "trace_id": key})()
    return Case(case_id=key, traces=[trace])  # type: ignore[list-item]


# -- the sampler ---------------------------------------------------------------------------------------


@given(keys)
def test_point_is_the_documented_rule_and_in_unit_interval(key):
    assert SALT == b"agentevals-sample-v1:"
    assert 0.0 <= sample_point(key) < 1.0
    assert sample_point(key) == documented_point(key)


@given(keys, rates, rates)
def test_nested_a_lower_rate_sample_is_a_subset(key, a, b):
    low, high = sorted((a, b))
    if in_sample(key, low):
        assert in_sample(key, high)


@given(keys, rates)
@settings(max_examples=200)
def test_same_session_in_or_out_for_every_evaluator_at_the_same_rate(key, rate):
    case = _case(key)
    run_level = [Sampler(rate).skip(case, _Ev(name=n)) is None for n in ("a", "b", "c")]
    own = [Sampler(None).skip(case, _Ev(rate, name=n)) is None for n in ("a", "b")]
    assert len(set(run_level + own)) == 1
    assert run_level[0] == in_sample(key, rate)


@given(keys, rates, rates)
def test_run_rate_and_evaluator_rate_both_apply(key, run_rate, own_rate):
    decision = Sampler(run_rate).skip(_case(key), _Ev(own_rate))
    assert (decision is None) == (in_sample(key, run_rate) and in_sample(key, own_rate))
    if decision is not None:
        assert decision.kind == "sampled_out" and decision.reason.startswith("sampled out (sample: ")


def test_key_is_the_conversation_id_else_the_trace_id():
    with_session = _case("conv-1")
    assert sample_key(with_session) == "conv-1"
    trace = type("T", (), {"session_id": None, "trace_id": "abc"})()
    assert sample_key(Case(case_id="x", traces=[trace])) == "abc"  # type: ignore[list-item]
    # Two traces of one conversation (grouped by trace) are in or out together.
    parts = [type("T", (), {"session_id": "conv-9", "trace_id": t})() for t in ("t1", "t2")]
    assert {sample_key(Case(case_id=t.trace_id, traces=[t])) for t in parts} == {"conv-9"}  # type: ignore[list-item]


def test_rate_is_met_over_many_sessions():
    ids = [f"session-{i}" for i in range(20_000)]
    for rate in (0.01, 0.1, 0.5, 0.9):
        share = sum(in_sample(k, rate) for k in ids) / len(ids)
        assert abs(share - rate) < 0.015, (rate, share)


def test_stable_across_processes():
    ids = [f"conv-{i}" for i in range(300)] + ["ünïcode-会话", "", "a" * 500]
    code = ("import json, sys\nfrom agentevals.engine.sampling import sample_point\n"
            "print(json.dumps([sample_point(k) for k in json.load(sys.stdin)]))")
    for seed in ("0", "12345"):  # another hash seed: nothing may depend on Python's own str hash
        done = subprocess.run([sys.executable, "-c", code], input=json.dumps(ids), capture_output=True, text=True,
                              timeout=60, env={"PYTHONHASHSEED": seed, "PATH": ""}, check=True)
        assert json.loads(done.stdout) == [sample_point(k) for k in ids]


def test_pinned_points_do_not_change_between_releases():
    # Computed once from the documented rule; a change here re-samples every user's sessions.
    assert round(sample_point("conv-1"), 12) == round(documented_point("conv-1"), 12)
    assert [in_sample(f"session-{i}", 0.5) for i in range(8)] == [documented_point(f"session-{i}") < 0.5
                                                                  for i in range(8)]


def test_skip_kinds_agree_between_engine_and_results():
    from agentevals.engine.admission import SKIP_KINDS

    assert tuple(SKIP_KINDS) == tuple(RESULT_SKIP_KINDS)


# -- the filter language -------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def genai_cases() -> dict[str, Case]:
    out = {}
    for name in ("openai_agents_otel_genai.otlp.json", "langchain_openinference.jaeger.json",
                 "strands_legacy.otlp.json"):
        converted, errors = load_traces([str(GENAI / name)], keep_spans=True)
        assert converted and not errors
        out[name.split(".")[0]] = Case(case_id=converted[0].trace_id, traces=converted)
    return out


def _spans(case: Case):
    return [s for t in case.traces for s in t.trace.spans]


def test_filter_fields_read_the_real_trace(genai_cases):
    case = genai_cases["openai_agents_otel_genai"]
    service = case.traces[0].resource.get("service.name")
    assert service
    assert parse_filter(f'service == "{service}"').matches(case)
    assert not parse_filter(f'service != "{service}"').matches(case)
    assert parse_filter(f'not service == "{service}x"').matches(case)
    agent = case.traces[0].agent_name
    assert agent and parse_filter(f"agent == '{agent}'").matches(case)
    assert parse_filter(f'agent in ["nobody", "{agent}"]').matches(case)
    assert parse_filter('agent not in ["nobody"]').matches(case)
    key, value = next((k, v) for s in _spans(case) for k, v in s.attributes.items() if isinstance(v, str))
    assert parse_filter(f'attr.{key} == "{value}"').matches(case)
    assert parse_filter(f'attr.{key} contains "{value[1:3]}"').matches(case)
    assert not parse_filter('attr.no.such.key == "x"').matches(case)
    assert not parse_filter('attr.no.such.key != "x"').matches(case)  # a missing value never satisfies a test
    assert parse_filter(f"resource.service.name == '{service}'").matches(case)
    spans = _spans(case)
    seconds = (max(s.end_ns for s in spans) - min(s.start_ns for s in spans)) / 1e9
    assert parse_filter(f"duration >= {seconds}").matches(case)
    assert not parse_filter(f"duration > {seconds}").matches(case)
    assert parse_filter(f"duration < {int(seconds * 1000) + 1}ms").matches(case)
    assert parse_filter("duration < 1h and duration > 0s").matches(case)
    failed = any(s.status_code == "ERROR" for s in spans)
    assert parse_filter("error").matches(case) == failed
    assert parse_filter('status == "ok"').matches(case) == (not failed)
    assert parse_filter(f"name == '{spans[0].name}'").matches(case)
    assert parse_filter("turns >= 1").matches(case)
    assert parse_filter(f'trace_id == "{case.traces[0].trace_id}"').matches(case)


def test_filter_boolean_structure(genai_cases):
    case = genai_cases["strands_legacy"]
    yes, no = "turns >= 1", "turns > 1000"
    assert parse_filter(f"{yes} and not {no}").matches(case)
    assert parse_filter(f"{no} or {yes}").matches(case)
    assert not parse_filter(f"{no} or {yes} and {no}").matches(case)  # and binds tighter than or
    assert parse_filter(f"({no} or {yes}) and not ({no})").matches(case)
    assert parse_filter(f"not not {yes}").matches(case)


def test_numbers_compare_as_numbers():
    span = type("S", (), {"attributes": {"http.status_code": 503, "retries": "3", "tags": ["a", "b"]},
                          "resource": {}, "name": "x", "start_ns": 1, "end_ns": 2, "status_code": None})()
    trace = type("T", (), {"trace": type("R", (), {"spans": [span]})(), "attributes": {}, "resource": {},
                           "agent_name": None, "session_id": None, "trace_id": "t", "invocations": []})()
    case = Case(case_id="t", traces=[trace])  # type: ignore[list-item]
    assert parse_filter("attr.http.status_code >= 500").matches(case)
    assert parse_filter('attr.http.status_code == "503"').matches(case)
    assert parse_filter("attr.retries > 2.5").matches(case)
    assert parse_filter('attr.tags contains "b"').matches(case)
    assert parse_filter("attr.retries").matches(case)


@pytest.mark.parametrize(("expr", "column", "words"), [
    ('attr.env = "prod"', 10, "'=' is not a comparison"),
    ("attr.env == ", 13, "expected a value after '=='"),
    ("attr.env == prod", 13, "quote strings"),
    ("servce == 'x'", 1, "did you mean 'service'"),
    ("(error or duration > 2s", 24, "expected ')'"),
    ("error and", 10, "expected a field"),
    ("error error", 7, "expected 'and', 'or' or the end"),
    ("agent in ['a' 'b']", 15, "expected ',' or ']'"),
    ("agent in 'a'", 10, "expected '['"),
    ("duration > 2s $", 15, "unexpected character '$'"),
    ("", 1, "empty expression"),
    ("attr. == 1", 1, "needs an attribute key"),
])
def test_a_bad_expression_is_one_line_with_its_column(expr, column, words):
    with pytest.raises(FilterError) as info:
        parse_filter(expr, label="--filter")
    message = str(info.value)
    assert isinstance(info.value, ConfigError) and "\n" not in message
    assert message.startswith(f"--filter {expr!r}: column {column}: ") and words in message, message


def test_filter_needs_spans_only_for_span_fields():
    assert parse_filter("attr.x == 1 or error").needs_spans
    assert parse_filter("duration > 1s").needs_spans
    assert not parse_filter('service == "a" and agent == "b" and resource.k == 1').needs_spans


def test_filter_admission_gives_filtered_out(genai_cases):
    case = genai_cases["langchain_openinference"]
    admission = FilterAdmission(parse_filter("turns > 1000"))
    skip = admission.skip(case, _Ev())
    assert skip is not None and skip.kind == "filtered_out" and skip.reason == "filtered out (filter: turns > 1000)"
    assert FilterAdmission(parse_filter("turns >= 1")).skip(case, _Ev()) is None


def test_admissions_are_filter_then_sample():
    evaluators, options, _ = prepare_run(metrics=["tool_call_count_v1"])
    options.filter, options.sample = "error", 0.5
    checks = admissions_for([e.evaluator for e in evaluators], options)
    assert [type(c).__name__ for c in checks] == ["FilterAdmission", "Sampler"]
    options.filter, options.sample = None, None
    assert admissions_for([e.evaluator for e in evaluators], options) == []


def test_config_filter_error_names_file_line_and_column(tmp_path):
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_call_count_v1\n    type: builtin\nfilter: 'duration >> 2s'\n")
    with pytest.raises(ConfigError) as info:
        prepare_run(config=str(config))
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"{config}:4:") and "column 11" in message, message


# -- runs ---------------------------------------------------------------------------------------------


def _agentevals(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "agentevals", *args], capture_output=True, text=True, timeout=240,
                          cwd=cwd)


@pytest.mark.timeout(400)
def test_run_sample_end_to_end_counts_and_nests(tmp_path):
    traces = replicate(tmp_path / "helm40.json", 40)
    eval_set = EXAMPLES / "evalsets" / "eval_set_helm.json"
    docs = {}
    for rate in ("0.3", "0.6"):
        done = _agentevals("run", str(traces), "-e", str(eval_set), "-m", "tool_trajectory_avg_score",
                           "--sample", rate, "--no-store", "-o", "json", "--strict", cwd=tmp_path)
        assert done.returncode in (0, 1) and done.stdout.startswith("{"), (done.returncode, done.stdout[:500],
                                                                           done.stderr)
        docs[rate] = json.loads(done.stdout)
    # Each session has one trace, so cases are traces (case id = trace id ``i + 1``); the sample key is
    # still the conversation id ``session-i``.
    expected_in = {r: {f"{i + 1:032x}" for i in range(40) if documented_point(f"session-{i}") < float(r)}
                   for r in docs}
    assert 0 < len(expected_in["0.3"]) < len(expected_in["0.6"]) < 40
    for rate, doc in docs.items():
        scored = {c["case_id"] for c in doc["cases"] if not any(m["details"].get("skipped") for m in c["metrics"])}
        assert scored == expected_in[rate]
        cases = doc["totals"]["cases"]
        assert cases["total"] == 40 and cases["sampled_out"] == 40 - len(scored) and "filtered_out" not in cases
        assert cases["NOT_EVALUATED"] == 0  # skipped sessions are not "not evaluated": --strict ignores them
        metric = doc["totals"]["metrics"]["tool_trajectory_avg_score"]
        assert metric["evaluated"] == len(scored) and metric["skipped"] == 40 - len(scored)
        for case in doc["cases"]:
            row = case["metrics"][0]
            if case["case_id"] not in scored:
                assert row["status"] == "NOT_EVALUATED" and row["reason"] == f"sampled out (sample: {rate})"
            else:
                assert row["status"] in ("PASSED", "FAILED")
    assert expected_in["0.3"] <= expected_in["0.6"]
    summary = _agentevals("run", str(traces), "-e", str(eval_set), "-m", "tool_trajectory_avg_score", "--sample",
                          "0.3", "--filter", 'not session_id in ["session-0", "session-1", "session-2"]',
                          "--no-store", "-o", "summary", cwd=tmp_path)
    first3 = {f"{i + 1:032x}" for i in range(3)}
    filtered = len(first3)
    sampled = 40 - filtered - len(expected_in["0.3"] - first3)
    scored = 40 - filtered - sampled
    assert (f"40 cases ({scored} scored, {sampled} sampled out, {filtered} filtered out): "
            in summary.stdout.splitlines()[-1]), summary.stdout


def test_run_filter_flag_error_exits_2(tmp_path):
    done = _agentevals("run", str(GENAI / "strands_legacy.otlp.json"), "-m", "tool_call_count_v1", "--filter",
                       "duration >> 2s", "--no-store", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "Error: --filter 'duration >> 2s': column 11: expected a value after '>', found '>'"], done.stderr


def test_evaluator_sample_in_config_and_markdown(tmp_path):
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n    sample: 0.25\n"
                      "  - name: tool_call_count_v1\n    type: builtin\n")
    traces = replicate(tmp_path / "helm20.json", 20)
    evaluators, options, _ = prepare_run(config=str(config))
    run = asyncio.run(run_evaluation([str(traces)], evaluators, options=options,
                                     eval_set=EXAMPLES / "evalsets" / "eval_set_helm.json"))
    expected = {f"{i + 1:032x}" for i in range(20) if documented_point(f"session-{i}") < 0.25}
    for case in run.cases:
        trajectory, count = case.metrics
        assert (skip_kind(trajectory) is None) == (case.case_id in expected)
        assert skip_kind(count) is None and count.status == Status.INFORMATIONAL  # the other evaluator: all
    totals = run.totals()
    assert "sampled_out" not in totals["cases"]  # every session is scored by one evaluator at least
    assert totals["results"]["sampled_out"] == 20 - len(expected)
    from agentevals.report.markdown import render_markdown

    assert "Sessions:" not in render_markdown(run)  # no session was skipped by every evaluator
    for case in run.cases:  # now drop the informational rows: sessions scored by nobody show up
        case.metrics = [m for m in case.metrics if m.name != "tool_call_count_v1"]
    skipped_case = [c for c in run.cases if c.metrics and all(skip_kind(m) for m in c.metrics)]
    assert f"Sessions: {len(expected)} scored, {20 - len(expected)} sampled out" in render_markdown(run)
    assert len(skipped_case) == 20 - len(expected)


# -- serve ---------------------------------------------------------------------------------------------


def _sessions(n: int) -> list[ReadySession]:
    (base,) = read_traces(EXAMPLES / "traces" / "helm.json")
    out = []
    for i in range(n):
        trace = copy.deepcopy(base)
        trace.trace_id = f"{i + 1:032x}"
        for span in trace.spans:
            span.trace_id = trace.trace_id
        out.append(ReadySession(f"live-{i}", [trace], len(trace.spans), conversation=True))
    return out


def test_serve_counts_scored_sampled_and_filtered(tmp_path):
    state = ContinuousState()
    store = MemorySessionStore()
    live = LiveEvaluator(SessionAssembler(), store, EvalSettings(metrics=["tool_call_count_v1"], sample=0.5,
                                                                  filter='not session_id == "live-0"'),
                         consumers=[StateRecorder(state)])
    sessions = _sessions(24)
    asyncio.run(live.evaluate(sessions))
    inside = {f"live-{i}" for i in range(1, 24) if documented_point(f"live-{i}") < 0.5}
    counts = state.counters.as_json()
    assert counts == {"scored": len(inside), "sampled_out": 23 - len(inside), "filtered_out": 1,
                      "over_budget": 0}, counts
    assert store.get("live-0").result.metrics[0].details["skipped"] == "filtered_out"
    with pytest.raises(ConfigError, match=r"^--filter 'error or': column 9: expected a field"):
        LiveEvaluator(SessionAssembler(), store, EvalSettings(metrics=["tool_call_count_v1"], filter="error or"))



def test_python_api_sample_and_filter_arguments():
    import agentevals

    inputs = [str(EXAMPLES / "traces" / name) for name in ("helm.json", "k8s.json", "helm_3.json")]
    run = agentevals.evaluate(inputs, metrics=["tool_call_count_v1"], sample=0.8)
    assert len(run.cases) == 3
    converted, _ = load_traces(inputs)
    expected_out = sum(1 for t in converted if documented_point(t.session_id or t.trace_id) >= 0.8)
    assert run.totals()["cases"].get("sampled_out", 0) == expected_out
    run = agentevals.evaluate(inputs, metrics=["tool_call_count_v1"], filter='agent == "k8s_agent"')
    assert run.totals()["cases"]["filtered_out"] == 2
    with pytest.raises(ConfigError, match=r"^filter= 'agent ==': column 9: expected a value after '==', found the end"):
        agentevals.evaluate(inputs, filter="agent ==")
    with pytest.raises(ConfigError, match=r"^sample=1.5: "):
        agentevals.evaluate(inputs, sample=1.5)
