"""The adapter that lets the runner treat any ``EvaluatorBackend`` as an evaluator.

``BackendEvaluator`` is the base of the ``code`` and ``remote`` types: it locates the program
(a local path, or a download), builds the backend of the configured executor, converts the case into
an ``EvalInput``, validates the backend's ``EvalResult`` strictly and turns it into a ``MetricResult``.
The download and the run happen within one deadline (``timeout``); building the program's environment
(venv, ``npm install``) has its own (``AGENTEVALS_SETUP_TIMEOUT``) and does not count against it, and a
setup that failed is not tried again for every case of the run. Every failure becomes this evaluator's
ERROR row with a one-line cause; other evaluators are untouched.
"""

from __future__ import annotations

import abc
import asyncio
import logging
import re
import textwrap
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from pydantic import Field

from ..errors import AgentevalsError, ConfigError
from ..execution.backends import EXECUTORS, EvaluatorBackend, SubprocessExecutor, create_backend
from ..execution.deadline import Deadline, deadline_scope
from ..execution.manifest import protocol_version_for
from ..execution.program import ProgramFailure, SetupFailure
from ..execution.sandbox_env import EnvField, env_scope
from ..protocol import EvalInput, EvalResult, EvalStatus, decode_result, encode_input, result_warnings
from ..results import MetricResult, Status
from .base import BaseEvaluator, EvalContext, EvaluatorConfig

__all__ = ["BackendEvaluator", "ProgramConfig", "build_eval_input", "to_metric_result"]

logger = logging.getLogger(__name__)

DEFAULT_THRESHOLD = 0.5
GRACE_SECONDS = 1.0
"""How long past ``timeout`` a backend that ignores the deadline is given before it is cancelled."""


class ProgramConfig(EvaluatorConfig):
    """Fields shared by evaluator entries that run a program (``code``, ``remote``)."""

    timeout: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """Hard deadline in seconds for one evaluation: download, environment setup, the run."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Arbitrary key-value pairs passed to the evaluator as ``EvalInput.config``."""
    executor: str = Field(default="local", min_length=1)
    """Execution environment: ``local`` (a subprocess) or one added with ``register_executor``."""
    env: EnvField = Field(default_factory=list)
    """Environment variables passed to the evaluator by name on top of PATH, HOME, locale and temp dir;
    ``inherit`` passes the whole environment."""


def build_eval_input(ctx: EvalContext, *, name: str, threshold: float, config: dict[str, Any],
                     version: str) -> EvalInput:
    """The ``EvalInput`` for one case: each turn keeps its own performance figures only; the whole case's
    figures go once, at the top (protocol 1.2; dropped for older peers)."""
    return EvalInput(
        protocol_version=version,
        metric_name=name,
        threshold=threshold,
        config=dict(config),
        invocations=list(ctx.invocations),
        expected_invocations=list(ctx.expected_invocations) if ctx.expected_invocations is not None else None,
        performance_metrics=ctx.performance_metrics,
    )


def _file_name(text: str) -> str:
    return re.sub(r"[^\w.-]", "_", text).strip(".") or "_"


def dump_input(eval_input: EvalInput, path: Path) -> None:
    """Write ``eval_input`` to ``path`` exactly as an evaluator program gets it on stdin (``--dump-inputs``)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(encode_input(eval_input, eval_input.protocol_version), "utf-8")
    except OSError as exc:
        raise ProgramFailure(f"cannot write the EvalInput to {path}: {exc.strerror or exc}") from None


def to_metric_result(
    result: EvalResult, *, name: str, type_: str, threshold: float, n_invocations: Optional[int] = None
) -> MetricResult:
    """Map a validated ``EvalResult`` onto the run's result model.

    An explicit PASSED/FAILED stands (the evaluator's decision), with a warning in the row when the score
    says otherwise; see ``result_warnings``.
    """
    details = dict(result.details or {})
    fields: dict[str, Any] = {
        "per_invocation_scores": list(result.per_invocation_scores),
        "details": details,
        "warnings": result_warnings(result, threshold=threshold,
                                    n_invocations=len(result.per_invocation_scores) if n_invocations is None
                                    else n_invocations),
    }
    if result.status == EvalStatus.NOT_EVALUATED:
        reason = details.get("reason") or "the evaluator returned NOT_EVALUATED"
        return MetricResult.not_evaluated(name, str(reason), type=type_, score=result.score,
                                          threshold=threshold, **fields)
    assert result.score is not None  # decode_result guarantees a score unless NOT_EVALUATED
    metric = MetricResult.scored(name, result.score, threshold, type=type_, **fields)
    if result.status is not None:
        metric.status = Status(result.status.value)
    return metric


class BackendEvaluator(BaseEvaluator):
    """Base of evaluator types that run a program through an executor backend."""

    Config = ProgramConfig
    config: ProgramConfig
    log_stderr: bool = True
    """Log a failure's stderr (once per evaluator); off where the caller prints it (``evaluator run``)."""

    @classmethod
    def runs_code(cls, entry: Mapping[str, Any]) -> Optional[str]:
        return f"runs a program (type {cls.name})"

    def __init__(self, config: EvaluatorConfig, **kwargs: Any) -> None:
        super().__init__(config, **kwargs)
        self._backend: EvaluatorBackend | None = None
        self._version: str | None = None
        self._locate_error: AgentevalsError | None = None
        self._setup_error: SetupFailure | None = None
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None
        self._stderr_logged = False

    @property
    def timeout(self) -> float:
        return self.config.timeout

    @property
    def threshold(self) -> float:
        return DEFAULT_THRESHOLD if self.config.threshold is None else self.config.threshold

    @abc.abstractmethod
    async def locate(self, deadline: Deadline) -> Path:
        """The program file to run (downloading it if needed); raise ``EvaluatorFailure`` when it cannot."""

    def check_executor(self) -> None:
        """The configured executor exists and its extra is installed (``ConfigError`` naming the fix)."""
        factory = EXECUTORS.get(self.config.executor)
        try:
            getattr(factory, "require", lambda: None)()  # e.g. ``executor: ray`` needs the ``ray`` extra
        except ImportError as exc:
            raise ConfigError(str(exc)) from None

    def check_program(self, path: Path) -> None:
        """Load-time checks of a program file on this machine: executor, runtime, manifest."""
        from ..execution.runtimes import runtime_for

        self.check_executor()
        runtime = runtime_for(path)
        if self.config.executor == "local":
            try:
                runtime.check(path)
            except RuntimeError as exc:
                raise ConfigError(str(exc)) from None
        protocol_version_for(path)

    async def _backend_for(self, deadline: Deadline, ctx: EvalContext) -> tuple[EvaluatorBackend, str]:
        """The evaluator's backend, made on first use with the options of the run that first uses it (``ctx.options``) (its
        worker pool's size), and the protocol version its program speaks."""
        if self._backend is not None and self._version is not None:
            return self._backend, self._version  # made once, never unset: no lock needed to read them
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:  # a lock serves one event loop
            self._lock = (loop, asyncio.Lock())
        async with self._lock[1]:
            if self._locate_error is not None:
                raise self._locate_error
            if self._backend is None or self._version is None:
                try:
                    path = await self.locate(deadline)
                    if not path.is_file():
                        raise ProgramFailure(f"evaluator file not found: {path}")
                    self._version = protocol_version_for(path)
                    self._backend = create_backend(self.config.executor, path, self.config.timeout)
                    # --dump-inputs promises the bytes each program read: no worker offer added to them.
                    options = ctx.options
                    if (isinstance(self._backend, SubprocessExecutor) and options.persistent_workers
                            and options.dump_inputs is None):
                        self._backend.use_workers(options.concurrency)
                except AgentevalsError as exc:
                    # Remembered so that a download that failed is not retried (and waited for) per case.
                    self._locate_error = exc
                    raise
        return self._backend, self._version

    async def _evaluate(self, ctx: EvalContext, deadline: Deadline) -> MetricResult:
        backend, version = await self._backend_for(deadline, ctx)
        eval_input = build_eval_input(ctx, name=self.config.name, threshold=self.threshold,
                                      config=self.config.config, version=version)
        if ctx.options.dump_inputs is not None:
            dump_input(eval_input, ctx.options.dump_inputs / _file_name(self.config.name) / f"{_file_name(ctx.case_id)}.json")
        deadline.phase = "running"
        if self._setup_error is not None:
            raise self._setup_error
        try:
            result: Any = await backend.run(eval_input, self.config.name)
        except SetupFailure as exc:
            # Remembered: a venv that could not be built is not rebuilt (and waited for) for every case.
            self._setup_error = exc
            raise
        if isinstance(result, EvalResult) and type(backend) is SubprocessExecutor:
            checked = result  # decode_result's own output, for this input (a second pass would change nothing)
        else:
            if isinstance(result, EvalResult):
                result = result.model_dump(mode="json")
            if not isinstance(result, dict):
                raise ProgramFailure(
                    f"executor '{self.config.executor}' returned {type(result).__name__}, expected an EvalResult"
                )
            checked = decode_result(result, threshold=self.threshold, n_invocations=len(eval_input.invocations),
                                    sent_version=version, name=self.config.name)
        return to_metric_result(checked, name=self.config.name, type_=self.name, threshold=self.threshold,
                                n_invocations=len(eval_input.invocations))

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        start = time.monotonic()
        deadline = Deadline(self.config.timeout)
        try:
            with deadline_scope(deadline), env_scope(self.config.env):
                # Each step stops itself at the deadline (killing processes, naming the step); the
                # grace only catches a third-party backend that ignores it. (A movable wait: the
                # deadline is paused while the program's environment is built.)
                result = await deadline.wait(self._evaluate(ctx, deadline), grace=GRACE_SECONDS)
        except AgentevalsError as exc:
            result = self._errored(exc)
        result.duration_ms = (time.monotonic() - start) * 1000
        return result

    def _errored(self, exc: AgentevalsError) -> MetricResult:
        stderr = getattr(exc, "stderr", "")
        details = {"stderr": stderr} if stderr else {}
        if stderr and self.log_stderr:
            level = logging.DEBUG if self._stderr_logged else logging.WARNING
            self._stderr_logged = True
            logger.log(level, "evaluator '%s' failed: %s; its stderr ends with:\n%s",
                       self.config.name, exc, textwrap.indent(stderr, "  | "))
        return MetricResult.errored(self.config.name, str(exc), type=self.name, threshold=self.threshold,
                                    details=details)

    async def aclose(self) -> None:
        if self._backend is not None:
            await self._backend.aclose()
