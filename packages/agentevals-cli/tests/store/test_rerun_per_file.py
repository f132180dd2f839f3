"""A run over several files where only some changed takes the unchanged files' cases from the stored run and
reads only the changed files; the results and report are those of a cold run. Anything that makes a file's
cases depend on the other files, and every file is read.

Real parts: the ``agentevals`` CLI, a ``code`` evaluator run as its own process (it marks each trace it scores),
a SQLite run store in a temp dir, and a Postgres one for the main case (there the CLI runs as its own process).
Which files were read is seen by a spy on the file reader (it reads, then says which file it was asked for).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentevals.cli import cli
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.marking import marking_project, marks
from support.traces import clone_traces

HELM = Path(__file__).resolve().parents[1] / "data" / "adk" / "helm.json"

SCORING = '''\
if os.path.exists(os.path.join(here, "broken")) and 11 <= int(trace, 16) <= 13:
    sys.exit("broken")  # an ERROR result for b's traces
print(json.dumps({"score": 1.0 if int(trace, 16) % 3 else 0.0}))
'''


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    marking_project(tmp_path, SCORING)
    clone_traces(HELM, 4, tmp_path / "a.json", start=1)
    clone_traces(HELM, 3, tmp_path / "b.json", start=11)
    clone_traces(HELM, 5, tmp_path / "c.json", start=21)
    monkeypatch.setenv("AGENTEVALS_STORE", str(tmp_path / "runs.sqlite"))
    return tmp_path


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the run's file reader was asked to read, by name."""
    from agentevals.trace_sources.files import FileSource

    names: list[str] = []
    read = FileSource.read

    def spy(self, ctx, position):
        names.append(Path(str(self.item)).name)
        yield from read(self, ctx, position)

    monkeypatch.setattr(FileSource, "read", spy)
    return names


def run(root: Path, *extra: str, files: tuple[str, ...] = ("a.json", "b.json", "c.json"),
        group_by: str = "trace") -> tuple[int, dict, str]:
    result = CliRunner().invoke(cli, ["run", *(str(root / f) for f in files), "-c", str(root / "eval_config.yaml"),
                                      "--group-by", group_by, "-o", "json", *extra], catch_exceptions=False)
    assert result.stdout, result.stderr
    return result.exit_code, json.loads(result.stdout), result.stderr


def same_report(doc: object) -> object:
    """The report without what differs between two runs of the same inputs: ids, times, the store's notes."""
    if isinstance(doc, dict):
        return {k: same_report(v) for k, v in doc.items()
                if k not in ("run_id", "started_at", "finished_at", "notes", "duration_ms")}
    if isinstance(doc, list):
        return [same_report(v) for v in doc]
    return doc


def taken(doc: dict) -> list[str]:
    return [note for note in doc["notes"] if "unchanged since run" in note]


def test_only_the_changed_file_is_read_and_the_report_is_a_cold_runs(project, opened, tmp_path_factory):
    code, first, err = run(project)
    assert code == 1, err  # traces 0x3, 0x15 (21), 0x18 (24) fail
    assert sorted(opened) == ["a.json", "b.json", "c.json"] and len(marks(project)) == 12
    opened.clear()

    clone_traces(HELM, 4, project / "b.json", start=31)  # b changes: four other traces
    code, again, err = run(project)
    assert code == 1, err
    assert opened == ["b.json"]  # a and c were not read
    assert sorted(marks(project)) == [f"{i:032x}" for i in range(31, 35)]
    assert taken(again) == [f"9 cases of 2 files unchanged since run {first['run_id']} taken as stored; "
                            "their traces were not read again"]
    assert "9 results reused from the run store, not run again (--no-cache runs everything)" in again["notes"]

    # A cold run of the same inputs (a fresh store) gives the same report, case for case, in the same order.
    cold_store = tmp_path_factory.mktemp("cold") / "runs.sqlite"
    code, cold, err = run(project, "--store", str(cold_store))
    assert code == 1, err
    assert same_report(again) == same_report(cold)
    assert [c["case_id"] for c in again["cases"]] == ([f"{i:032x}" for i in range(1, 5)] + [
        f"{i:032x}" for i in range(31, 35)] + [f"{i:032x}" for i in range(21, 26)])

    # The rerun recorded its own files: changing c now takes a and b from it.
    opened.clear()
    clone_traces(HELM, 2, project / "c.json", start=41)
    code, third, err = run(project)
    assert code == 1 and opened == ["c.json"], err
    assert taken(third) == [f"8 cases of 2 files unchanged since run {again['run_id']} taken as stored; "
                            "their traces were not read again"]
    assert [c["case_id"] for c in third["cases"]][:8] == [c["case_id"] for c in again["cases"]][:8]


def test_a_quoted_glob_is_keyed_file_by_file(project, opened, tmp_path_factory):
    # 'DIR/?.json' as given (the shell did not expand it): a.json, b.json and c.json, each keyed on its own.
    _, first, err = run(project, files=("?.json",))
    assert sorted(opened) == ["a.json", "b.json", "c.json"] and len(first["cases"]) == 12, err
    opened.clear()
    _, same, err = run(project, files=("?.json",))
    assert opened == [], err  # nothing changed: served whole from the store
    assert any(note.startswith("3 file(s) served from the cache") for note in same["notes"])
    clone_traces(HELM, 4, project / "b.json", start=31)
    opened.clear()
    _, again, err = run(project, files=("?.json",))
    assert opened == ["b.json"], err
    assert taken(again) == [f"9 cases of 2 files unchanged since run {first['run_id']} taken as stored; "
                            "their traces were not read again"]
    _, cold, _ = run(project, "--store", str(tmp_path_factory.mktemp("cold") / "runs.sqlite"), files=("?.json",))
    assert same_report(again) == same_report(cold)


def test_a_file_whose_cases_had_an_error_is_read_again(project, opened):
    (project / "broken").write_text("")
    _, first, _ = run(project)
    assert {c["metrics"][0]["status"] for c in first["cases"][4:7]} == {"ERROR"}
    (project / "broken").unlink()
    clone_traces(HELM, 5, project / "c.json", start=51)
    opened.clear()
    marks(project)
    _, again, err = run(project)
    assert sorted(opened) == ["b.json", "c.json"], err  # b's errors are tried again, a is taken
    assert taken(again) == [f"4 cases of 1 file unchanged since run {first['run_id']} taken as stored; "
                            "their traces were not read again"]
    assert [c["metrics"][0]["status"] for c in again["cases"][4:7]] == ["PASSED", "FAILED", "PASSED"]
    assert sorted(marks(project)) == [f"{i:032x}" for i in (11, 12, 13, 51, 52, 53, 54, 55)]


@pytest.mark.parametrize("extra", [
    ("--sample", "0.999"),  # every case sampled in: what it would take is all scores
    ("--repeat-key", "trace_id"),
    ("--no-cache",),
    ("--fail-on-evaluation-error",),
])
def test_a_rule_across_cases_reads_every_file(project, opened, extra):
    run(project, *extra)
    clone_traces(HELM, 4, project / "b.json", start=31)
    opened.clear()
    _, again, err = run(project, *extra)
    assert sorted(opened) == ["a.json", "b.json", "c.json"], err
    assert taken(again) == []


def own_sessions(path: Path, *, drop: bool = False, shared: dict[int, str] | None = None) -> None:
    """Give each trace of ``path`` a session id of its own, ``s-<trace id>`` (``drop``: none at all; ``shared``:
    trace number → the session id that trace has instead)."""
    keys = ("gen_ai.conversation.id", "gcp.vertex.agent.session_id")
    doc = json.loads(path.read_text())
    for trace in doc["data"]:
        session = (shared or {}).get(int(trace["traceID"], 16), f"s-{trace['traceID']}")
        for span in trace["spans"]:
            span["tags"] = [dict(tag, value=session) if tag["key"] in keys else tag
                            for tag in span["tags"] if not (drop and tag["key"] in keys)]
    path.write_text(json.dumps(doc))


def session(n: int) -> str:
    return f"s-{n:032x}"


def test_a_conversation_across_files_reads_every_file(project, opened):
    # Every clone of helm's trace has its session id: under --group-by auto they are one case, from all three files.
    _, first, _ = run(project, group_by="auto")
    assert len(first["cases"]) == 1 and len(first["cases"][0]["sources"]) == 3
    clone_traces(HELM, 4, project / "b.json", start=31)
    opened.clear()
    _, again, _ = run(project, group_by="auto")
    assert sorted(opened) == ["a.json", "b.json", "c.json"] and taken(again) == []


@pytest.mark.parametrize("group_by", ["auto", "conversation"])
def test_traces_with_session_ids_no_other_file_shares_are_taken(project, opened, group_by, tmp_path_factory):
    # Each trace its own session: the changed file's traces join none of them.
    for name in ("a.json", "b.json", "c.json"):
        own_sessions(project / name)
    _, first, _ = run(project, group_by=group_by)
    assert len(first["cases"]) == 12
    clone_traces(HELM, 4, project / "b.json", start=31)
    own_sessions(project / "b.json")
    opened.clear()
    marks(project)
    _, again, err = run(project, group_by=group_by)
    assert set(opened) == {"b.json"}, err  # b is read for its session ids, then evaluated; a and c are not read
    assert sorted(marks(project)) == [f"{i:032x}" for i in range(31, 35)]
    assert taken(again) == [f"9 cases of 2 files unchanged since run {first['run_id']} taken as stored; "
                            "their traces were not read again"]
    _, cold, _ = run(project, "--store", str(tmp_path_factory.mktemp("cold") / "runs.sqlite"), group_by=group_by)
    assert same_report(again) == same_report(cold)
    case_ids = [c["case_id"] for c in cold["cases"]]
    assert case_ids[4:8] == ([session(i) for i in range(31, 35)] if group_by == "conversation"
                             else [f"{i:032x}" for i in range(31, 35)])  # auto: no session id has two traces


@pytest.mark.parametrize("group_by", ["auto", "conversation"])
def test_a_file_whose_session_a_changed_file_joins_is_read(project, opened, group_by, tmp_path_factory):
    # a's last two traces are one conversation: auto groups conversations before and after the change.
    for name in ("a.json", "b.json", "c.json"):
        own_sessions(project / name, shared={4: session(3)})
    run(project, group_by=group_by)
    clone_traces(HELM, 4, project / "b.json", start=31)
    own_sessions(project / "b.json", shared={32: session(2)})  # b's second trace continues a's second session
    opened.clear()
    _, again, err = run(project, group_by=group_by)
    assert set(opened) == {"a.json", "b.json"}, err  # c is taken
    assert [note.split(" unchanged")[0] for note in taken(again)] == ["5 cases of 1 file"]
    _, cold, _ = run(project, "--store", str(tmp_path_factory.mktemp("cold") / "runs.sqlite"), group_by=group_by)
    assert same_report(again) == same_report(cold)
    joined = next(c for c in again["cases"] if c["case_id"] == session(2))
    assert sorted(joined["trace_ids"]) == [f"{2:032x}", f"{32:032x}"] and len(joined["sources"]) == 2


def test_auto_reads_files_with_session_ids_when_the_grouping_changes(project, opened, tmp_path_factory):
    # No session id has two traces: auto does not group, a case is a trace. Then b's two traces share one:
    # auto groups conversations, and every case with a session id becomes its conversation (named by it).
    for name in ("a.json", "b.json", "c.json"):
        own_sessions(project / name)
    _, first, _ = run(project, group_by="auto")
    assert first["cases"][0]["case_id"] == f"{1:032x}"
    clone_traces(HELM, 4, project / "b.json", start=31)
    own_sessions(project / "b.json", shared={32: session(31)})
    opened.clear()
    _, again, err = run(project, group_by="auto")
    assert set(opened) == {"a.json", "b.json", "c.json"} and taken(again) == [], err
    _, cold, _ = run(project, "--store", str(tmp_path_factory.mktemp("cold") / "runs.sqlite"), group_by="auto")
    assert same_report(again) == same_report(cold)
    assert [c["case_id"] for c in again["cases"]][:5] == [session(i) for i in (1, 2, 3, 4, 31)]


def test_auto_groups_as_before_when_a_taken_file_holds_the_shared_session(project, opened, tmp_path_factory):
    # a's first two traces share a session: auto groups conversations. b changes; a and c are taken, and b's
    # traces are still grouped as conversations (named by their session ids), as in a cold run.
    for name in ("a.json", "b.json", "c.json"):
        own_sessions(project / name, shared={2: session(1)})
    run(project, group_by="auto")
    clone_traces(HELM, 4, project / "b.json", start=31)
    own_sessions(project / "b.json")
    opened.clear()
    _, again, err = run(project, group_by="auto")
    assert set(opened) == {"b.json"}, err
    assert [note.split(" unchanged")[0] for note in taken(again)] == ["8 cases of 2 files"]
    _, cold, _ = run(project, "--store", str(tmp_path_factory.mktemp("cold") / "runs.sqlite"), group_by="auto")
    assert same_report(again) == same_report(cold)
    assert [c["case_id"] for c in again["cases"]][3:7] == [session(i) for i in range(31, 35)]


def test_files_with_session_ids_are_read_when_the_files_to_read_weigh_more(project, opened):
    # Finding b's session ids would mean reading it twice: more than reading a and c as well.
    for name in ("a.json", "b.json", "c.json"):
        own_sessions(project / name)
    run(project, group_by="auto")
    clone_traces(HELM, 20, project / "b.json", start=31)
    own_sessions(project / "b.json")
    opened.clear()
    _, again, err = run(project, group_by="auto")
    assert sorted(opened) == ["a.json", "b.json", "c.json"] and taken(again) == [], err


def test_a_stored_run_that_named_no_session_ids_reads_files_with_them(project, opened):
    import sqlite3

    for name in ("a.json", "b.json", "c.json"):
        own_sessions(project / name)
    run(project, group_by="auto")
    with sqlite3.connect(project / "runs.sqlite") as db:  # as a run of an agentevals before session ids were kept
        assert db.execute("UPDATE run_files SET session_ids = NULL").rowcount == 3
    clone_traces(HELM, 4, project / "b.json", start=31)
    own_sessions(project / "b.json")
    opened.clear()
    _, again, err = run(project, group_by="auto")
    assert sorted(opened) == ["a.json", "b.json", "c.json"] and taken(again) == [], err


def test_traces_without_session_ids_are_taken_whatever_the_grouping(project, opened, tmp_path_factory):
    for name in ("a.json", "b.json", "c.json"):
        own_sessions(project / name, drop=True)
    run(project, group_by="auto")
    clone_traces(HELM, 4, project / "b.json", start=31)  # with session ids: shared, one conversation
    opened.clear()
    _, again, err = run(project, group_by="auto")
    assert opened == ["b.json"], err
    assert len(taken(again)) == 1
    _, cold, _ = run(project, "--store", str(tmp_path_factory.mktemp("cold") / "runs.sqlite"), group_by="auto")
    assert same_report(again) == same_report(cold)
    assert len(cold["cases"]) == 10  # b's four traces are one conversation


def test_a_one_case_eval_set_reads_every_file(project, opened):
    evalset = {"eval_set_id": "one", "eval_cases": [{"eval_id": "only", "conversation": [
        {"invocation_id": "x", "user_content": {"parts": [{"text": "nothing like it"}]}}]}]}
    (project / "set.json").write_text(json.dumps(evalset))
    run(project, "-e", str(project / "set.json"))
    clone_traces(HELM, 4, project / "b.json", start=31)
    opened.clear()
    _, again, _ = run(project, "-e", str(project / "set.json"))
    assert sorted(opened) == ["a.json", "b.json", "c.json"] and taken(again) == []


def test_a_logs_file_among_the_files_to_read_reads_every_file(project, opened):
    logs = Path(__file__).resolve().parents[3].parent / "examples" / "traces" / "openai_v2.otlp-logs.json"
    (project / "logs.json").write_text("{}")
    files = ("a.json", "b.json", "logs.json")
    run(project, files=files)
    (project / "logs.json").write_text(logs.read_text())  # now it holds log records (for any file's traces)
    opened.clear()
    _, again, _ = run(project, files=files)
    assert sorted(opened) == ["a.json", "b.json", "logs.json"] and taken(again) == []


def test_the_same_files_in_another_order_are_placed_in_that_order(project, opened):
    _, first, _ = run(project)
    opened.clear()
    _, again, err = run(project, files=("c.json", "a.json", "b.json"))
    assert opened == [], err  # every file unchanged: nothing is read
    ids = [c["case_id"] for c in first["cases"]]
    assert [c["case_id"] for c in again["cases"]] == ids[7:] + ids[:7]


def test_an_unreadable_file_is_read_again_and_its_error_reported(project, opened, tmp_path_factory):
    (project / "b.json").write_text('{"data": [')  # cut short
    run(project)
    clone_traces(HELM, 2, project / "c.json", start=41)
    opened.clear()
    _, again, err = run(project)
    assert sorted(opened) == ["b.json", "c.json"], err  # a is taken; b's error is the read's to report again
    assert [e["source"] for e in again["input_errors"]] == [str(project / "b.json")]
    _, cold, _ = run(project, "--store", str(tmp_path_factory.mktemp("cold") / "runs.sqlite"))
    assert same_report(again) == same_report(cold)


def test_repetitions_marked_on_the_traces_read_every_file(project, opened):
    # agentevals.repeat_index on the resource: every case is a repetition of one task, numbered across files.
    for name in ("a.json", "b.json", "c.json"):
        doc = json.loads((project / name).read_text())
        for i, trace in enumerate(doc["data"]):
            for process in trace["processes"].values():  # the resource
                process.setdefault("tags", []).append({"key": "agentevals.repeat_index", "type": "int64", "value": i})
        (project / name).write_text(json.dumps(doc))
    _, first, _ = run(project)
    assert all(case["repeat_group"] for case in first["cases"])
    clone_traces(HELM, 2, project / "c.json", start=41)
    opened.clear()
    _, again, _ = run(project)
    assert sorted(opened) == ["a.json", "b.json", "c.json"] and taken(again) == []


def test_a_stored_files_cases_come_out_in_its_place():
    from agentevals.engine.output import Output
    from agentevals.results import CaseResult

    def case(case_id: str) -> CaseResult:
        return CaseResult(case_id=case_id, trace_ids=[case_id], sources=[], metrics=[])

    emitted: list[tuple[int, str]] = []

    class Collect:
        def case_finished(self, index: int, result: CaseResult) -> None:
            emitted.append((index, result.case_id))

    output = Output([Collect()], stop_on_error=False)  # type: ignore[list-item]
    for seq in range(4):
        output.expect(seq)
    output.stored(1, iter([case("s1"), case("s2")]))  # the second input: a stored file of two cases
    output.finished(2, case("n2"))
    assert emitted == []  # held: the first input's case is not finished
    output.finished(0, case("n0"))
    assert emitted == [(0, "n0"), (1, "s1"), (2, "s2"), (3, "n2")]
    output.stored(3, iter([]))  # a stored file without a case
    assert len(output.emitted) == 4


def test_per_file_reruns_on_postgres(project, postgres_url, tmp_path_factory):
    def cli_run(store: str = postgres_url) -> dict:
        done = subprocess.run([sys.executable, "-m", "agentevals", "run", *(str(project / f) for f in ("a.json", "b.json",
                               "c.json")), "-c", str(project / "eval_config.yaml"), "--group-by", "trace", "-o", "json",
                               "--store", store], capture_output=True, text=True, timeout=600,
                              env={**os.environ, "AGENTEVALS_STORE": store})
        assert done.stdout, done.stderr
        return json.loads(done.stdout)

    first = cli_run()
    marks(project)
    clone_traces(HELM, 4, project / "b.json", start=31)
    again = cli_run()
    assert taken(again) == [f"9 cases of 2 files unchanged since run {first['run_id']} taken as stored; "
                            "their traces were not read again"]
    assert sorted(marks(project)) == [f"{i:032x}" for i in range(31, 35)]
    cold = cli_run(str(tmp_path_factory.mktemp("cold") / "runs.sqlite"))
    assert same_report(again) == same_report(cold)
