"""Errors raised by the SDK.

    EvaluatorError                  root of everything the SDK raises
    ├── InputError                  stdin was empty, not JSON, or not a valid EvalInput
    ├── ProtocolVersionError        protocol_version malformed or of another MAJOR
    ├── ResultError                 the evaluator returned something that is not a valid EvalResult
    └── EvaluatorDefinitionError    @evaluator applied to a function with the wrong signature
"""

from __future__ import annotations

__all__ = [
    "EvaluatorDefinitionError",
    "EvaluatorError",
    "InputError",
    "ProtocolVersionError",
    "ResultError",
]


class EvaluatorError(Exception):
    """Root of the SDK's errors; ``str(err)`` is a one-line message."""


class InputError(EvaluatorError):
    """The EvalInput on stdin could not be read."""


class ProtocolVersionError(EvaluatorError):
    """The peer speaks a protocol major this SDK does not."""


class ResultError(EvaluatorError):
    """The evaluator's return value is not a valid EvalResult."""


class EvaluatorDefinitionError(EvaluatorError, TypeError):
    """``@evaluator`` was applied to something that cannot be an evaluator."""
