"""``evalsets.builder``'s pieces for the web UI: a case put into a set (an edit replaces it), labels set on the
cases made from one stored case."""

from __future__ import annotations

import pytest
from agentevals.errors import ConfigError
from agentevals.evalsets.builder import eval_case_from, label_entries, put_case, set_labels, validate_set
from agentevals.results import CaseResult, HumanLabel


def stored(case_id: str) -> CaseResult:
    case = CaseResult(case_id=case_id, trace_ids=[case_id], sources=["t.json"])
    case._transcript = [{"user": "hi", "response": "hello", "invocation_id": f"span_{case_id}", "tool_calls": []}]
    return case


def test_put_case_adds_replaces_its_own_edit_and_refuses_anothers_eval_id():
    data = {"eval_set_id": "g", "eval_cases": []}
    assert put_case(data, eval_case_from(stored("a"), 0, run_id="r1", eval_id="first")) is None
    assert put_case(data, eval_case_from(stored("b"), 1, run_id="r1", eval_id="second")) is None
    edited = eval_case_from(stored("a"), 0, run_id="r1", eval_id="first_v2")
    assert put_case(data, edited) == "first"  # the same run and case: replaced in place
    assert [c["eval_id"] for c in data["eval_cases"]] == ["first_v2", "second"]
    with pytest.raises(ConfigError, match="eval id 'second' is already in the set"):
        put_case(data, eval_case_from(stored("c"), 2, run_id="r1", eval_id="second"))
    assert put_case(data, eval_case_from(stored("a"), 0, run_id="r2", eval_id="from_r2")) is None  # another run
    assert validate_set(data, "g.json")[0] == []


def test_set_labels_reaches_every_case_made_from_the_labelled_case_and_can_clear_them():
    data = {"eval_set_id": "g", "eval_cases": [eval_case_from(stored("a"), 0, run_id="r1", eval_id="x"),
                                               eval_case_from(stored("b"), 1, run_id="r1", eval_id="y")]}
    labels = [HumanLabel(verdict="pass", labeler="ana", note="ok", created_at="2026-11-27T06:00:00Z"),
              HumanLabel(score=0.4, metric="m", created_at="2026-11-27T06:01:00Z")]
    assert set_labels(data, "r1", "a", labels) == ["x"]
    assert data["eval_cases"][0]["metadata"]["labels"] == label_entries(labels) == [
        {"verdict": "pass", "labeler": "ana", "note": "ok", "created_at": "2026-11-27T06:00:00Z"},
        {"score": 0.4, "metric": "m", "created_at": "2026-11-27T06:01:00Z"}]
    assert "labels" not in data["eval_cases"][1]["metadata"]
    assert set_labels(data, "r1", "a", labels) == []  # unchanged: nothing to write
    assert set_labels(data, "r2", "a", labels) == []  # another run's case of the same id
    assert set_labels(data, "r1", "a", []) == ["x"] and "labels" not in data["eval_cases"][0]["metadata"]
    assert validate_set(data, "g.json")[0] == []


@pytest.mark.parametrize("metadata", ["note", ["a", "list"]])
def test_a_set_case_whose_metadata_is_not_a_mapping_is_scanned_past_not_crashed_on(metadata):
    hand_written = {"eval_id": "hand", "conversation": [], "metadata": metadata}
    data = {"eval_set_id": "g", "eval_cases": [hand_written, eval_case_from(stored("a"), 0, run_id="r1", eval_id="x")]}
    labels = [HumanLabel(verdict="fail", created_at="2026-11-27T06:00:00Z")]
    assert set_labels(data, "r1", "a", labels) == ["x"]
    assert hand_written == {"eval_id": "hand", "conversation": [], "metadata": metadata}  # left as it was
    assert put_case(data, eval_case_from(stored("a"), 0, run_id="r1", eval_id="x2")) == "x"
    assert put_case(data, eval_case_from(stored("b"), 1, run_id="r1", eval_id="y")) is None
    assert [c["eval_id"] for c in data["eval_cases"]] == ["hand", "x2", "y"]
