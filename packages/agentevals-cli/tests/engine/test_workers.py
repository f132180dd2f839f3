"""Persistent evaluator workers (protocol 1.2) in real runs: reuse, a killed worker, a hung one, old evaluators."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from support.probe_workers import alive, pids, probe_evaluators, rows, run_copies

TARGET = f"{4:032x}"  # the 4th generated trace

WORKER = """\
import os, sys, time
from pathlib import Path
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator

LOG = Path(__file__).with_name("pids.log")

@evaluator
def probe(input: EvalInput) -> EvalResult:
    trace = input.invocations[0].trace_id
    with LOG.open("a") as log:
        log.write(f"{os.getpid()} {trace}\\n")
    if trace == TARGET:
        Path(__file__).with_name("target.pid").write_text(str(os.getpid()))
        time.sleep(120)
    return EvalResult(score=1.0)

if __name__ == "__main__":
    probe.run()
"""

OLD_SDK = """\
# An evaluator built on a 1.1 SDK: reads stdin to its end, answers 1.1, exits.
import agentevals_evaluator_sdk.decorator as sdk
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator
from agentevals_evaluator_sdk.protocol import negotiate

sdk.negotiate = lambda theirs: negotiate(theirs, "1.1")

@evaluator
def old(input: EvalInput) -> EvalResult:
    return EvalResult(score=1.0)

if __name__ == "__main__":
    old.run()
"""


def setup(tmp_path: Path, source: str, timeout: float = 60) -> tuple[list, object]:
    (tmp_path / "probe.py").write_text(source.replace("TARGET", repr(TARGET)))
    return probe_evaluators(tmp_path, "probe.py", timeout)


def test_one_worker_process_answers_many_evaluations(tmp_path):
    evaluators, options = setup(tmp_path, WORKER.replace("if trace == TARGET", "if False"))
    result = run_copies(tmp_path, evaluators, options, n=12)
    assert [m.status.value for c in result.cases for m in c.metrics] == ["PASSED"] * 12
    used = set(pids(tmp_path).values())
    assert 1 <= len(used) <= 2  # concurrency 2: at most two workers
    assert not any(alive(pid) for pid in used)  # closed at the end of the run


def test_a_worker_killed_mid_run_fails_only_its_evaluation(tmp_path):
    evaluators, options = setup(tmp_path, WORKER)
    pidfile = tmp_path / "target.pid"

    def kill_when_started() -> None:
        end = time.monotonic() + 60
        while not pidfile.exists() and time.monotonic() < end:
            time.sleep(0.02)
        time.sleep(0.1)
        os.kill(int(pidfile.read_text()), signal.SIGKILL)

    killer = threading.Thread(target=kill_when_started)
    killer.start()
    result = run_copies(tmp_path, evaluators, options)
    killer.join()
    by_case = rows(result)
    assert len(by_case) == 10
    assert (by_case[TARGET].status.value, by_case[TARGET].error) == (
        "ERROR", "the worker process was killed by signal 9 before answering")
    assert all(m.status.value == "PASSED" for case_id, m in by_case.items() if case_id != TARGET)
    assert int(pidfile.read_text()) not in [pid for trace, pid in pids(tmp_path).items() if trace > TARGET]


def test_a_hung_evaluation_is_killed_at_its_deadline_and_its_worker_replaced(tmp_path):
    # 8 s: the other cases' workers start (a Python and its imports) well within it on a loaded machine.
    evaluators, options = setup(tmp_path, WORKER, timeout=8)
    result = run_copies(tmp_path, evaluators, options)  # the hung one never answers: only its deadline ends the run
    by_case = rows(result)
    assert (by_case[TARGET].status.value, by_case[TARGET].error) == ("ERROR", "timed out after 8s while running probe.py")
    assert all(m.status.value == "PASSED" for case_id, m in by_case.items() if case_id != TARGET)
    hung = int((tmp_path / "target.pid").read_text())
    assert not alive(hung)
    later = [pid for trace, pid in pids(tmp_path).items() if trace > TARGET]
    assert later and hung not in later


def test_an_evaluator_on_an_older_sdk_ignores_the_offer_and_runs_once_per_evaluation(tmp_path):
    evaluators, options = setup(tmp_path, OLD_SDK)
    result = run_copies(tmp_path, evaluators, options, n=4)
    assert [m.score for c in result.cases for m in c.metrics] == [1.0] * 4
    backend = evaluators[0].evaluator._backend
    assert backend._workers.started == 4  # one process per evaluation, as in 1.0


def test_without_persistent_workers_every_evaluation_is_a_new_process(tmp_path):
    evaluators, options = setup(tmp_path, WORKER.replace("if trace == TARGET", "if False"))
    options.persistent_workers = False
    run_copies(tmp_path, evaluators, options, n=5)
    assert len(set(pids(tmp_path).values())) == 5


def test_a_worker_gets_the_minimal_environment_and_the_containment_tag(tmp_path, monkeypatch):
    monkeypatch.setenv("CI_SECRET_TOKEN", "do-not-leak")
    source = WORKER.replace("return EvalResult(score=1.0)",
                            "return EvalResult(score=1.0, details={'secret': os.environ.get('CI_SECRET_TOKEN'), "
                            "'tagged': 'AGENTEVALS_EVALUATION' in os.environ})")
    evaluators, options = setup(tmp_path, source.replace("if trace == TARGET", "if False"))
    result = run_copies(tmp_path, evaluators, options, n=3)
    assert [m.details for c in result.cases for m in c.metrics] == [{"secret": None, "tagged": True}] * 3
    assert evaluators[0].evaluator._backend._workers.started <= 2  # concurrency 2: at most two workers


def test_result_lines_larger_than_the_read_buffer_are_read_whole(tmp_path):
    # 3 MiB of details per result: more than the stdout reader buffers (1 MiB, so a flooding program waits
    # for us instead of growing our memory), less than the longest result line (256 MiB).
    source = WORKER.replace("if trace == TARGET", "if False").replace(
        "return EvalResult(score=1.0)", "return EvalResult(score=1.0, details={'pad': 'x' * (3 << 20)})")
    evaluators, options = setup(tmp_path, source)
    result = run_copies(tmp_path, evaluators, options, n=4)
    metrics = [m for c in result.cases for m in c.metrics]
    assert [m.status.value for m in metrics] == ["PASSED"] * 4, [m.error for m in metrics]
    assert all(len(m.details["pad"]) == 3 << 20 for m in metrics)
    assert 1 <= len(set(pids(tmp_path).values())) <= 2  # answered by persistent workers, not one process each
