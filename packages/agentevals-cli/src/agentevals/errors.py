"""Errors raised by agentevals. Library code raises these; only ``agentevals.cli`` prints them.

    AgentevalsError                     root; ``str(err)`` is one line: what, where, the value, the fix
    ├── ConfigError                     bad eval_config.yaml / flags; exit code 2 (like click's UsageError)
    ├── InputFileError                  a trace or eval-set file that cannot be read; names file (and position)
    ├── ProtocolError                   an evaluator's output violates the wire protocol
    │   └── ProtocolVersionError        a protocol MAJOR neither side can speak
    ├── EvaluatorFailure                an evaluator could not produce a score (becomes that row's ERROR)
    ├── StoreError                      the run store cannot be opened or written; exit code 2
    │   └── RunNotFoundError            no stored run matches the id, prefix or ``latest`` asked for
    └── MissingDependencyError          an optional extra is not installed (also an ImportError)
"""

from __future__ import annotations

__all__ = [
    "AgentevalsError",
    "ConfigError",
    "EvaluatorFailure",
    "InputFileError",
    "MissingDependencyError",
    "ProtocolError",
    "ProtocolVersionError",
    "RunNotFoundError",
    "StoreError",
    "first_line",
]


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (its type name when the message is empty)."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


class AgentevalsError(Exception):
    """Root of agentevals' errors."""

    exit_code = 1


class ConfigError(AgentevalsError):
    """The configuration or the command line is wrong; nothing was evaluated."""

    exit_code = 2


class InputFileError(AgentevalsError):
    """A trace or eval-set file could not be read."""


class ProtocolError(AgentevalsError):
    """An evaluator's output does not follow the wire protocol."""


class ProtocolVersionError(ProtocolError):
    """The two sides speak different protocol majors."""


class EvaluatorFailure(AgentevalsError):
    """An evaluator could not produce a score; the message is the one-line cause shown in its row."""


class StoreError(AgentevalsError):
    """The run store cannot be opened, migrated or written (names the store, the cause and the fix)."""

    exit_code = 2


class RunNotFoundError(StoreError):
    """No stored run matches what was asked for (the HTTP API answers 404)."""


class MissingDependencyError(AgentevalsError, ImportError):
    """An optional dependency is missing; the message carries the exact install command."""

    def __init__(self, what: str, extra: str) -> None:
        self.install = f'pip install "agentevals-cli[{extra}]"'
        super().__init__(f"{what} needs the '{extra}' extra: {self.install}")
