"""Executors: ``local`` is SubprocessBackend; the seed's DockerBackend registers and ``executor: docker``
selects it; whatever a backend returns is validated like subprocess output."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from agentevals.custom_evaluators import (
    EvalInput,
    EvalResult,
    EvaluatorBackend,
    SubprocessBackend,
    create_backend,
    register_executor,
)
from agentevals.errors import ConfigError
from agentevals.evaluators.code import CodeEvaluator
from agentevals.execution.backends import EXECUTORS
from agentevals.results import Status
from custom_eval_helpers import evaluate, write


# The seed's example, exactly as documented.
class DockerBackend(EvaluatorBackend):
    def __init__(self, path: Path, timeout: int = 30):
        self._path = path
        self._timeout = timeout

    async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
        # Build/run container, pipe JSON, return result
        ...


class RecordingBackend(EvaluatorBackend):
    """Returns a fixed result and remembers what it was given."""

    calls: list = []

    def __init__(self, path: Path, timeout: float, result: object) -> None:
        self.path, self.timeout, self.result = path, timeout, result

    async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
        RecordingBackend.calls.append((self.path, self.timeout, eval_input, metric_name))
        return self.result  # type: ignore[return-value]


def build(tmp_path: Path, **fields) -> CodeEvaluator:
    write(tmp_path / "untrusted.py", 'print(\'{"score": 1}\')\n')
    entry = {"name": "untrusted_evaluator", "type": "code", "path": "./untrusted.py", **fields}
    return CodeEvaluator(CodeEvaluator.Config.model_validate(entry), base_dir=tmp_path)


def test_local_is_the_subprocess_backend(tmp_path):
    write(tmp_path / "e.py", "")
    assert EXECUTORS.names() == ["docker", "local", "ray"]
    backend = create_backend("local", tmp_path / "e.py", 5)
    assert isinstance(backend, SubprocessBackend) and backend.path == tmp_path / "e.py"


def test_seed_docker_backend_registers_and_config_selects_it(tmp_path, ctx):
    register_executor("docker", lambda path, timeout: DockerBackend(path, timeout))
    evaluator = build(tmp_path, executor="docker")
    evaluator.check()  # the executor is known now
    result = evaluate(evaluator, ctx)
    # The seed's run() body is `...`: proof that the docker backend, not a subprocess, ran.
    assert (result.status, result.error) == (Status.ERROR, "executor 'docker' returned NoneType, expected an EvalResult")
    assert isinstance(evaluator._backend, DockerBackend)
    assert evaluator._backend._path == tmp_path / "untrusted.py" and evaluator._backend._timeout == 30


def test_unknown_executor_is_refused_at_load_with_a_suggestion(tmp_path):
    register_executor("docker", lambda path, timeout: DockerBackend(path, timeout))
    with pytest.raises(ConfigError) as info:
        build(tmp_path, executor="dokcer").check()
    assert str(info.value) == "unknown executor 'dokcer' (did you mean 'docker'?); known: docker, local, ray"


# -- the built-in docker executor ---------------------------------------------------------------------------

FAKE_DOCKER = """\
#!{python}
import json, os, sys, time
with open(os.environ["FAKE_DOCKER_LOG"], "a") as log:
    log.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1] == "run":
    mode = os.environ.get("FAKE_DOCKER_MODE", "ok")
    data = json.load(sys.stdin)
    if mode == "hang":
        time.sleep(60)
    if mode == "no-daemon":
        sys.stderr.write("docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
                         "Is the docker daemon running?\\n\\nRun 'docker run --help' for more information\\n")
        sys.exit(125)
    print(json.dumps({{"score": 0.75, "details": {{"metric": data["metric_name"]}}}}))
"""


@pytest.fixture
def fake_docker(tmp_path, monkeypatch) -> Path:
    """A ``docker`` CLI on PATH that logs its argv (one JSON list a line) and answers like a container."""
    import os
    import sys

    bin_dir = tmp_path / "bin"
    docker = write(bin_dir / "docker", FAKE_DOCKER.format(python=sys.executable))
    docker.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    log = tmp_path / "docker.log"
    monkeypatch.setenv("FAKE_DOCKER_LOG", str(log))
    return log


def docker_calls(log: Path) -> list[list[str]]:
    import json

    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def test_docker_runs_the_file_read_only_without_network(tmp_path, ctx, fake_docker):
    import importlib.util
    import sys

    sdk_init = importlib.util.find_spec("agentevals_evaluator_sdk").origin  # located, not imported
    evaluator = build(tmp_path, executor="docker")
    evaluator.check()
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.details) == (Status.PASSED, 0.75, {"metric": "untrusted_evaluator"})
    ((run, *args),) = docker_calls(fake_docker)
    name = args[args.index("--name") + 1]
    site = Path(sdk_init).resolve().parent.parent
    assert run == "run" and name.startswith("agentevals-")
    assert args == [
        "--rm", "-i", "--name", name, "--network", "none", "--read-only", "--tmpfs", "/tmp",
        "-v", f"{tmp_path}:/evaluator:ro", "-w", "/evaluator",
        "-v", f"{site}:/opt/agentevals/site-packages:ro", "-e", "PYTHONPATH=/opt/agentevals/site-packages",
        f"python:{sys.version_info.major}.{sys.version_info.minor}-slim", "python", "/evaluator/untrusted.py",
    ]


def test_docker_image_and_network_come_from_the_manifest(tmp_path, ctx, fake_docker):
    write(tmp_path / "evaluator.yaml", "name: untrusted\ndocker:\n  image: team/evals:1\n  network: bridge\n")
    write(tmp_path / "check.ts", "console.log(JSON.stringify({score: 1}));\n")
    evaluator = CodeEvaluator(CodeEvaluator.Config(name="ts", type="code", path="check.ts", executor="docker"),
                              base_dir=tmp_path)
    evaluator.check()
    assert evaluate(evaluator, ctx).status == Status.PASSED
    ((_, *args),) = docker_calls(fake_docker)
    assert args[args.index("--network") + 1] == "bridge"
    assert args[-5:] == ["team/evals:1", "node", "--experimental-strip-types", "--disable-warning=ExperimentalWarning",
                         "/evaluator/check.ts"]


def test_docker_timeout_removes_the_container(tmp_path, ctx, fake_docker, monkeypatch):
    monkeypatch.setenv("FAKE_DOCKER_MODE", "hang")
    evaluator = build(tmp_path, executor="docker", timeout=1)
    result = evaluate(evaluator, ctx)
    assert (result.status, result.error) == (Status.ERROR, "timed out after 1s while running untrusted.py in docker "
                                             f"({evaluator._backend._image})")
    (run, remove) = docker_calls(fake_docker)
    assert remove == ["rm", "-f", run[run.index("--name") + 1]]


def test_docker_without_a_daemon_is_one_error_line(tmp_path, ctx, fake_docker, monkeypatch):
    monkeypatch.setenv("FAKE_DOCKER_MODE", "no-daemon")
    import sys

    result = evaluate(build(tmp_path, executor="docker"), ctx)
    assert result.error == (
        f"docker could not run python:{sys.version_info.major}.{sys.version_info.minor}-slim: docker: Cannot "
        "connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
    )


def test_docker_missing_is_one_error_line(tmp_path, ctx, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = evaluate(build(tmp_path, executor="docker"), ctx)
    assert result.error == ("executor 'docker' could not start: docker not found on PATH "
                            "(needed for `executor: docker`); install Docker")


def _docker_daemon() -> str | None:
    import shutil
    import subprocess

    if not shutil.which("docker"):
        return "docker is not installed"
    if subprocess.run(["docker", "info"], capture_output=True, timeout=20).returncode != 0:
        return "no docker daemon answers `docker info`"
    return None


@pytest.mark.skipif(_docker_daemon() is not None, reason=str(_docker_daemon()))
@pytest.mark.timeout(600)  # may pull an image
def test_docker_runs_a_real_container(tmp_path, ctx):
    write(tmp_path / "e.py", "import json, sys\nd = json.load(sys.stdin)\n"
                             "print(json.dumps({'score': 0.5, 'details': {'n': len(d['invocations'])}}))\n")
    evaluator = CodeEvaluator(CodeEvaluator.Config(name="e", type="code", path="e.py", executor="docker",
                                                   timeout=300), base_dir=tmp_path)
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.details) == (Status.PASSED, 0.5, {"n": 1}), result.error


def test_backend_results_are_validated_and_mapped(tmp_path, ctx):
    RecordingBackend.calls.clear()
    register_executor("rec", lambda path, timeout: RecordingBackend(path, timeout, EvalResult(score=0.4, details={"x": 1})))
    evaluator = build(tmp_path, executor="rec", threshold=0.3, timeout=7, config={"a": 1})
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.details, result.type) == (Status.PASSED, 0.4, {"x": 1}, "code")
    path, timeout, eval_input, metric_name = RecordingBackend.calls[0]
    assert (path, timeout, metric_name) == (tmp_path / "untrusted.py", 7, "untrusted_evaluator")
    assert (eval_input.protocol_version, eval_input.threshold, eval_input.config) == ("1.2", 0.3, {"a": 1})
    assert eval_input.invocations == ctx.invocations


@pytest.mark.parametrize(
    ("returned", "error"),
    [
        ({"score": "high"}, "untrusted_evaluator returned an invalid EvalResult: score: Input should be a valid number "
                            "(got 'high')"),
        ("0.9", "executor 'rec' returned str, expected an EvalResult"),
    ],
)
def test_backend_results_are_checked_strictly(tmp_path, ctx, returned, error):
    register_executor("rec", lambda path, timeout: RecordingBackend(path, timeout, returned))
    result = evaluate(build(tmp_path, executor="rec"), ctx)
    assert (result.status, result.error) == (Status.ERROR, error)


def test_backend_explicit_status_is_honoured_with_a_warning(tmp_path, ctx):
    register_executor("rec", lambda path, timeout: RecordingBackend(path, timeout, {"score": 0.9, "status": "FAILED"}))
    result = evaluate(build(tmp_path, executor="rec"), ctx)
    assert (result.status, result.score) == (Status.FAILED, 0.9)
    assert result.warnings == ["status FAILED set by the evaluator overrides score 0.9 vs threshold 0.5 (which says PASSED)"]


def test_a_backend_that_ignores_the_deadline_is_stopped(tmp_path, ctx):
    class Stuck(EvaluatorBackend):
        async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
            await asyncio.sleep(60)
            raise AssertionError("not reached")

    register_executor("stuck", lambda path, timeout: Stuck())
    result = evaluate(build(tmp_path, executor="stuck", timeout=0.5), ctx)
    assert (result.status, result.error) == (Status.ERROR, "timed out after 0.5s while running")


def test_a_factory_that_fails_is_an_error_row(tmp_path, ctx):
    def factory(path: Path, timeout: float) -> EvaluatorBackend:
        raise RuntimeError("docker daemon not running")

    register_executor("docker", factory)
    result = evaluate(build(tmp_path, executor="docker"), ctx)
    assert result.error == "executor 'docker' could not start: docker daemon not running"


def test_subprocess_backend_is_usable_on_its_own(tmp_path, helm_input):
    write(tmp_path / "e.py", 'import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({"score": d["threshold"]}))\n')
    backend = SubprocessBackend(tmp_path / "e.py", timeout=10)
    result = asyncio.run(backend.run(helm_input, "echo"))
    assert isinstance(result, EvalResult) and result.score == 0.7


def test_register_executor_needs_a_callable():
    with pytest.raises(TypeError, match="needs a callable factory"):
        register_executor("x", "not callable")  # type: ignore[arg-type]
