"""eval_config.yaml: strict loading with line numbers, and its JSON Schema for editors.

``config_json_schema`` loads on first use: building it imports every evaluator type, which a run does not need.
"""

from typing import TYPE_CHECKING, Any

from .loader import EvalConfig as EvalConfig
from .loader import LoadedEvaluator as LoadedEvaluator
from .loader import RunSettings as RunSettings
from .loader import build_evaluators as build_evaluators
from .loader import load_config as load_config
from .loader import parse_config as parse_config

if TYPE_CHECKING:
    from .schema import config_json_schema as config_json_schema

__all__ = ["EvalConfig", "LoadedEvaluator", "RunSettings", "build_evaluators", "config_json_schema",
           "load_config", "parse_config"]


def __getattr__(name: str) -> Any:
    if name == "config_json_schema":
        from .schema import config_json_schema

        return config_json_schema
    raise AttributeError(f"module 'agentevals.config' has no attribute {name!r}")
