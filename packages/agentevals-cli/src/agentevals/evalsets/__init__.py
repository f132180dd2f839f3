"""ADK eval sets: loading (no google-adk import) and matching cases to traces."""

from .loader import load_eval_set as load_eval_set
from .loader import parse_eval_set as parse_eval_set
from .matching import match_case as match_case
from .model import EvalCase as EvalCase
from .model import EvalSet as EvalSet

__all__ = ["EvalCase", "EvalSet", "load_eval_set", "match_case", "parse_eval_set"]
