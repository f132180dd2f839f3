"""Running evaluator programs: processes with deadlines, runtimes, executors, environments.

- ``process``: one child process, its whole tree killed at the deadline or on cancellation.
- ``deadline``: one deadline shared by every step of an evaluation.
- ``manifest``, ``cache``: ``evaluator.yaml``, cache locations and locks.
- ``commands``: ``run_command`` (a process within a deadline) and ``ProgramFailure``.
- ``environments``: ``requirements.txt`` → cached venv, ``package.json`` → npm install.
- ``runtimes``: extension → interpreter (``register_runtime``); prepares the environment.
- ``program``: ``run_program`` (runtime + environment + process) and the stdout rule.
- ``workers``: persistent evaluator processes (protocol 1.2), a pool per evaluator.
- ``backends``: ``EvaluatorBackend``, ``SubprocessExecutor`` and the executor registry.
- ``adapter``: ``BackendEvaluator``, the runner's view of any backend (``type: code`` / ``remote``).

Imports go one way: each module imports only modules listed above it (no cycles).

The public faces are ``agentevals.custom_evaluators`` and ``agentevals.evaluator.sources``.
"""
