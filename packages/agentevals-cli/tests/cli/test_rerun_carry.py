"""``--rerun-failed`` and ``--resume`` of a run recorded with the same bytes and settings take its finished (or
passing) cases as stored and read only the other traces; anything changed and every trace is read again.

Real parts: the ``agentevals`` CLI, a ``code`` evaluator run as its own process (it marks each trace it scores,
beside its folder: the result cache's key covers the folder), a SQLite run store in a temp dir. The resume
after SIGINT and SIGKILL, on SQLite and Postgres, is in ``tests/store/test_interrupt_resume.py``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import pytest
from agentevals.cli import cli
from agentevals.engine.output import Output
from agentevals.results import CaseResult
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.marking import MARKING_JUDGE, marking_project, marks
from support.traces import clone_traces

HELM = Path(__file__).resolve().parents[1] / "data" / "adk" / "helm.json"

SCORING = '''\
failing = os.path.exists(os.path.join(here, "failing")) and int(trace, 16) % 4 == 0
print(json.dumps({"score": 0.0 if failing else 1.0}))
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    marking_project(tmp_path, SCORING)
    clone_traces(HELM, 12, tmp_path / "traces.json")
    monkeypatch.setenv("AGENTEVALS_STORE", str(tmp_path / "runs.sqlite"))
    return tmp_path


def run(root: Path, *extra: str) -> tuple[int, dict, str]:
    result = CliRunner().invoke(cli, ["run", str(root / "traces.json"), "-c", str(root / "eval_config.yaml"),
                                      "--group-by", "trace", "-o", "json", *extra], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def statuses(doc: dict) -> list[tuple[str, str]]:
    return [(case["case_id"], case["metrics"][0]["status"]) for case in doc["cases"]]


def test_rerun_failed_reads_only_the_failed_cases_and_keeps_the_order(project, monkeypatch):
    from agentevals.store._replay import Carried

    monkeypatch.setattr(Carried, "CHUNK", 4)  # the stored cases are read in three chunks
    (project / "failing").write_text("")
    code, first, _ = run(project)
    assert code == 1
    ids = [case["case_id"] for case in first["cases"]]
    failed = [i for i in ids if int(i, 16) % 4 == 0]
    assert len(ids) == 12 and sorted(marks(project)) == sorted(ids) and len(failed) == 3

    (project / "failing").unlink()
    code, again, err = run(project, "--rerun-failed")
    assert code == 0, err
    assert sorted(marks(project)) == sorted(failed)  # only the failed cases ran
    assert (f"9 cases without a failure in run {first['run_id']} taken as stored; their traces were not read again"
            in again["notes"])
    assert "9 results reused from the run store, not run again (--no-cache runs everything)" in again["notes"]
    # The stored run's order, the failures rerun in their places; the cases taken are the stored ones.
    assert [case["case_id"] for case in again["cases"]] == ids
    assert statuses(again) == [(i, "PASSED") for i in ids]
    kept = {case["case_id"]: case for case in first["cases"] if case["case_id"] not in failed}
    assert all(case["metrics"] == kept[case["case_id"]]["metrics"] for case in again["cases"] if case["case_id"] in kept)

    # The rerun is stored whole, in that order, and a plain rerun of the same bytes replays it.
    shown = CliRunner().invoke(cli, ["runs", "show", again["run_id"], "-o", "json"], catch_exceptions=False)
    assert [case["case_id"] for case in json.loads(shown.stdout)["cases"]] == ids
    _, replayed, _ = run(project)
    assert marks(project) == [] and statuses(replayed) == statuses(again)


def stored_rows(root: Path, run_id: str) -> dict[str, tuple]:
    """Each case of a stored run by id: its row's JSON and status, its metric rows (with work keys), its trace ids."""
    with sqlite3.connect(root / "runs.sqlite") as db:
        rows = {}
        for idx, case_id, status, case_json in db.execute(
                "SELECT idx, case_id, status, case_json FROM cases WHERE run_id = ?", (run_id,)):
            metrics = db.execute("SELECT pos, evaluator, metric, status, score, work_key, metric_json FROM "
                                 "metric_results WHERE run_id = ? AND idx = ? ORDER BY pos", (run_id, idx)).fetchall()
            traces = db.execute("SELECT trace_id FROM case_traces WHERE run_id = ? AND idx = ? ORDER BY trace_id",
                                (run_id, idx)).fetchall()
            rows[case_id] = (status, case_json, metrics, traces)
    return rows


def test_rerun_failed_copies_the_rows_of_the_cases_it_takes(project, monkeypatch):
    """The cases ``--rerun-failed`` takes as stored are copied row for row in SQL; only the rerun ones are encoded
    and written (``RunStore.record_cases``)."""
    from agentevals.store import RunStore

    (project / "failing").write_text("")
    _, first, _ = run(project)
    marks(project)
    failed = {case["case_id"] for case in first["cases"] if int(case["case_id"], 16) % 4 == 0}
    (project / "failing").unlink()
    written: list[str] = []
    real = RunStore.record_cases

    def record_cases(self, run_id, cases, **kwargs):
        written.extend(case.case_id for _, case, _ in cases)
        return real(self, run_id, cases, **kwargs)

    monkeypatch.setattr(RunStore, "record_cases", record_cases)
    code, again, err = run(project, "--rerun-failed")
    assert code == 0, err
    assert sorted(written) == sorted(failed)
    before, after = stored_rows(project, first["run_id"]), stored_rows(project, again["run_id"])
    assert sorted(after) == sorted(before)
    assert {i: row for i, row in after.items() if i not in failed} == {i: row for i, row in before.items()
                                                                       if i not in failed}
    assert all(after[i][0] == "PASSED" != before[i][0] for i in failed)
    shown = CliRunner().invoke(cli, ["runs", "show", again["run_id"], "-o", "json"], catch_exceptions=False)
    assert [(c["case_id"], c["metrics"]) for c in json.loads(shown.stdout)["cases"]] == [
        (c["case_id"], c["metrics"]) for c in again["cases"]]


def test_rerun_failed_after_the_input_changed_reads_every_trace(project):
    (project / "failing").write_text("")
    run(project)
    marks(project)
    clone_traces(HELM, 13, project / "traces.json")  # one more trace: other bytes
    (project / "failing").unlink()
    code, again, err = run(project, "--rerun-failed")
    assert code == 0, err
    assert not any("taken as stored" in note for note in again["notes"])
    # Every trace is read; stored results are still reused case by case (same content, same evaluator).
    assert "9 results reused from the run store, not run again (--no-cache runs everything)" in again["notes"]
    assert len(again["cases"]) == 13 and len(marks(project)) == 4  # the three failures and the new trace


def test_rerun_failed_after_the_evaluator_changed_reads_every_trace(project):
    (project / "failing").write_text("")
    run(project)
    marks(project)
    (project / "failing").unlink()
    (project / "judge" / "judge.py").write_text(MARKING_JUDGE + SCORING + "# changed\n")
    code, again, err = run(project, "--rerun-failed")
    assert code == 0, err
    assert not any("taken as stored" in note for note in again["notes"])
    assert len(marks(project)) == 12  # another evaluator: nothing stored applies


def case(case_id: str) -> CaseResult:
    return CaseResult(case_id=case_id, trace_ids=[case_id], sources=[], metrics=[])


def test_carried_cases_keep_their_positions_and_the_run_fills_the_others():
    emitted: list[tuple[int, str]] = []

    class Collect:
        def case_finished(self, index: int, result: CaseResult) -> None:
            emitted.append((index, result.case_id))

    output = Output([Collect()], stop_on_error=False)  # type: ignore[list-item]
    output.carry(iter([(0, case("s0")), (2, case("s2")), (5, case("s5"))]))
    assert emitted == [(0, "s0")]  # position 1 is this run's first case
    for seq in range(3):
        output.expect(seq)
    output.finished(1, case("n1"))
    assert emitted == [(0, "s0")]  # held: case 0 of this run is not finished
    output.finished(0, case("n0"))
    output.finished(2, case("n2"))
    assert emitted == [(0, "s0"), (1, "n0"), (2, "s2"), (3, "n1"), (4, "n2"), (5, "s5")]
    output.release()
    assert len(output.emitted) == 6


def test_carried_cases_past_this_runs_last_one_come_out_at_the_end():
    emitted: list[str] = []

    class Collect:
        def case_finished(self, index: int, result: CaseResult) -> None:
            emitted.append(result.case_id)

    output = Output([Collect()], stop_on_error=False)  # type: ignore[list-item]
    output.carry([(0, case("s0")), (9, case("s9"))])
    output.expect(0)
    output.finished(0, case("n0"))
    assert emitted == ["s0", "n0"]
    output.release()
    assert emitted == ["s0", "n0", "s9"]
