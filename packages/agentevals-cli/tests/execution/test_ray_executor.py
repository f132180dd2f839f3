"""``--executor ray`` on a local Ray instance started here: the same results as the local executor
(builtin metrics, AgentV checks, ``type: python`` and SDK code evaluators, conversations, input errors),
evaluator files shipped to the actors, and a worker process killed mid-run costs no row."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'agentevals-cli[ray]'")

import agentevals  # noqa: E402
from agentevals.api import prepare_run  # noqa: E402
from agentevals.engine import run_evaluation  # noqa: E402
from agentevals.engine.consumers import RunConsumer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.sdk_evaluators import SLOW_SDK_EVALUATOR  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[4]
HELM = REPO / "examples" / "traces" / "helm.json"
EVAL_SET = REPO / "examples" / "evalsets" / "eval_set_helm.json"

PYTHON_EVALUATOR = '''\
from agentevals import Evaluator


class AnswerLength(Evaluator):
    def filter_traces(self, traces):
        return traces

    def __call__(self, traces, final_answer=None):
        return {"score": min(1.0, len(final_answer or "") / 200)}
'''


def _kill_own_ray_children() -> None:
    """Kill this process's descendants whose command is Ray's (gcs_server, raylet, …), by pid."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parents[int(stat.parent.name)] = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    ours, grew = {os.getpid()}, True
    while grew:
        found = {pid for pid, ppid in parents.items() if ppid in ours} - ours
        ours |= found
        grew = bool(found)
    for pid in ours - {os.getpid()}:
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[:2]
            if any(b"ray" in part for part in command):
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture(scope="module")
def local_ray():
    """One local instance for the module (starting one costs ~10 s on two cores), loopback only."""
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process")
    for attempt in range(3):
        try:
            ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False,
                     configure_logging=False)
            break
        except Exception as exc:
            # Ray gives its local node a fixed 30 s to register; a loaded machine can take longer. Try again
            # after ending what this start left running (our own child processes of Ray, by pid).
            if attempt == 2 or "timed out during startup" not in str(exc):
                raise
            ray.shutdown()
            _kill_own_ray_children()
    yield ray
    ray.shutdown()


def generate(directory: Path, n: int, *, conversations: int = 0) -> Path:
    """``n`` copies of the helm trace with distinct ids; the first ``2 * conversations`` pair up into
    conversations of two traces (shared session id)."""
    base = json.loads(HELM.read_text())["data"][0]
    traces = []
    for i in range(n):
        trace = copy.deepcopy(base)
        trace["traceID"] = f"{i + 1:032x}"
        session = f"conv-{i // 2}" if i < 2 * conversations else f"session-{i}"
        for span in trace["spans"]:
            span["traceID"] = trace["traceID"]
            span["startTime"] += i  # distinct start times keep a conversation's order defined
            for tag in span["tags"]:
                if tag["key"] in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id"):
                    tag["value"] = session
        traces.append(trace)
    path = directory / f"traces_{n}.json"
    path.write_text(json.dumps({"data": traces}))
    return path


def project(directory: Path, *, slow: bool = False, executor: str = "local") -> Path:
    """An eval_config.yaml with evaluators given by relative paths (so they must travel to the actors)."""
    examples = REPO / "examples" / "evaluators" / "response_quality.py"
    (directory / "evaluators" / "quality").mkdir(parents=True)
    (directory / "evaluators" / "quality" / "quality.py").write_text(
        SLOW_SDK_EVALUATOR if slow else examples.read_text())
    (directory / "evaluators" / "quality" / "evaluator.yaml").write_text("name: quality\n")
    (directory / "length.py").write_text(PYTHON_EVALUATOR)
    config = directory / "eval_config.yaml"
    config.write_text(f"""\
evaluators:
  - name: tool_trajectory_avg_score
    type: builtin
  - name: quality
    type: code
    path: evaluators/quality/quality.py
    executor: {executor}
  - name: length
    type: python
    path: length.py:AnswerLength
  - type: contains
    value: helm
""")
    return config


def without_timings(doc: Any) -> Any:
    """A JSON document without its ``duration_ms`` fields and the run's times and id."""
    if isinstance(doc, dict):
        return {k: without_timings(v) for k, v in doc.items()
                if k not in ("duration_ms", "started_at", "finished_at", "run_id")}
    return [without_timings(v) for v in doc] if isinstance(doc, list) else doc


def comparable(run: Any) -> dict[str, Any]:
    """A run's JSON without timings."""
    return without_timings(run.model_dump(mode="json"))


def test_ray_results_equal_local_results(local_ray, tmp_path):
    traces = generate(tmp_path, 20, conversations=3)
    config = project(tmp_path)
    inputs = [str(traces), str(tmp_path / "missing.json")]
    local = agentevals.evaluate(inputs, eval_set=EVAL_SET, config=config)
    remote = agentevals.evaluate(inputs, eval_set=EVAL_SET, config=config, executor="ray")
    assert len(local.cases) == 17  # 14 single traces + 3 conversations
    assert {m.status.value for c in local.cases for m in c.metrics} >= {"PASSED"}
    assert local.input_errors and local.input_errors[0].source.endswith("missing.json")
    assert comparable(remote) == comparable(local)


def test_per_evaluator_ray_executor_equals_local(local_ray, tmp_path):
    traces = generate(tmp_path, 6)
    local = agentevals.evaluate([str(traces)], eval_set=EVAL_SET, config=project(tmp_path / "a"))
    remote = agentevals.evaluate([str(traces)], eval_set=EVAL_SET, config=project(tmp_path / "b", executor="ray"))
    assert [m.name for m in remote.cases[0].metrics][:2] == ["tool_trajectory_avg_score", "quality"]
    assert comparable(remote) == comparable(local)


def _children(pid: int) -> list[str]:
    """Child process ids of ``pid`` (any of its threads), from /proc."""
    found: list[str] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += (task / "children").read_text().split()
        except OSError:
            continue
    return found


def kill_a_busy_worker(killed: list[int], stop: threading.Event) -> None:
    """kill -9 the first evaluation actor (pid from Ray) caught running an evaluator process: mid-batch."""
    deadline = time.monotonic() + 120
    while not stop.is_set() and time.monotonic() < deadline:
        names = [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
                 if a["name"].startswith("agentevals-eval-")]
        for name in names:
            try:
                pid = ray.get(ray.get_actor(name, namespace="agentevals").pid.remote(), timeout=5)
            except Exception:  # still starting
                continue
            if pid != os.getpid() and _children(pid):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see an actor's evaluator process")
def test_killed_worker_loses_no_row_and_duplicates_none(local_ray, tmp_path, caplog):
    traces = generate(tmp_path, 24)
    config = project(tmp_path, slow=True)
    seen: list[int] = []

    class Indexes(RunConsumer):
        def case_finished(self, index: int, case: Any) -> None:
            seen.append(index)

    killed: list[int] = []
    stop = threading.Event()
    killer = threading.Thread(target=kill_a_busy_worker, args=(killed, stop), daemon=True)
    evaluators, options, eval_set = prepare_run(eval_set=EVAL_SET, config=config, executor="ray")
    killer.start()
    try:
        remote = asyncio.run(run_evaluation([str(traces)], evaluators, eval_set=eval_set, options=options,
                                            consumers=[Indexes()]))
    finally:
        stop.set()
        killer.join()
    assert killed, "no busy worker was found to kill"
    assert "was lost" in caplog.text and "sending it again" in caplog.text
    assert seen == list(range(24))  # every case emitted once, in order
    assert [c.case_id for c in remote.cases] == [f"{i + 1:032x}" for i in range(24)]
    rows = [(c.case_id, m.name, m.status.value) for c in remote.cases for m in c.metrics]
    assert len(rows) == len(set(rows)) == 24 * 4
    # the lost batch ran again, to the end: no ERROR, and every copy of the trace scored alike
    assert "ERROR" not in {status for *_, status in rows}
    assert len({tuple((m.status, m.score) for m in c.metrics) for c in remote.cases}) == 1


def test_cli_executor_ray_prints_the_same_json_report(local_ray, tmp_path):
    from agentevals.cli import cli
    from click.testing import CliRunner

    traces = str(generate(tmp_path, 5))
    args = ["run", traces, "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score", "-o", "json",
            "--no-store"]  # the second run must run on Ray, not come from the result cache
    local = CliRunner().invoke(cli, args)
    remote = CliRunner().invoke(cli, [*args, "--executor", "ray"])
    assert remote.exit_code == local.exit_code == 0, remote.output
    assert without_timings(json.loads(remote.stdout)) == without_timings(json.loads(local.stdout))


def test_url_inputs_are_downloaded_by_the_reader_not_the_driver(local_ray, tmp_path):
    import functools
    import http.server

    traces = generate(tmp_path, 4)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None  # type: ignore[method-assign]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}"
        url, missing = f"{base}/{traces.name}", f"{base}/missing.json"
        remote = agentevals.evaluate([url, missing], eval_set=EVAL_SET, metrics=["tool_trajectory_avg_score"],
                                     executor="ray")
    finally:
        server.shutdown()
        server.server_close()
    local = agentevals.evaluate([str(traces)], eval_set=EVAL_SET, metrics=["tool_trajectory_avg_score"])
    assert [c.sources for c in remote.cases] == [[url]] * 4
    assert [e.source for e in remote.input_errors] == [missing]
    assert remote.input_errors[0].error.startswith(f"{missing}: cannot download: 404")
    for case in (*remote.cases, *local.cases):
        case.sources = []
    assert without_timings(remote.model_dump(mode="json")["cases"]) == \
        without_timings(local.model_dump(mode="json")["cases"])


class InMemoryLength(agentevals.Evaluator):
    """A MASEval-style class defined here, not in a file the actors could load: it travels by value."""

    def filter_traces(self, traces: dict[str, Any]) -> dict[str, Any]:
        return traces

    def __call__(self, traces: dict[str, Any], final_answer: Any = None) -> dict[str, Any]:
        return {"score": min(1.0, len(final_answer or "") / 100)}


def test_in_memory_python_evaluator_runs_in_the_actors(local_ray, tmp_path):
    traces = [str(generate(tmp_path, 3))]
    evaluator = agentevals.PythonEvaluator.from_class
    runs = [agentevals.evaluate(traces, evaluators=[evaluator(InMemoryLength)], executor=executor)
            for executor in ("local", "ray")]
    assert runs[0].cases[0].metrics[0].status.value in ("PASSED", "FAILED")
    assert comparable(runs[1]) == comparable(runs[0])


ENV_EVALUATOR = '''\
import os

from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator


@evaluator
def env_probe(input: EvalInput) -> EvalResult:
    seen = {name: os.environ.get(name) for name in ("RAY_TEST_LISTED", "RAY_TEST_UNLISTED")}
    return EvalResult(score=1.0, details=seen)


if __name__ == "__main__":
    env_probe.run()
'''


@pytest.mark.parametrize("executor", ["run", "evaluator"])
def test_secrets_follow_the_local_environment_rules(local_ray, tmp_path, monkeypatch, executor):
    monkeypatch.setenv("RAY_TEST_LISTED", "passed-on-purpose")
    monkeypatch.setenv("RAY_TEST_UNLISTED", "must-not-leak")
    (tmp_path / "probe.py").write_text(ENV_EVALUATOR)
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: probe\n    type: code\n    path: probe.py\n"
                      f"    env: [RAY_TEST_LISTED]\n    executor: {'ray' if executor == 'evaluator' else 'local'}\n")
    traces = [str(generate(tmp_path, 2))]
    local = agentevals.evaluate(traces, config=config)
    remote = agentevals.evaluate(traces, config=config, executor="ray" if executor == "run" else "local")
    expected = {"RAY_TEST_LISTED": "passed-on-purpose", "RAY_TEST_UNLISTED": None}
    for run in (local, remote):
        rows = [c.metrics[0] for c in run.cases]
        assert [m.details for m in rows] == [expected] * 2, [(m.status, m.error) for m in rows]


COUNTED_EVALUATOR = '''\
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator


@evaluator
def counted(input: EvalInput) -> EvalResult:
    with open(CALLS, "a") as calls:  # one line per evaluation that really ran
        calls.write("x\\n")
    return EvalResult(score=1.0)


if __name__ == "__main__":
    counted.run()
'''


def counted_project(directory: Path) -> tuple[Path, Path]:
    """A config with a builtin metric and an SDK evaluator that counts its evaluations in a file."""
    calls = directory / "calls.txt"  # beside the evaluator's folder: the result cache's key covers the folder
    (directory / "evaluator").mkdir(exist_ok=True)
    (directory / "evaluator" / "counted.py").write_text(f"CALLS = {str(calls)!r}\n" + COUNTED_EVALUATOR)
    config = directory / "eval_config.yaml"
    config.write_text("evaluators:\n  - {name: tool_trajectory_avg_score, type: builtin}\n"
                      "  - {name: counted, type: code, path: evaluator/counted.py}\n")
    return config, calls


def ran(calls: Path) -> int:
    return len(calls.read_text().splitlines()) if calls.exists() else 0


class ChosenReuse:
    """A ``ResultReuse`` with a stored row for chosen pairs: every evaluator of an even case, the builtin
    metric of a case whose number divides by 3. Keeps what the engine reports as produced in ``rows``."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str], list[Any]] = {}

    def lookup(self, case: Any, evaluator: Any) -> Any:
        from agentevals.results import MetricResult, Status

        number = int(case.case_id, 16)
        if number % 2 == 0 or (number % 3 == 0 and evaluator.name == "builtin"):
            return [MetricResult(name=evaluator.display_name, status=Status.PASSED, score=0.25,
                                 reason="from the store", type=evaluator.name)]
        return None

    def produced(self, case: Any, evaluator: Any, metrics: list[Any]) -> None:
        self.rows[(case.case_id, evaluator.display_name)] = metrics


def test_stored_results_are_applied_before_cases_go_to_ray(local_ray, tmp_path):
    """The reuse hook under --executor ray: a case whose every result is stored is not sent at all, one
    with some stored is sent to run only the others, and the hook hears of every row, as in a local run."""
    traces = generate(tmp_path, 12)
    config, calls = counted_project(tmp_path)

    def run(executor: str) -> tuple[Any, ChosenReuse, list[int]]:
        reuse = ChosenReuse()
        emitted: list[int] = []

        class Rows(RunConsumer):
            def case_finished(self, index: int, case: Any) -> None:
                produced = {id(m) for metrics in reuse.rows.values() for m in metrics}
                emitted.extend(id(m) for m in case.metrics if id(m) in produced)

        evaluators, options, eval_set = prepare_run(eval_set=EVAL_SET, config=config, executor=executor)
        result = asyncio.run(run_evaluation([str(traces)], evaluators, eval_set=eval_set, options=options,
                                            consumers=[Rows()], reuse=reuse))
        return result, reuse, emitted

    remote, reuse, emitted = run("ray")
    assert ran(calls) == 6  # the counted evaluator ran on the odd cases only
    stored = {(c.case_id, m.name) for c in remote.cases for m in c.metrics if m.reason == "from the store"}
    evens = {f"{n:032x}" for n in range(2, 13, 2)}
    assert stored == ({(case, name) for case in evens for name in ("tool_trajectory_avg_score", "counted")}
                      | {(f"{n:032x}", "tool_trajectory_avg_score") for n in (3, 9)})
    # every (case, evaluator) was reported produced, with the very rows the consumers got
    assert set(reuse.rows) == {(f"{n:032x}", name) for n in range(1, 13)
                                   for name in ("tool_trajectory_avg_score", "counted")}
    assert len(emitted) == 24

    local, _, _ = run("local")
    assert ran(calls) == 12
    assert comparable(remote) == comparable(local)


def test_cli_result_cache_under_executor_ray(local_ray, tmp_path):
    """Two runs with the run store: the second one's results all come from the store, nothing runs on
    Ray, and its JSON report is the first one's."""
    from agentevals.cli import cli
    from click.testing import CliRunner

    traces = str(generate(tmp_path, 6))
    config, calls = counted_project(tmp_path)
    args = ["run", traces, "-e", str(EVAL_SET), "-c", str(config), "-o", "json", "--executor", "ray",
            "--store", str(tmp_path / "runs.sqlite")]
    first = CliRunner().invoke(cli, args)
    assert first.exit_code == 0, first.output
    assert ran(calls) == 6
    second = CliRunner().invoke(cli, args)
    assert second.exit_code == 0, second.output
    assert ran(calls) == 6
    again, before = without_timings(json.loads(second.stdout)), without_timings(json.loads(first.stdout))
    reused = "12 results reused from the run store, not run again (--no-cache runs everything)"
    notes = again.pop("notes")  # the same bytes and settings: the whole input is served from the store
    assert reused in notes and any(n.startswith("1 file(s) served from the cache (run ") for n in notes), notes
    assert before.pop("notes") == [] and again == before
    with open(traces, "a") as fh:  # other bytes, the same traces: read on Ray, every result from the per-case cache
        fh.write("\n")
    third = CliRunner().invoke(cli, args)
    assert third.exit_code == 0, third.output
    assert ran(calls) == 6
    changed = without_timings(json.loads(third.stdout))
    assert changed.pop("notes") == [reused] and changed == before
    rerun = CliRunner().invoke(cli, [*args, "--no-cache"])
    assert rerun.exit_code == 0 and ran(calls) == 12


def test_late_logs_reach_the_same_traces_under_the_ray_reader(local_ray, tmp_path):
    """The Ray reader reads through ``trace_sources.resolve``, as a local run does: a logs file listed after
    the traces it belongs to (and not recognisable from its first bytes) gives the same cases."""
    genai = REPO / "packages" / "agentevals-cli" / "tests" / "data" / "traces" / "genai"
    logs = tmp_path / "late-logs.json"
    logs.write_text(json.dumps({"schema": "x", **json.loads(
        (genai / "langchain_openllmetry_events.otlp-logs.json").read_text())}))
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - type: contains\n    value: sunny\n")
    inputs = [str(genai / "langchain_openllmetry_events.otlp.json"), str(logs)]
    local = agentevals.evaluate(inputs, config=config)
    remote = agentevals.evaluate(inputs, config=config, executor="ray")
    assert local.cases[0].user_contents == ["What's the weather in Paris?"]  # only the log records say it
    assert comparable(remote) == comparable(local)


def test_sampling_and_filters_under_ray_equal_local(local_ray, tmp_path):
    """The admissions (filter, sample) travel to the actors with the run's options: the same rows as local,
    and no skipped row reaches the result cache's ``produced``."""
    traces = generate(tmp_path, 16)

    class Produced:
        def __init__(self) -> None:
            self.rows: dict[tuple[str, str], list[Any]] = {}

        def lookup(self, case: Any, evaluator: Any) -> Any:
            return None

        def produced(self, case: Any, evaluator: Any, metrics: list[Any]) -> None:
            self.rows[(case.case_id, evaluator.display_name)] = metrics

    def run(executor: str) -> tuple[list[tuple[str, str, str, str]], Produced]:
        reuse = Produced()
        evaluators, options, eval_set = prepare_run(eval_set=EVAL_SET, metrics=["tool_trajectory_avg_score"],
                                                    executor=executor)
        options.sample, options.filter = 0.6, 'not session_id == "session-1" and duration < 1h'
        result = asyncio.run(run_evaluation([str(traces)], evaluators, eval_set=eval_set, options=options,
                                            reuse=reuse))
        return [(c.case_id, m.status.value, m.reason or "", str(m.details.get("skipped")))
                for c in result.cases for m in c.metrics], reuse

    local, _ = run("local")
    remote, reuse = run("ray")
    assert remote == local
    kinds = [row[3] for row in local]
    assert kinds.count("filtered_out") == 1 and 0 < kinds.count("sampled_out") < 15 and "None" in kinds
    assert len(reuse.rows) == kinds.count("None")
