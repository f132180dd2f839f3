"""The CLI's side of the evaluator wire protocol: models, versions, negotiation, strict decoding."""

from ._codec import decode_result as decode_result
from ._codec import encode_input as encode_input
from ._codec import negotiate as negotiate
from ._codec import strip_to_version as strip_to_version
from ._models import EvalInput as EvalInput
from ._models import EvalResult as EvalResult
from ._models import EvalStatus as EvalStatus
from ._models import IntermediateStepData as IntermediateStepData
from ._models import InvocationData as InvocationData
from ._models import ToolCallData as ToolCallData
from ._models import ToolResponseData as ToolResponseData
from ._versions import PROTOCOL_VERSION as PROTOCOL_VERSION
from ._versions import SUPPORTED_VERSIONS as SUPPORTED_VERSIONS
from ._versions import load_schema as load_schema
from ._versions import parse_version as parse_version

Invocation = InvocationData
"""Alias: one agent turn, as converted from a trace or read from an eval set."""

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "EvalInput",
    "EvalResult",
    "EvalStatus",
    "IntermediateStepData",
    "Invocation",
    "InvocationData",
    "ToolCallData",
    "ToolResponseData",
    "decode_result",
    "encode_input",
    "load_schema",
    "negotiate",
    "parse_version",
]
