"""Evaluator management: sources (``agentevals.evaluator.sources``), resolution and scaffolding.

A thin public face over ``agentevals.sources`` and the scaffold behind ``agentevals evaluator init``.
"""

from ..sources.resolver import EvaluatorResolver as EvaluatorResolver
from ._scaffold import scaffold_evaluator as scaffold_evaluator

__all__ = ["EvaluatorResolver", "scaffold_evaluator"]
