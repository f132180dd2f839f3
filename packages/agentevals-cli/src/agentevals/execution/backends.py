"""Executors: how an evaluator program is run. ``local`` (a subprocess) and ``docker`` are built in;
others register (``register_executor`` or the ``agentevals.executors`` entry-point group).

An executor is a factory ``(path, timeout) -> EvaluatorBackend``; the YAML ``executor:`` field picks
it by name. A backend gets an ``EvalInput`` and returns an ``EvalResult``; the transport is its own
business (subprocess, container, HTTP…). Whatever it returns is validated like subprocess output.

An executor is an ``EvaluatorBackend`` subclass whose ``name`` ClassVar is its key (``SubprocessExecutor``
is ``local``); Python code may also register a plain factory. See ``agentevals.custom_evaluators`` (the
public face) for an example.
"""

from __future__ import annotations

import abc
import logging
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

from ..core._registry import Registry
from ..protocol import EvalInput, EvalResult, encode_input
from .deadline import current_deadline
from .process import tail
from .program import ProgramFailure, read_result, run_program
from .runtimes import Runtime, runtime_for
from .workers import WorkerPool, supports_workers

logger = logging.getLogger(__name__)

__all__ = [
    "EXECUTORS",
    "EvaluatorBackend",
    "ExecutorFactory",
    "SubprocessBackend",
    "SubprocessExecutor",
    "create_backend",
    "register_executor",
]


class EvaluatorBackend(abc.ABC):
    """Delivers an ``EvalInput`` to an evaluator and returns its ``EvalResult``."""

    name: ClassVar[str]
    """Registry key, entry-point name and YAML ``executor:``."""
    aliases: ClassVar[tuple[str, ...]] = ()

    @abc.abstractmethod
    async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
        """Run the evaluator once. Raise (``EvaluatorFailure`` for a one-line cause) when it cannot."""

    async def aclose(self) -> None:
        """Release resources at the end of the run (containers, sessions)."""


ExecutorFactory = Callable[[Path, float], EvaluatorBackend]


class SubprocessExecutor(EvaluatorBackend):
    """Runs a local file as a child process: ``EvalInput`` JSON on stdin, ``EvalResult`` JSON on stdout.

    The interpreter comes from the runtime registry by extension, unless ``runtime`` is given.
    The deadline is the evaluation's (download included) when one is running, else ``timeout``; a
    dependency setup runs under its own (``AGENTEVALS_SETUP_TIMEOUT``) with that one paused.
    """

    name = "local"

    def __init__(self, path: Path, timeout: float = 30, runtime: Runtime | None = None) -> None:
        self._path = Path(path).resolve()
        self._timeout = float(timeout)
        self._runtime = runtime or runtime_for(self._path)
        self._workers: WorkerPool | None = None
        if not self._path.is_file():
            raise FileNotFoundError(f"evaluator file not found: {self._path}")

    def use_workers(self, size: int) -> None:
        """Offer persistent workers (protocol 1.2) to the program, keeping up to ``size`` of them."""
        runtime, path = self._runtime, self._path
        self._workers = WorkerPool(lambda deadline: runtime.prepare(path, deadline=deadline), cwd=path.parent,
                                   size=size, name=path.name)

    @property
    def path(self) -> Path:
        return self._path

    async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
        version = eval_input.protocol_version
        if self._workers is not None and supports_workers(version):
            return await self._workers.run(eval_input, deadline=current_deadline(self._timeout), metric_name=metric_name)
        payload = encode_input(eval_input, version).encode("utf-8")
        result = await run_program(
            self._path, payload, deadline=current_deadline(self._timeout), runtime=self._runtime
        )
        checked = read_result(
            result,
            name=metric_name,
            threshold=eval_input.threshold,
            n_invocations=len(eval_input.invocations),
            sent_version=version,
        )
        if result.stderr.strip():  # an evaluator's debug output, shown with -v (a failure's is a warning)
            logger.info("evaluator '%s' wrote on stderr:\n%s", metric_name,
                        textwrap.indent(tail(result.stderr), "  | "))
        return checked

    async def aclose(self) -> None:
        if self._workers is not None:
            await self._workers.aclose()


SubprocessBackend = SubprocessExecutor
"""Deprecated alias of ``SubprocessExecutor``."""


EXECUTORS: Registry[ExecutorFactory] = Registry(
    "executor",
    "agentevals.executors",
    {
        "local": "agentevals.execution.backends:SubprocessExecutor",
        "docker": "agentevals.execution.docker:DockerExecutor",
        "ray": "agentevals.execution.ray_executor:RayExecutor",  # the `ray` extra; also `run --executor ray`
    },
    base=EvaluatorBackend,
)
"""Executor name (the YAML ``executor:``) → factory ``(path, timeout) -> EvaluatorBackend``."""


def register_executor(name: str, factory: ExecutorFactory) -> None:
    """Register (or replace) the executor ``name``, e.g. ``register_executor("docker", DockerExecutor)``
    (an ``EvaluatorBackend`` subclass, or any factory ``(path, timeout) -> EvaluatorBackend``)."""
    if not callable(factory):
        raise TypeError(f"register_executor('{name}') needs a callable factory, got {type(factory).__name__}")
    EXECUTORS.register(name, factory)


def create_backend(executor: str, path: Path, timeout: int | float = 30) -> EvaluatorBackend:
    """Build the backend of ``executor`` for ``path`` (``ConfigError`` for an unknown executor)."""
    factory = EXECUTORS.get(executor)
    try:
        backend = factory(path, timeout)
    except (OSError, ValueError, RuntimeError) as exc:
        raise ProgramFailure(f"executor '{executor}' could not start: {exc}") from None
    if not isinstance(backend, EvaluatorBackend):
        raise ProgramFailure(
            f"executor '{executor}' built a {type(backend).__name__}, expected an EvaluatorBackend"
        )
    return backend
