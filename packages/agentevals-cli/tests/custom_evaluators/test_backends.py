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
    assert EXECUTORS.names() == ["local"]
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
    assert str(info.value) == "unknown executor 'dokcer' (did you mean 'docker'?); known: docker, local"


def test_backend_results_are_validated_and_mapped(tmp_path, ctx):
    RecordingBackend.calls.clear()
    register_executor("rec", lambda path, timeout: RecordingBackend(path, timeout, EvalResult(score=0.4, details={"x": 1})))
    evaluator = build(tmp_path, executor="rec", threshold=0.3, timeout=7, config={"a": 1})
    result = evaluate(evaluator, ctx)
    assert (result.status, result.score, result.details, result.type) == (Status.PASSED, 0.4, {"x": 1}, "code")
    path, timeout, eval_input, metric_name = RecordingBackend.calls[0]
    assert (path, timeout, metric_name) == (tmp_path / "untrusted.py", 7, "untrusted_evaluator")
    assert (eval_input.protocol_version, eval_input.threshold, eval_input.config) == ("1.1", 0.3, {"a": 1})
    assert eval_input.invocations == ctx.invocations


@pytest.mark.parametrize(
    ("returned", "error"),
    [
        ({"score": 0.9, "status": "FAILED"}, "untrusted_evaluator returned status FAILED with score 0.9 but threshold "
                                             "0.5 says PASSED"),
        ({"score": 0.9, "per_invocation_scores": [1, 1, 1]}, "untrusted_evaluator returned 3 per_invocation_scores "
                                                              "for 1 invocations"),
        ("0.9", "executor 'rec' returned str, expected an EvalResult"),
    ],
)
def test_backend_results_are_checked_strictly(tmp_path, ctx, returned, error):
    register_executor("rec", lambda path, timeout: RecordingBackend(path, timeout, returned))
    result = evaluate(build(tmp_path, executor="rec"), ctx)
    assert (result.status, result.error) == (Status.ERROR, error)


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
