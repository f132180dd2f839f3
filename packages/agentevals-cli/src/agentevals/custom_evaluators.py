"""Extension points for custom evaluators: runtimes (languages) and executors (where programs run).

A thin public face over ``agentevals.execution``; import from here.

Example:
    ```python
    from agentevals.custom_evaluators import EvaluatorBackend, register_executor

    class PodmanExecutor(EvaluatorBackend):
        name = "podman"  # the YAML `executor:` and the entry-point name

        def __init__(self, path: Path, timeout: float = 30):
            self._path = path
            self._timeout = timeout

        async def run(self, eval_input: EvalInput, metric_name: str) -> EvalResult:
            ...  # build/run a container, pipe JSON, return the result

    register_executor("podman", PodmanExecutor)
    ```

    Or, from a distribution: ``[project.entry-points."agentevals.executors"] podman = "acme:PodmanExecutor"``.
"""

from .execution.backends import EvaluatorBackend as EvaluatorBackend
from .execution.backends import SubprocessBackend as SubprocessBackend
from .execution.backends import SubprocessExecutor as SubprocessExecutor
from .execution.backends import create_backend as create_backend
from .execution.backends import register_executor as register_executor
from .execution.runtimes import NodeRuntime as NodeRuntime
from .execution.runtimes import PythonRuntime as PythonRuntime
from .execution.runtimes import Runtime as Runtime
from .execution.runtimes import get_runtimes as get_runtimes
from .execution.runtimes import register_runtime as register_runtime
from .execution.runtimes import supported_extensions as supported_extensions
from .protocol import EvalInput as EvalInput
from .protocol import EvalResult as EvalResult

__all__ = [
    "EvalInput",
    "EvalResult",
    "EvaluatorBackend",
    "NodeRuntime",
    "PythonRuntime",
    "Runtime",
    "SubprocessBackend",
    "SubprocessExecutor",
    "create_backend",
    "get_runtimes",
    "register_executor",
    "register_runtime",
    "supported_extensions",
]
