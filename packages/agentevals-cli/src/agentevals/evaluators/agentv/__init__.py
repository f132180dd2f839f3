"""The AgentV evaluator family: nineteen types of AgentV's eval files, scored as AgentV scores them.

``code_judge``, ``llm_judge``, ``rubric``, ``composite``, ``tool_trajectory``, ``field_accuracy``,
``execution_metrics``, ``skill_trigger`` and the assertions ``contains``, ``contains_any``,
``contains_all``, ``icontains``, ``icontains_any``, ``icontains_all``, ``starts_with``, ``ends_with``,
``regex``, ``is_json``, ``equals`` (kebab-case spellings such as ``is-json`` work too). Each type is one
class registered in ``agentevals.evaluators.EVALUATOR_TYPES``; what each reads from a case is mapped
once, in ``_view`` (which also builds the code-judge payload). The assertions are one table,
``ASSERTION_KINDS`` (``_kinds``: spellings, value, check, auto name, transpiler sentence), read by their
evaluator classes, ``agentevals eval assert`` and ``agentevals transpile`` / ``eval prompt``: to add an
assertion kind, add a row there (or call ``add_assertion_kind``). See ``docs/agentv-evaluators.md``.
"""

from ._kinds import ASSERTION_KINDS as ASSERTION_KINDS
from ._kinds import AssertionKind as AssertionKind
from ._kinds import add_assertion_kind as add_assertion_kind
from ._kinds import find_assertion_kind as find_assertion_kind

__all__ = ["ASSERTION_KINDS", "AssertionKind", "add_assertion_kind", "find_assertion_kind"]
