"""Evaluator sources: implement ``EvaluatorSource`` and ``register_source()`` it to add a registry.

Example:
    ```python
    from agentevals.evaluator.sources import EvaluatorSource, EvaluatorInfo, register_source

    class MyRegistrySource(EvaluatorSource):
        @property
        def source_name(self) -> str:
            return "my-registry"

        async def list_evaluators(self) -> list[EvaluatorInfo]: ...
        async def fetch_evaluator(self, ref: str, dest: Path) -> Path: ...

    register_source(MyRegistrySource())
    ```

Config entries then use ``type: remote``, ``source: my-registry``, ``ref: some/ref/path.py``.
"""

from ..sources import EvaluatorInfo as EvaluatorInfo
from ..sources import EvaluatorSource as EvaluatorSource
from ..sources import SourceError as SourceError
from ..sources import get_source as get_source
from ..sources import get_sources as get_sources
from ..sources import register_source as register_source
from ..sources.builtin import BuiltinEvaluatorSource as BuiltinEvaluatorSource
from ..sources.github import GitHubEvaluatorSource as GitHubEvaluatorSource
from ..sources.local import LocalEvaluatorSource as LocalEvaluatorSource

__all__ = [
    "BuiltinEvaluatorSource",
    "EvaluatorInfo",
    "EvaluatorSource",
    "GitHubEvaluatorSource",
    "LocalEvaluatorSource",
    "SourceError",
    "get_source",
    "get_sources",
    "register_source",
]
