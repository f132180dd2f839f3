"""Fixtures for live mode: ``serve`` starts real ``agentevals serve`` processes, ``otlp_recorder`` a
loopback OTLP backend stand-in."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed")
pytest.importorskip("grpc", reason="the serve extra is not installed")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable

from support.live_server import (
    EXAMPLES,
    Server,
    agentevals,
    listed_runs,
    start_server,
    stop_server,
)
from support.otlp_recorder import OtlpRecorder


@pytest.fixture
def serve(request) -> Iterator[Callable[..., Server]]:
    """Factory: ``server = serve("--eval-sets", dir, …)``; every server started is stopped after the test."""
    started: list[Server] = []

    def factory(*args: str, **kwargs: Any) -> Server:
        server = start_server(*args, **kwargs)
        started.append(server)
        return server

    yield factory
    for server in started:
        stop_server(server.process)


@pytest.fixture(scope="module")
def filled_store(tmp_path_factory) -> tuple[str, str, str]:
    """A run store with two real `agentevals run`s of the shipped helm sample: against its own eval set
    (passes), then against the other shipped eval set (fails: a regression of the same case).
    Returns (store, first run id, second run id)."""
    store = str(tmp_path_factory.mktemp("filled") / "runs.sqlite")
    ids = []
    for eval_set, code in (("eval_set_helm.json", 0), ("evalset_helm_3_2026-02-23.json", 1)):
        result = agentevals("run", str(EXAMPLES / "traces/helm.json"), "-e", str(EXAMPLES / "evalsets" / eval_set),
                            "-m", "tool_trajectory_avg_score", "-m", "response_match_score", "--store", store)
        assert result.returncode == code, result.stderr
        ids.append(listed_runs(store)[0]["run_id"])
    return store, ids[0], ids[1]


@pytest.fixture
def otlp_recorder() -> Iterator[OtlpRecorder]:
    """A loopback HTTP server that answers 200 to every POST and records it (an OTLP backend stand-in)."""
    with OtlpRecorder() as recorder:
        yield recorder
