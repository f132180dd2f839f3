"""The AgentV evaluator family: the twelve types of AgentV's eval files, scored as AgentV scores them.

``code_judge``, ``llm_judge``, ``rubric``, ``composite``, ``tool_trajectory``, ``field_accuracy``,
``execution_metrics``, ``skill_trigger``, ``contains``, ``regex``, ``is_json``, ``equals`` (kebab-case
spellings such as ``is-json`` work too). Each type is one class registered in
``agentevals.evaluators.EVALUATOR_TYPES``; what each reads from a case is mapped once, in ``_view``.
See ``docs/agentv-evaluators.md``.
"""
