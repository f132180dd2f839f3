"""The run store on SQLite and on a real PostgreSQL server: runs written case by case, read back, reused."""

from __future__ import annotations

import asyncio
import json

import pytest
from agentevals.core.redact import redact_url
from agentevals.engine import run_evaluation
from agentevals.errors import StoreError
from agentevals.results import Status
from agentevals.store import SCHEMA_VERSION, RunStore, StoreConsumer, StoreReuse, connect, new_run_id
from support.stored_runs import ES_HELM, HELM, K8S, META, record


def test_run_is_recorded_and_read_back(store_url):
    store = RunStore.open(store_url)
    run, _ = record(store, [HELM, K8S])
    (listed,) = store.list_runs()
    assert listed.run_id == run.run_id and listed.status == "completed" and listed.exit_code == 1
    assert listed.command == "agentevals run …" and listed.eval_set_digest == "abc"
    assert listed.totals["cases"] == {"total": 2, "PASSED": 1, "FAILED": 1, "NOT_EVALUATED": 0, "ERROR": 0,
                                      "INFORMATIONAL": 0}
    loaded = store.load_run(store.resolve(run.run_id[:17]))
    assert loaded.model_dump(mode="json") == run.model_dump(mode="json")
    assert loaded.cases[0]._transcript[0]["tool_calls"] == [{"name": "helm_list_releases", "args": {}}]
    assert store.resolve("latest") == run.run_id
    store.close()


def test_unchanged_pairs_are_reused_and_no_cache_runs_them(store_url):
    store = RunStore.open(store_url)
    _first, reuse = record(store, [HELM, K8S])
    assert reuse.reused == 0
    second, reuse = record(store, [HELM, K8S])
    assert reuse.reused == 2
    assert [m.status for c in second.cases for m in c.metrics] == [Status.PASSED, Status.FAILED]
    _, reuse = record(store, [HELM, K8S], cache=False)
    assert reuse.reused == 0
    store.close()


def test_a_cold_cache_is_asked_once_per_evaluator_not_per_case(store_url):
    store = RunStore.open(store_url)
    lookups: list[str] = []
    if store.db.kind == "sqlite":  # what SQLite runs, as it runs it (Postgres: the probe's answers below)
        store.db.conn.set_trace_callback(lambda sql: lookups.append(sql) if "m.work_key = " in sql else None)
    _, cold = record(store, [HELM, K8S])
    assert cold.reused == 0 and lookups == []  # nothing stored yet: no case was looked up
    second, warm = record(store, [HELM, K8S])
    assert warm.reused == 2 and len(lookups) == (2 if store.db.kind == "sqlite" else 0)
    keys = {row[0] for row in store.db.execute("SELECT work_key FROM metric_results WHERE run_id = ?",
                                               (second.run_id,))}
    assert len({key[:16] for key in keys}) == 1 and all(len(key) == 64 for key in keys)  # one evaluator's prefix
    prefix = next(iter(keys))[:16]
    assert store.has_key_prefix(prefix) and store.has_key_prefix(prefix[:15])
    before, after = (f"{int(prefix, 16) + step:016x}"[-16:] for step in (-1, 1))
    assert not store.has_key_prefix(before) and not store.has_key_prefix(after)
    store.close()


def test_rerun_failed_runs_only_what_failed(store_url):
    store = RunStore.open(store_url)
    first, _ = record(store, [HELM, K8S])
    _, reuse = record(store, [HELM, K8S], rerun_failed_from=first.run_id)
    assert reuse.reused == 1  # the passing helm case; k8s failed and ran again
    store.close()


def test_resume_reuses_the_interrupted_runs_results(store_url):
    store = RunStore.open(store_url)
    first, _ = record(store, [HELM], cache=False)
    store.finish_run(first, status="interrupted", exit_code=130, totals=first.totals())
    assert store.resolve(None, statuses=("interrupted",)) == first.run_id
    resumed, reuse = record(store, [HELM, K8S], run_id=first.run_id, cache=False, resume_from=first.run_id)
    assert reuse.reused == 1
    record_ = store.get_run(first.run_id)
    assert record_.status == "completed" and len(store.list_runs()) == 1
    assert [c.case_id for c in store.load_run(first.run_id).cases] == [c.case_id for c in resumed.cases]
    store.close()


def test_unknown_and_ambiguous_runs_are_one_line_errors(tmp_path):
    store = RunStore.open(str(tmp_path / "r.sqlite"))
    with pytest.raises(StoreError, match=r"^no run in the run store .*r\.sqlite$"):
        store.resolve("latest")
    store.begin_run("20260101-000000-aaaaaa", started_at="2026-01-01T00:00:00.000Z", **META)
    store.begin_run("20260101-000000-aaaaab", started_at="2026-01-01T00:00:01.000Z", **META)
    with pytest.raises(StoreError, match="is ambiguous: 20260101-000000-aaaaaa, 20260101-000000-aaaaab"):
        store.resolve("20260101")
    with pytest.raises(StoreError, match=r"no run 'nope' in the run store .* \(see 'agentevals runs list'\)"):
        store.resolve("nope")
    store.close()


def test_sqlite_store_is_created_and_migrated_on_open(tmp_path):
    db = connect(str(tmp_path / "deep" / "runs.sqlite"))
    assert db.schema_version() == SCHEMA_VERSION
    assert db.migrate() == []
    db.close()


def test_unwritable_sqlite_location_is_a_store_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(StoreError, match=r"run store .*file/runs\.sqlite: cannot open: .*--no-store"):
        connect(str(blocker / "runs.sqlite"))


def test_postgres_needs_an_explicit_migration(postgres_server):
    url = postgres_server.create_database("needs_migration")
    with pytest.raises(StoreError, match=rf"is at schema version 0, this agentevals needs {SCHEMA_VERSION}: run "
                                         r"'agentevals store migrate --store URL'"):
        connect(url)
    db = connect(url, migrate=True)
    assert db.schema_version() == SCHEMA_VERSION
    db.close()
    connect(url).close()


def test_a_store_of_0_12_0_is_upgraded_by_migration_2(tmp_path, postgres_server):
    """Schema 1 (agentevals 0.12.0) gains the cases-by-id index: SQLite on open, Postgres on `store migrate`."""
    from agentevals.store._db import MIGRATIONS

    for location in (str(tmp_path / "old.sqlite"), postgres_server.create_database("from_0_12_0")):
        db = connect(location, migrate=False)
        db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, "
                   "description TEXT NOT NULL, applied_at TEXT NOT NULL)")
        version, description, statements = MIGRATIONS[0]
        for statement in statements:
            db.execute(statement)
        db.execute("INSERT INTO schema_migrations VALUES (?, ?, 'then')", (version, description))
        db.conn.commit()
        db.close()
        if location.startswith("postgresql://"):
            with pytest.raises(StoreError, match=rf"is at schema version 1, this agentevals needs {SCHEMA_VERSION}"):
                connect(location)
            db = connect(location, migrate=False)
            assert db.migrate() == list(range(2, SCHEMA_VERSION + 1))
            db.close()
        db = connect(location)
        assert db.schema_version() == SCHEMA_VERSION
        db.close()


def test_unreachable_postgres_is_one_line(postgres_server):
    url = postgres_server.url.rsplit(":", 1)[0] + ":1/postgres"
    with pytest.raises(StoreError, match=r"^run store postgresql://agentevals@127\.0\.0\.1:1/postgres: cannot connect: "):
        connect(url, timeout=2)


def test_passwords_never_appear_in_messages():
    assert redact_url("postgresql://ci:s3cret@db.internal:5432/evals") == "postgresql://ci:***@db.internal:5432/evals"
    assert redact_url("runs.sqlite") == "runs.sqlite"


def test_records_are_json_documents(tmp_path):
    store = RunStore.open(str(tmp_path / "r.sqlite"))
    run, _ = record(store, [HELM])
    (row,) = store.db.execute("SELECT case_json FROM cases WHERE run_id = ?", (run.run_id,))
    assert json.loads(row[0])["case_id"] == "3e289017fe03ffd7c4145316d2eb3d0d"
    store.close()


def test_unpinned_remote_evaluators_are_never_taken_from_the_cache(tmp_path):
    from agentevals.evaluators.base import BaseEvaluator, EvaluatorConfig
    from agentevals.evaluators.remote import RemoteEvaluator
    from agentevals.results import MetricResult

    unpinned = RemoteEvaluator(RemoteEvaluator.Config(name="r", ref="evaluators/x/x.py"), base_dir=tmp_path)
    pinned = RemoteEvaluator(RemoteEvaluator.Config(name="r", ref="evaluators/x/x.py", sha256="a" * 64),
                             base_dir=tmp_path)
    assert (unpinned.reproducible, pinned.reproducible) == (False, True)

    calls: list[str] = []

    class Counting(BaseEvaluator):
        name = "counting"
        volatile = False

        @property
        def reproducible(self) -> bool:
            return not self.volatile

        async def evaluate(self, ctx):
            calls.append(self.config.name)
            return MetricResult.scored(self.config.name, 1.0, 0.5, type=self.name)

    def counting(name: str, volatile: bool) -> Counting:
        ev = Counting(EvaluatorConfig(name=name, type="counting"), base_dir=tmp_path)
        ev.volatile = volatile
        return ev

    store = RunStore.open(str(tmp_path / "r.sqlite"))
    for _ in range(2):
        evaluators = [counting("steady", False), counting("volatile", True)]
        reuse = StoreReuse(store)
        consumer = StoreConsumer(store, new_run_id(), meta=META, reuse=reuse)
        asyncio.run(run_evaluation([HELM], evaluators, consumers=[consumer], reuse=reuse))
    assert calls == ["steady", "volatile", "volatile"]
    store.close()


def test_a_store_password_on_the_command_line_is_not_recorded(postgres_url):
    import subprocess
    import sys

    url = postgres_url.replace("agentevals@", "agentevals:hunter2@")  # trust auth: any password connects
    subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "-e", ES_HELM, "--store", url, "-o", "summary"],
                   capture_output=True, text=True, timeout=120, check=True)
    listed = subprocess.run([sys.executable, "-m", "agentevals", "runs", "list", "--json", "--store", url],
                            capture_output=True, text=True, timeout=60, check=True)
    (run,) = json.loads(listed.stdout)
    assert "hunter2" not in listed.stdout
    assert run["command"].endswith(f"--store {url.replace(':hunter2@', ':***@')} -o summary")


def test_the_store_keeps_no_secret(tmp_path, monkeypatch):
    from agentevals.results import CaseResult, MetricResult

    monkeypatch.setenv("JUDGE_API_KEY", "s3cr3t-judge-value")
    store = RunStore.open(str(tmp_path / "r.sqlite"))
    store.begin_run("r1", started_at="2026-01-01T00:00:00.000Z",
                    **{**META, "command": "agentevals run --store postgresql://ci:hunter2@db/evals"})
    case = CaseResult(case_id="c", trace_ids=["c"], sources=["t.json"], metrics=[
        MetricResult.errored("judge", "401 Unauthorized for key s3cr3t-judge-value", details={"k": "s3cr3t-judge-value"})])
    store.record_case("r1", 0, case, {})
    dumped = "\n".join(str(row) for table in ("runs", "cases", "metric_results")
                       for row in store.db.execute(f"SELECT * FROM {table}"))
    assert "s3cr3t-judge-value" not in dumped and "hunter2" not in dumped
    (loaded,) = store.load_run("r1").cases
    assert loaded.metrics[0].error == "401 Unauthorized for key ***"
    assert store.get_run("r1").command == "agentevals run --store postgresql://ci:***@db/evals"
    store.close()


def test_a_batch_is_checked_for_secrets_at_once_and_only_its_secret_rows_are_redacted(store_url):
    """``record_cases`` encodes a batch's rows and scans them for secrets together: a token in one row of many
    is still hidden, the other rows are stored as they are; what JSON cannot say (NaN) is null, an integer past
    64 bits and a non-string key are kept (the stdlib writes what orjson refuses)."""
    from agentevals.results import CaseResult, MetricResult

    store = RunStore.open(store_url)
    store.begin_run("r1", started_at="2026-01-01T00:00:00.000Z", **META)
    token = "ghp_" + "A" * 36
    cases = [CaseResult(case_id=f"c{i}", trace_ids=[f"t{i}"], sources=["t.json"], metrics=[
        MetricResult.errored("judge", f"401 for {token}" if i == 37 else "timed out after 30 s",
                             details={"n": i, "big": 2**70 if i == 5 else i, "ratio": float("nan") if i == 6 else 0.5})])
        for i in range(300)]
    store.record_cases("r1", [(i, case, {}) for i, case in enumerate(cases)])
    dumped = "\n".join(str(row) for row in store.db.execute("SELECT case_json, metric_json FROM cases JOIN metric_results "
                                                             "USING (run_id, idx)"))
    assert token not in dumped and dumped.count("***") == 1
    loaded = [case for _, case in store.load_cases("r1")]
    assert loaded[37].metrics[0].error == "401 for ***"
    assert [c.metrics[0].error for c in loaded[:3]] == ["timed out after 30 s"] * 3
    assert loaded[5].metrics[0].details["big"] == 2**70 and loaded[6].metrics[0].details["ratio"] is None
    assert [c.case_id for c in loaded] == [f"c{i}" for i in range(300)]
    store.close()


def test_cases_read_by_index_carry_only_their_own_labels(store_url):
    """``load_cases(indexes=)`` (``--resume``/``--rerun-failed`` read a stored run a chunk at a time) reads the
    labels of those cases only, each on its own case."""
    from agentevals.results import CaseResult, MetricResult

    store = RunStore.open(store_url)
    store.begin_run("r1", started_at="2026-01-01T00:00:00.000Z", **META)
    cases = [CaseResult(case_id=f"c{i}", trace_ids=[f"t{i}"], sources=["t.json"],
                        metrics=[MetricResult.scored("m", 1.0, 0.5)]) for i in range(6)]
    store.record_cases("r1", [(i, case, {}) for i, case in enumerate(cases)])
    for i in (1, 2, 4):
        store.add_label("r1", i, verdict="fail", note=f"note {i}")
    chunk = store.load_cases("r1", indexes=[2, 3, 4])
    assert [(i, c.case_id, [label.note for label in c.labels]) for i, c in chunk] == [
        (2, "c2", ["note 2"]), (3, "c3", []), (4, "c4", ["note 4"])]
    assert store.load_cases("r1", indexes=[]) == []
    store.close()


def test_case_rows_are_copied_to_other_positions_of_another_run(store_url):
    """``copy_case_rows`` (the cases ``--rerun-failed`` takes as stored): each case's rows, work keys and trace ids
    land at its new position, replacing what was there; the source run is unchanged."""
    from agentevals.results import CaseResult, MetricResult

    store = RunStore.open(store_url)
    for run_id in ("old", "new"):
        store.begin_run(run_id, started_at="2026-01-01T00:00:00.000Z", **META)

    def case(name: str, score: float) -> CaseResult:
        return CaseResult(case_id=name, trace_ids=[f"t-{name}", f"u-{name}"], sources=["t.json"],
                          metrics=[MetricResult.scored("a", score, 0.5), MetricResult.scored("b", 1 - score, 0.5)])

    store.record_cases("old", [(i, case(f"c{i}", i / 10), {0: f"k{i}", 1: f"j{i}"}) for i in range(4)])
    store.record_cases("new", [(1, case("placeholder", 0.0), {})])
    store.copy_case_rows("old", "new", [(3, 0), (0, 1), (2, 2)])
    copied = store.load_cases("new")
    assert [(i, c.case_id) for i, c in copied] == [(0, "c3"), (1, "c0"), (2, "c2")]
    old = dict(store.load_cases("old"))
    assert [c for _, c in copied] == [old[3], old[0], old[2]]
    assert store.lookup("k3", run_id="new") == old[3].metrics[:1] and store.lookup("j0", run_id="new") == old[0].metrics[1:]
    assert [(i, c.case_id) for i, c in store.load_cases("old")] == [(0, "c0"), (1, "c1"), (2, "c2"), (3, "c3")]
    store.close()
