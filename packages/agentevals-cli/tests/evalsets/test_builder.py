"""``evalsets.builder``: choosing and sampling stored cases, ADK cases from them, merge, diff, validation."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from agentevals.errors import ConfigError
from agentevals.evalsets import parse_eval_set
from agentevals.evalsets.builder import (
    diff_sets,
    eval_case_from,
    merge_sets,
    sample_cases,
    select_cases,
    set_id_for,
    validate_set,
    write_set,
)
from agentevals.results import CaseResult, MetricResult, Status


def case(i: int, status: Status, *, metric: str = "traj", turns: int = 1) -> tuple[int, CaseResult]:
    result = CaseResult(case_id=f"{i:032x}", trace_ids=[f"{i:032x}"], sources=["t.json"],
                        metrics=[MetricResult(name=metric, status=status, score=1.0 if status == Status.PASSED else 0.0)])
    result._transcript = [{"user": f"question {i}.{t}", "response": f"answer {i}.{t}", "invocation_id": f"span{i}x{t}",
                           "tool_calls": [{"name": "lookup", "args": {"n": i, "b": [1, 2]}}]} for t in range(turns)]
    return i, result


def population(passed: int, failed: int, errored: int = 0) -> list[tuple[int, CaseResult]]:
    statuses = [Status.PASSED] * passed + [Status.FAILED] * failed + [Status.ERROR] * errored
    return [case(i, s) for i, s in enumerate(statuses)]


def test_select_by_status_and_id_in_run_order():
    cases = population(3, 2, 1)
    assert [i for i, _ in select_cases(cases, ["failed"])] == [3, 4, 5]  # FAILED and ERROR
    assert [i for i, _ in select_cases(cases, ["passed"])] == [0, 1, 2]
    assert [i for i, _ in select_cases(cases, [f"{4:032x},{1:032x}"])] == [1, 4]
    assert len(select_cases(cases, [])) == 6
    with pytest.raises(ConfigError, match=r"^--cases: no case 'faild' in the run \(did you mean 'failed'\?\)"):
        select_cases(cases, ["faild"])


def test_stratified_sample_is_proportional_seeded_and_sees_every_stratum():
    cases = population(80, 20)
    picked, strata = sample_cases(cases, 10, stratify_by="traj", seed=7)
    assert strata == {"FAILED": 2, "PASSED": 8}
    assert Counter(c.metrics[0].status for _, c in picked) == {Status.PASSED: 8, Status.FAILED: 2}
    assert [i for i, _ in picked] == sorted(i for i, _ in picked)  # run order, whatever the draw
    assert sample_cases(cases, 10, stratify_by="traj", seed=7)[0] == picked  # same seed, same sample
    assert sample_cases(cases, 10, stratify_by="traj", seed=8)[0] != picked
    # A stratum too small for its share still gets one case when N allows it.
    _, strata = sample_cases(population(97, 2, 1), 5, stratify_by="traj", seed=1)
    assert strata == {"ERROR": 1, "FAILED": 1, "PASSED": 3}
    # Not stratified: N of all; N at least the population: all of it.
    assert len(sample_cases(cases, 10, seed=1)[0]) == 10
    assert sample_cases(cases, 500, stratify_by="traj")[1] == {"FAILED": 20, "PASSED": 80}
    with pytest.raises(ConfigError, match=r"no metric 'trj' in the chosen cases \(did you mean 'traj'\?\) \(metrics: traj\)"):
        sample_cases(cases, 5, stratify_by="trj")


def test_a_stored_case_becomes_an_adk_case_that_reads_back(tmp_path):
    idx, stored = case(3, Status.FAILED, turns=2)
    stored.eval_id = "orig"
    stored._transcript[1]["response_full"] = "the whole " + "long " * 600 + "answer"
    raw = eval_case_from(stored, idx, run_id="R1", eval_id="orig", created=1.5, source_uris=["jaeger+http://h"])
    assert raw["metadata"] == {"provenance": {
        "run_id": "R1", "case_id": f"{3:032x}", "case_index": 3, "trace_ids": [f"{3:032x}"], "sources": ["t.json"],
        "status": "FAILED", "source_uris": ["jaeger+http://h"], "matched_eval_id": "orig"}}
    first = raw["conversation"][0]
    assert first == {"invocation_id": "span3x0", "creation_timestamp": 1.5,
                     "user_content": {"parts": [{"text": "question 3.0"}], "role": "user"},
                     "final_response": {"parts": [{"text": "answer 3.0"}], "role": "model"},
                     "intermediate_data": {"tool_uses": [{"name": "lookup", "args": {"n": 3, "b": [1, 2]}}]}}
    path = tmp_path / "golden.evalset.json"
    write_set(path, {"eval_set_id": set_id_for(path), "eval_cases": [raw]})
    parsed = parse_eval_set(json.loads(path.read_text()), str(path))
    assert parsed.eval_set_id == "golden"
    turns = parsed.eval_cases[0].conversation
    assert turns[1].final_response.startswith("the whole long") and len(turns[1].final_response) > 2000
    assert turns[0].intermediate_steps.tool_calls[0].args == {"b": [1, 2], "n": 3}
    assert validate_set(json.loads(path.read_text()), str(path)) == ([], {"cases": 1, "turns": 2, "tool_calls": 2})


def test_write_set_redacts_and_is_byte_stable(tmp_path, monkeypatch):
    monkeypatch.setenv("PLANTED_API_KEY", "hunter2-planted-value")
    data = {"eval_set_id": "s", "eval_cases": [{"eval_id": "a", "conversation": [
        {"user_content": {"parts": [{"text": "my key sk-live-abcdefghijklmnop1234 and hunter2-planted-value"}]}}]}]}
    write_set(tmp_path / "a.json", data)
    write_set(tmp_path / "b.json", json.loads(json.dumps(data)))
    text = (tmp_path / "a.json").read_text()
    assert "sk-live" not in text and "hunter2" not in text and text.count("***") == 2
    assert text == (tmp_path / "b.json").read_text() and text.endswith("}\n")


def _set(*cases: dict) -> dict:
    return {"eval_set_id": "s", "name": "s", "eval_cases": list(cases)}


def _case(eval_id: str, response: str = "ok", tools: tuple[str, ...] = ("a",)) -> dict:
    return {"eval_id": eval_id, "conversation": [{
        "invocation_id": f"{eval_id}-1", "user_content": {"parts": [{"text": "hi"}], "role": "user"},
        "final_response": {"parts": [{"text": response}], "role": "model"},
        "intermediate_data": {"tool_uses": [{"name": t, "args": {}} for t in tools]}}]}


def test_merge_keeps_a_then_adds_b_and_refuses_a_silent_conflict():
    a, b = _set(_case("x"), _case("y")), _set(_case("y"), _case("z"))
    merged, conflicts = merge_sets(a, b, eval_set_id="m")
    assert [c["eval_id"] for c in merged["eval_cases"]] == ["x", "y", "z"] and not conflicts
    assert merged["eval_set_id"] == merged["name"] == "m"
    # camelCase spelling of the same case is the same case
    camel = _set({"evalId": "y", "conversation": [{"invocationId": "y-1", **{k: v for k, v in _case("y")[
        "conversation"][0].items() if k != "invocation_id"}}]})
    camel["eval_cases"][0]["eval_id"] = camel["eval_cases"][0].pop("evalId")
    assert merge_sets(a, camel, eval_set_id="m")[1] == []
    changed = _set(_case("y", response="new"))
    with pytest.raises(ConfigError, match=r"^eval case 'y' differs between a.json and b.json: pass --on-conflict"):
        merge_sets(a, changed, eval_set_id="m", names=("a.json", "b.json"))
    kept, conflicts = merge_sets(a, changed, eval_set_id="m", on_conflict="keep-b")
    assert conflicts == ["y"] and kept["eval_cases"][1]["conversation"][0]["final_response"]["parts"][0]["text"] == "new"
    assert merge_sets(a, changed, eval_set_id="m", on_conflict="keep-a")[0]["eval_cases"][1] == _case("y")


def test_diff_case_by_case_with_each_changed_field():
    old = _set(_case("x"), _case("y"), _case("gone"))
    new = _set(_case("x"), _case("y", response="better", tools=("a", "b")), _case("fresh"))
    diff = diff_sets(old, new)
    assert (diff.added, diff.removed, diff.unchanged) == (["fresh"], ["gone"], 1)
    assert diff.changed == {"y": [
        {"field": "conversation[0].final_response", "old": "ok", "new": "better"},
        {"field": "conversation[0].tool_uses", "old": [{"name": "a", "args": {}}],
         "new": [{"name": "a", "args": {}}, {"name": "b", "args": {}}]}]}
    assert diff_sets(old, old).same


def test_validate_names_what_adk_would_refuse():
    bad = _set(_case("x"))
    turn = bad["eval_cases"][0]["conversation"][0]
    turn["score"] = 1
    turn["final_response"] = "plain"
    turn["intermediate_data"]["tool_uses"][0]["input"] = {}
    problems, counts = validate_set(bad, "s.json")
    assert problems == [
        "s.json: eval_cases[0] ('x').conversation[0]: unknown key 'score' (ADK refuses unknown keys in a turn)",
        's.json: eval_cases[0] (\'x\').conversation[0].final_response: plain text; ADK expects a Content object '
        '({"role": …, "parts": [{"text": …}]})',
        "s.json: eval_cases[0] ('x').conversation[0].intermediate_data.tool_uses[0]: unknown key 'input'"]
    assert counts["cases"] == 1
    assert validate_set({"resourceSpans": []}, "t.json") == (
        ["t.json: this is a trace file, not an eval set (pass traces as arguments)"], {})
    assert validate_set({"evalSetId": "s", "eval_cases": []}, "c.json")[0] == [
        "c.json: no 'eval_set_id' string (ADK reads top-level keys in snake_case only)"]


def test_a_camel_case_set_reads_as_snake_case_for_add_merge_and_diff(tmp_path):
    from agentevals.evalsets.builder import read_set

    camel = tmp_path / "camel.json"
    camel.write_text(json.dumps({"evalSetId": "c", "evalCases": [{"evalId": "y", "conversation": [{
        "invocationId": "y-1", "userContent": {"parts": [{"text": "hi"}], "role": "user"},
        "finalResponse": {"parts": [{"text": "ok"}], "role": "model"},
        "intermediateData": {"toolUses": [{"name": "a", "args": {"keepMe": 1}}]}}]}]}))
    data = read_set(camel)
    assert data["eval_set_id"] == "c" and data["eval_cases"][0]["eval_id"] == "y"
    assert data["eval_cases"][0]["conversation"][0]["intermediate_data"] == {"tool_uses": [{"name": "a", "args": {"keepMe": 1}}]}
    merged, conflicts = merge_sets(data, _set(_case("y"), _case("z")), eval_set_id="m", on_conflict="keep-a")
    assert [c["eval_id"] for c in merged["eval_cases"]] == ["y", "z"] and conflicts == ["y"]  # the args differ
    assert diff_sets(data, _set(_case("y"))).changed == {"y": [
        {"field": "conversation[0].tool_uses", "old": [{"name": "a", "args": {"keepMe": 1}}], "new": [{"name": "a", "args": {}}]}]}
