"""``type: openai_eval``: OpenAI grader configs that keep working after the Evals API retirement.

The grader (text_similarity, string_check, label_model, score_model) is computed locally by default
(``mode: local``) or sent to OpenAI's Evals API (``mode: evals_api``). See docs/openai-eval.md.
"""

from ._config import OpenAIEvalConfig as OpenAIEvalConfig
from ._evaluator import OpenAIEvalEvaluator as OpenAIEvalEvaluator

__all__ = ["OpenAIEvalConfig", "OpenAIEvalEvaluator"]
