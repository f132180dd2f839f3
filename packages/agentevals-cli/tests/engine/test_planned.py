"""The run's size while it runs: an estimate from the reading's position, exact once the input is read."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentevals.api import prepare_run
from agentevals.engine import _Planner, run_evaluation
from agentevals.engine.consumers import RunConsumer
from agentevals.traces.readers import _stream
from support.generate import replicate

N = 100
"""Traces per run: more than the engine's backlog at concurrency 1 (68 cases), so cases finish while the
input is still being read."""


@pytest.fixture(autouse=True)
def every_estimate(monkeypatch):
    """Every change of the estimate reaches the consumers (no 0.1 s throttle: the tests read them all)."""
    monkeypatch.setattr(_Planner, "EVERY", 0.0)


class Planned(RunConsumer):
    """Records ``("planned", total, estimated)`` and ``("case", index)`` in the order they come."""

    def __init__(self) -> None:
        self.events: list[tuple] = []

    def cases_planned(self, total, estimated):
        self.events.append(("planned", total, estimated))

    def case_finished(self, index, case):
        self.events.append(("case", index))

    def estimates(self) -> list[int]:
        return [e[1] for e in self.events if e[0] == "planned" and e[2]]

    def cases_while_estimated(self) -> int:
        """Cases that finished while the latest total was an estimate (the input was still being read)."""
        count, estimated = 0, False
        for event in self.events:
            if event[0] == "planned":
                estimated = event[2]
            elif estimated:
                count += 1
        return count


def one_file(tmp_path: Path, session_of=None) -> list[Path]:
    return [replicate(tmp_path / "all.json", N, session_of=session_of)]


def a_folder(tmp_path: Path, session_of=None, per_file: int = 1) -> list[Path]:
    folder = tmp_path / "traces"
    folder.mkdir()
    return [replicate(folder / f"{k:03d}.json", per_file,
                      session_of=None if session_of is None else (lambda i, k=k: session_of(k * per_file + i)))
            for k in range(N // per_file)]


def run(inputs: list[Path], *, group_by: str = "auto") -> tuple[Planned, object]:
    evaluators, options, _ = prepare_run(metrics=["tool_trajectory_avg_score"], concurrency=1, group_by=group_by)
    planned = Planned()
    result = asyncio.run(run_evaluation(inputs, evaluators, options=options, consumers=[planned]))
    return planned, result


def close(estimates: list[int], truth: int) -> None:
    """Traces of one size spread evenly: the first estimates are rough (a streamed file's position runs a
    read buffer ahead), the later ones close."""
    assert estimates and all(0.5 * truth <= e <= 2 * truth for e in estimates), estimates
    assert 0.9 * truth <= estimates[-1] <= 1.1 * truth, estimates


def check_end(planned: Planned, result, cases: int) -> None:
    assert len(result.cases) == cases
    assert [e for e in planned.events if e[0] == "planned"][-1] == ("planned", cases, False)
    assert (result.planned, result.planned_estimated) == (cases, False)
    assert [e for e in planned.events if e[0] == "planned" and not e[2]] == [("planned", cases, False)]


@pytest.mark.parametrize("layout", ["streamed file", "whole file", "folder"])
def test_traces_without_session_ids_get_an_estimate_while_the_input_is_read(tmp_path, monkeypatch, layout):
    # 100 helm traces are 14 MB: streamed by default; read whole when the threshold says so
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0 if layout == "streamed file" else 1 << 40)
    no_session = lambda i: None  # noqa: E731
    inputs = a_folder(tmp_path, no_session) if layout == "folder" else one_file(tmp_path, no_session)
    planned, result = run(inputs)
    # The engine holds at most 68 cases in flight: cases finish while the rest of the input is read, and
    # the total is an estimate from the 5th trace (5 % of the input) until the input ends.
    assert planned.cases_while_estimated() > 0, planned.events
    close(planned.estimates(), N)
    check_end(planned, result, N)


@pytest.mark.parametrize("layout", ["streamed file", "folder"])
def test_conversations_get_an_estimate_before_the_input_ends(tmp_path, monkeypatch, layout):
    """Traces with session ids wait for the end of the input (a later trace may join them): no case can
    finish before, but the total is estimated from the sessions seen so far."""
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)
    four_each = lambda i: f"conv-{i // 4}"  # noqa: E731
    inputs = a_folder(tmp_path, four_each, per_file=4) if layout == "folder" else one_file(tmp_path, four_each)
    planned, result = run(inputs, group_by="conversation")
    first_case = next(i for i, e in enumerate(planned.events) if e[0] == "case")
    assert planned.estimates() and all(e[0] == "planned" for e in planned.events[:first_case])
    close(planned.estimates(), N // 4)
    check_end(planned, result, N // 4)


def test_interleaved_conversations_level_off(tmp_path, monkeypatch):
    """Ten conversations spread through the whole file: once every session id has come, the estimate stops
    growing with the reading (it does not scale ten sessions by the part of the file read)."""
    monkeypatch.setattr(_stream, "STREAM_THRESHOLD", 0)
    planned, result = run(one_file(tmp_path, lambda i: f"conv-{i % 10}"))
    assert planned.estimates()[-1] <= 12, planned.estimates()
    check_end(planned, result, 10)


def test_mixed_traces_count_cases_formed_and_conversations_waiting(tmp_path):
    """Under auto, traces without a session id are cases at once and those with one wait: the estimate
    counts both. (Cases are emitted in input order, so none reaches the consumers before the first
    conversation is complete: here, at the end of the input.)"""
    total = N // 2 + len({i // 5 for i in range(1, N, 2)})
    planned, result = run(one_file(tmp_path, lambda i: f"conv-{i // 5}" if i % 2 else None))
    first_case = next(i for i, e in enumerate(planned.events) if e[0] == "case")
    assert planned.estimates() and all(e[0] == "planned" for e in planned.events[:first_case])
    close(planned.estimates(), total)
    check_end(planned, result, total)
