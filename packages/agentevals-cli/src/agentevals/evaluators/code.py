"""``type: code``: a local program (``.py``, ``.js``, ``.ts``, or any registered runtime) scores each case.

```yaml
evaluators:
  - name: response_quality
    type: code
    path: ./evaluators/response_quality.py   # relative to this config file, else to the working directory
    threshold: 0.7
    timeout: 30
    config: {min_length: 20}
```
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field

from ..core.limits import SCRIPT_TIMEOUT
from ..errors import ConfigError
from ..execution.deadline import Deadline
from ..results import MetricResult
from .backend import BackendEvaluator, ProgramConfig

__all__ = ["CodeEvaluator", "evaluate_file"]


class CodeEvaluator(BackendEvaluator):
    """Runs a program from this machine through the configured executor (default: a subprocess)."""

    name = "code"

    class Config(ProgramConfig):
        type: Literal["code"] = "code"
        path: str = Field(min_length=1)
        """The evaluator file, relative to the config file's directory (else to the working directory)."""

    config: Config

    @property
    def path(self) -> Path:
        return self.resolve_path(self.config.path)

    def code_paths(self) -> list[Path]:
        return [self.path]

    def check(self) -> None:
        path = self.path
        if path.is_dir():
            raise ConfigError(f"{path} is a directory, expected an evaluator file (path {self.config.path!r} "
                              "is relative to the config file's directory)")
        if not path.is_file():
            raise ConfigError(
                f"file not found: {path} (path {self.config.path!r} is relative to the config file's directory; "
                "not under the working directory either)"
            )
        self.check_program(path)

    async def locate(self, deadline: Deadline) -> Path:
        return self.path


def evaluate_file(
    path: Path,
    input_file: Path,
    *,
    threshold: float | None = None,
    timeout: float = SCRIPT_TIMEOUT,
    executor: str = "local",
) -> MetricResult:
    """Run the evaluator ``path`` once on the EvalInput document ``input_file`` (``evaluator run``)."""
    import asyncio
    import json

    from pydantic import ValidationError

    from ..core._validation import format_validation_error
    from ..protocol import EvalInput
    from .base import EvalContext

    try:
        document = EvalInput.model_validate(json.loads(Path(input_file).read_text("utf-8")))
    except (OSError, ValueError) as exc:
        detail = format_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise ConfigError(f"{input_file}: not an EvalInput document: {detail}") from None
    try:
        config = CodeEvaluator.Config(
            name=document.metric_name or Path(path).stem,
            path=str(Path(path).resolve()),
            threshold=document.threshold if threshold is None else threshold,
            timeout=timeout,
            config=document.config,
            executor=executor,
        )
    except ValidationError as exc:
        raise ConfigError(format_validation_error(exc)) from None
    evaluator = CodeEvaluator(config, base_dir=Path.cwd())
    evaluator.log_stderr = False  # `evaluator run` prints the stderr of a failure itself, once
    evaluator.check()
    ctx = EvalContext(
        case_id=Path(input_file).name,
        invocations=document.invocations,
        expected_invocations=document.expected_invocations,
    )

    async def once() -> MetricResult:
        try:
            return await evaluator.evaluate(ctx)
        finally:
            await evaluator.aclose()

    return asyncio.run(once())
