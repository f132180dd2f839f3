"""JavaScript evaluators in real runs (real ``node``): one written with the JS SDK
(packages/agentevals-evaluator-sdk-js) is a persistent worker (protocol 1.2) that serves many
evaluations per process, is replaced after a crash and keeps each evaluation's deadline; a plain
stdin/stdout script still runs once per evaluation."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from agentevals.api import prepare_run
from support.probe_workers import alive, pids, probe_evaluators, rows, run_copies

REPO = Path(__file__).resolve().parents[4]
SDK = REPO / "packages" / "agentevals-evaluator-sdk-js" / "index.js"
TARGET = f"{4:032x}"  # the 4th generated trace

SDK_WORKER = """\
import { appendFileSync, writeFileSync } from "node:fs";
import { evaluator } from "SDK_URL";

const here = new URL(".", import.meta.url);

evaluator(async (input) => {
  const trace = input.invocations[0].trace_id;
  appendFileSync(new URL("pids.log", here), `${process.pid} ${trace}\\n`);
  if (trace === "TARGET") {
    writeFileSync(new URL("target.pid", here), String(process.pid));
    MISBEHAVE
  }
  return { score: 1, details: { pid: process.pid } };
}, { name: "probe" }).run();
"""

PLAIN = """\
const fs = require("fs");
const path = require("path");
const input = JSON.parse(fs.readFileSync(0, "utf8"));
fs.appendFileSync(path.join(__dirname, "pids.log"), `${process.pid} ${input.invocations[0].trace_id}\\n`);
console.log(JSON.stringify({ score: 1 }));
"""


@pytest.fixture(autouse=True)
def _node() -> None:
    if not shutil.which("node"):
        pytest.skip("node is not installed (needed for JavaScript evaluators)")


def setup(tmp_path: Path, misbehave: str = "", *, plain: bool = False, timeout: float = 60):
    if plain:
        (tmp_path / "probe.js").write_text(PLAIN)
        name = "probe.js"
    else:
        source = SDK_WORKER.replace("SDK_URL", SDK.as_uri()).replace("TARGET", TARGET).replace("MISBEHAVE", misbehave)
        (tmp_path / "probe.mjs").write_text(source)
        name = "probe.mjs"
    return probe_evaluators(tmp_path, name, timeout)


def test_a_js_sdk_evaluator_serves_many_evaluations_per_process(tmp_path):
    evaluators, options = setup(tmp_path)
    result = run_copies(tmp_path, evaluators, options, n=12)
    assert [m.status.value for c in result.cases for m in c.metrics] == ["PASSED"] * 12
    used = set(pids(tmp_path).values())
    assert 1 <= len(used) <= 2  # concurrency 2: at most two workers for twelve evaluations
    assert evaluators[0].evaluator._backend._workers.started == len(used)
    assert not any(alive(pid) for pid in used)  # closed at the end of the run


def test_a_crashed_js_worker_fails_only_its_evaluation_and_is_replaced(tmp_path):
    evaluators, options = setup(tmp_path, "process.exit(7);")
    result = run_copies(tmp_path, evaluators, options)
    by_case = rows(result)
    assert len(by_case) == 10
    assert (by_case[TARGET].status.value, by_case[TARGET].error) == (
        "ERROR", "the worker process exited with code 7 before answering")
    assert all(m.status.value == "PASSED" for case_id, m in by_case.items() if case_id != TARGET)
    crashed = int((tmp_path / "target.pid").read_text())
    later = [pid for trace, pid in pids(tmp_path).items() if trace > TARGET]
    assert later and crashed not in later
    assert evaluators[0].evaluator._backend._workers.started >= 2


def test_a_hung_js_evaluation_hits_its_deadline_and_the_rest_go_on(tmp_path):
    # 8 s: the other cases' workers start well within it on a loaded machine.
    evaluators, options = setup(tmp_path, "await new Promise((resolve) => setTimeout(resolve, 120000));", timeout=8)
    result = run_copies(tmp_path, evaluators, options)
    by_case = rows(result)
    assert (by_case[TARGET].status.value, by_case[TARGET].error) == ("ERROR", "timed out after 8s while running probe.mjs")
    assert all(m.status.value == "PASSED" for case_id, m in by_case.items() if case_id != TARGET)
    hung = int((tmp_path / "target.pid").read_text())
    assert not alive(hung)
    later = [pid for trace, pid in pids(tmp_path).items() if trace > TARGET]
    assert later and hung not in later


def test_a_plain_js_script_still_runs_once_per_evaluation(tmp_path):
    evaluators, options = setup(tmp_path, plain=True)
    result = run_copies(tmp_path, evaluators, options, n=5)
    assert [m.score for c in result.cases for m in c.metrics] == [1.0] * 5
    assert len(set(pids(tmp_path).values())) == 5
    assert evaluators[0].evaluator._backend._workers.started == 5  # offered each time, never accepted


@pytest.mark.parametrize("name", ["js_eval.js", "ts_eval.ts"])
def test_a_scaffolded_js_or_ts_evaluator_is_a_persistent_worker(tmp_path, name, monkeypatch):
    from agentevals.evaluator import scaffold_evaluator
    from agentevals.execution.runtimes import NodeRuntime

    if name.endswith(".ts") and NodeRuntime().node_version() < NodeRuntime.STRIP_TYPES_SINCE:
        tsx = REPO / "tests" / "node" / "node_modules" / ".bin" / "tsx"
        if not tsx.exists():
            pytest.skip("tsx is not installed: run `npm ci` in tests/node")
        monkeypatch.setenv("AGENTEVALS_TSX", str(tsx))
    code = scaffold_evaluator(name, output_dir=tmp_path)[0]
    (tmp_path / "package.json").unlink(missing_ok=True)
    (code.parent / "package.json").unlink(missing_ok=True)  # tsx comes from AGENTEVALS_TSX here, not npm
    cfg = tmp_path / "eval_config.yaml"
    cfg.write_text(f"evaluators:\n  - {{name: gen, type: code, path: {code.relative_to(tmp_path)}, timeout: 60}}\n")
    evaluators, options, _ = prepare_run(config=cfg, group_by="trace", concurrency=1)
    result = run_copies(tmp_path, evaluators, options, n=6)
    assert [(m.status.value, m.score) for c in result.cases for m in c.metrics] == [("PASSED", 1.0)] * 6
    assert evaluators[0].evaluator._backend._workers.started == 1  # one process for six evaluations


def test_a_js_sdk_evaluator_spoken_to_in_1_1_runs_once_per_evaluation(tmp_path):
    (tmp_path / "evaluator.yaml").write_text("name: probe\nprotocol_version: '1.1'\n")
    evaluators, options = setup(tmp_path)
    result = run_copies(tmp_path, evaluators, options, n=4)
    assert [m.status.value for c in result.cases for m in c.metrics] == ["PASSED"] * 4
    assert len(set(pids(tmp_path).values())) == 4  # no worker offer before 1.2: one process each, as in 1.0
