"""Run-level executors are a registry of their own (``RUN_EXECUTORS``): a third-party one is one class and
one entry point in ``agentevals.run_executors``, chosen with ``--executor NAME``; its pool implements the
engine's ``RunPool`` protocol using only the engine's public names."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from agentevals.engine import RUN_EXECUTORS, LocalPool, Output, RunOptions, RunPool, check_executor
from agentevals.errors import ConfigError

REPO = Path(__file__).resolve().parents[4]
HELM = REPO / "examples" / "traces" / "helm.json"
EVAL_SET = REPO / "examples" / "evalsets" / "eval_set_helm.json"

EXECUTOR = '''\
import sys
from typing import ClassVar

from agentevals.engine import LocalPool


class CountingPool(LocalPool):
    """The local pool, saying on stderr how many cases it was given."""

    submitted = 0

    def submit(self, seq, case, *, only_trace=False):
        CountingPool.submitted += 1
        super().submit(seq, case, only_trace=only_trace)

    async def cancel(self):
        await super().cancel()
        print(f"counting pool: {CountingPool.submitted} case(s)", file=sys.stderr)


class CountingExecutor:
    name: ClassVar[str] = "counting"
    aliases: ClassVar[tuple[str, ...]] = ()
    pool = CountingPool

    @staticmethod
    def require():
        return None
'''


def test_builtin_run_executors():
    assert {"local", "ray"} <= set(RUN_EXECUTORS.names())
    assert RUN_EXECUTORS.get("local").pool is LocalPool
    assert check_executor("local") == "local"
    with pytest.raises(ConfigError, match=r"executor 'docker' runs single evaluators only"):
        check_executor("docker")
    with pytest.raises(ConfigError, match=r"unknown executor 'lcoal' \(did you mean 'local'\?\)"):
        check_executor("lcoal")


def test_local_pool_is_a_run_pool():
    pool: RunPool = LocalPool([], RunOptions(), Output((), stop_on_error=False))
    assert all(callable(getattr(pool, name)) for name in ("read", "submit", "room", "join", "cancel"))


def test_entry_point_run_executor_runs_the_run(tmp_path):
    (tmp_path / "counting_executor.py").write_text(EXECUTOR)
    info = tmp_path / "counting_executor-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: counting-executor\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[agentevals.run_executors]\ncounting = counting_executor:CountingExecutor\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agentevals", "run", str(HELM), "-e", str(EVAL_SET), "-o", "json", "--no-cache",
                               *args],
                              capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)

    plugin, local = run("--executor", "counting"), run()
    assert plugin.returncode == local.returncode == 0, plugin.stderr
    assert "counting pool: 1 case(s)" in plugin.stderr
    strip = ("duration_ms", "started_at", "finished_at", "run_id")

    def comparable(doc):
        if isinstance(doc, dict):
            return {k: comparable(v) for k, v in doc.items() if k not in strip}
        return [comparable(v) for v in doc] if isinstance(doc, list) else doc

    assert comparable(json.loads(plugin.stdout)) == comparable(json.loads(local.stdout))
