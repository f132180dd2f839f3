"""The AgentV evaluator family: nineteen types of AgentV's eval files, scored as AgentV scores them.

``code_judge``, ``llm_judge``, ``rubric``, ``composite``, ``tool_trajectory``, ``field_accuracy``,
``execution_metrics``, ``skill_trigger`` and the assertions ``contains``, ``contains_any``,
``contains_all``, ``icontains``, ``icontains_any``, ``icontains_all``, ``starts_with``, ``ends_with``,
``regex``, ``is_json``, ``equals`` (kebab-case spellings such as ``is-json`` work too). Each type is one
class registered in ``agentevals.evaluators.EVALUATOR_TYPES``; what each reads from a case is mapped
once, in ``_view`` (which also builds the code-judge payload), and the assertions' checks live in
``_checks`` (shared with ``agentevals eval assert``). See ``docs/agentv-evaluators.md``.
"""
