"""Fixtures for custom evaluators: an isolated cache, registries restored after each test, a real
EvalInput, real node/tsx, and loopback HTTP servers standing in for GitHub.

tsx for ``.ts`` tests on Node < 22.6: ``npm ci`` in ``tests/node`` (CI does), or set AGENTEVALS_TSX.
Tests marked ``slow`` install packages from a registry (pip/npm); deselect with ``-m 'not slow'``.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # custom_eval_helpers is importable

from agentevals.evaluators.base import EvalContext
from agentevals.execution import backends, runtimes
from agentevals.protocol import EvalInput
from agentevals.sources import SOURCES
from custom_eval_helpers import FileServer

REPO = Path(__file__).resolve().parents[4]
HELM_INPUT = REPO / "examples" / "evalinput_helm_v1.1.json"
REPO_TSX = REPO / "tests" / "node" / "node_modules" / ".bin" / "tsx"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: installs packages from a registry (pip/npm); -m 'not slow' skips")


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """A private cache dir, no inherited agentevals settings, and registries as they were."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    for name in list(os.environ):
        if name.startswith("AGENTEVALS_") and name != "AGENTEVALS_DEBUG":
            monkeypatch.delenv(name)
    saved = [(reg, dict(reg._loaded), dict(reg._lazy), dict(reg._aliases))
             for reg in (runtimes.RUNTIMES, backends.EXECUTORS, SOURCES)]
    order = list(runtimes._registered)
    yield
    for reg, loaded, lazy, aliases in saved:
        reg._loaded, reg._lazy, reg._aliases = loaded, lazy, aliases
    runtimes._registered[:] = order


@pytest.fixture
def helm_input() -> EvalInput:
    """The real EvalInput of a recorded Helm agent run (1 turn, with a golden turn)."""
    return EvalInput.model_validate_json(HELM_INPUT.read_text("utf-8"))


@pytest.fixture
def ctx(helm_input: EvalInput) -> EvalContext:
    return EvalContext(case_id="helm", invocations=helm_input.invocations,
                       expected_invocations=helm_input.expected_invocations)


@pytest.fixture
def node() -> str:
    path = shutil.which("node")
    if not path:
        pytest.skip("node is not installed")
    return path


@pytest.fixture
def tsx(node: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """The repository's tsx (tests/node), made the one ``.ts`` files run with."""
    if not REPO_TSX.exists():
        pytest.skip("tsx is not installed: run `npm ci` in tests/node")
    monkeypatch.setenv("AGENTEVALS_TSX", str(REPO_TSX))
    return str(REPO_TSX)


@pytest.fixture
def raw_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FileServer]:
    """A stand-in for raw.githubusercontent.com, wired in through AGENTEVALS_GITHUB_RAW_URL."""
    server = FileServer()
    monkeypatch.setenv("AGENTEVALS_GITHUB_RAW_URL", server.url)
    monkeypatch.setenv("AGENTEVALS_EVALUATOR_REPO", "team/evals")
    yield server
    server.close()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A server that accepts connections and never answers."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    sock.close()


@pytest.fixture
def closed_port() -> str:
    """A loopback URL nobody listens on (connection refused: the network is 'down')."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return f"http://127.0.0.1:{port}"
