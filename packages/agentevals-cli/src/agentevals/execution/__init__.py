"""Running evaluator programs: processes with deadlines, runtimes, executors, environments.

- ``process``: one child process, its whole tree killed at the deadline or on cancellation.
- ``deadline``: one deadline shared by every step of an evaluation.
- ``runtimes``: extension → interpreter (``register_runtime``).
- ``environments``: ``requirements.txt`` → cached venv, ``package.json`` → npm install.
- ``program``: ``run_program`` (runtime + environment + process) and the stdout rule.
- ``backends``: ``EvaluatorBackend``, ``SubprocessBackend`` and the executor registry.
- ``adapter``: ``BackendEvaluator``, the runner's view of any backend (``type: code`` / ``remote``).
- ``manifest``, ``cache``: ``evaluator.yaml``, cache locations and locks.

The public faces are ``agentevals.custom_evaluators`` and ``agentevals.evaluator.sources``.
"""
