"""``--executor ray`` without the ``ray`` extra: one line naming the install command, exit 2, before any
work; executors without a run-level mode, and a cluster that cannot be reached, are refused the same way."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
HELM = str(REPO / "examples" / "traces" / "helm.json")

WITHOUT_RAY = "import sys\nsys.modules['ray'] = None  # as if the extra were not installed\n" \
              "from agentevals.cli import main\nmain(sys.argv[1:])\n"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT_RAY, *args], capture_output=True, text=True, timeout=120)


def test_executor_ray_without_the_extra_says_how_to_install_it():
    proc = run("run", HELM, "--executor", "ray")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr == ("Error: the ray executor needs the 'ray' extra: pip install \"agentevals-cli[ray]\"\n")


def test_evaluator_executor_ray_without_the_extra_is_a_config_error(tmp_path):
    (tmp_path / "quality.py").write_text((REPO / "examples" / "evaluators" / "response_quality.py").read_text())
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: quality\n    type: code\n    path: quality.py\n    executor: ray\n")
    proc = run("run", HELM, "-c", str(config))
    assert proc.returncode == 2
    assert proc.stderr == (f"Error: {config}:2:5: evaluator 'quality': the ray executor needs the 'ray' extra: "
                           "pip install \"agentevals-cli[ray]\"\n")


def test_executor_without_a_run_level_mode_is_refused():
    proc = run("run", HELM, "--executor", "docker")
    assert proc.returncode == 2
    assert "executor 'docker' runs single evaluators only" in proc.stderr
    proc = run("run", HELM, "--executor", "nope")
    assert proc.returncode == 2
    assert "unknown executor 'nope'" in proc.stderr
    proc = run("run", HELM, "--ray-address", "auto")
    assert proc.returncode == 2
    assert proc.stderr == ("Error: --ray-address goes with --executor ray (an evaluator's 'executor: ray' uses "
                           "$RAY_ADDRESS)\n")


@pytest.mark.timeout(600)  # the run is given up to 300 s
def test_unreachable_ray_address_is_one_line_exit_2():
    pytest.importorskip("ray", reason="the ray extra is not installed")
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "--executor", "ray",
                           "--ray-address", "127.0.0.1:1"], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("Error: ray: cannot connect to 127.0.0.1:1: ")
