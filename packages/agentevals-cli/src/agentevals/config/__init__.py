"""eval_config.yaml: strict loading with line numbers, and its JSON Schema for editors."""

from .loader import EvalConfig as EvalConfig
from .loader import LoadedEvaluator as LoadedEvaluator
from .loader import RunSettings as RunSettings
from .loader import build_evaluators as build_evaluators
from .loader import load_config as load_config
from .loader import parse_config as parse_config
from .schema import config_json_schema as config_json_schema

__all__ = ["EvalConfig", "LoadedEvaluator", "RunSettings", "build_evaluators", "config_json_schema",
           "load_config", "parse_config"]
