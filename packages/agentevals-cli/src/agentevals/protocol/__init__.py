"""The CLI's side of the evaluator wire protocol: models, versions, negotiation, strict decoding.

Models and codec load on first use so that ``agentevals --help`` does not pay for pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._versions import PROTOCOL_VERSION as PROTOCOL_VERSION
from ._versions import SUPPORTED_VERSIONS as SUPPORTED_VERSIONS
from ._versions import load_schema as load_schema
from ._versions import parse_version as parse_version

if TYPE_CHECKING:
    from ._codec import decode_result as decode_result
    from ._codec import encode_input as encode_input
    from ._codec import encode_line as encode_line
    from ._codec import negotiate as negotiate
    from ._codec import result_warnings as result_warnings
    from ._codec import strip_to_version as strip_to_version
    from ._models import EvalInput as EvalInput
    from ._models import EvalResult as EvalResult
    from ._models import EvalStatus as EvalStatus
    from ._models import IntermediateStepData as IntermediateStepData
    from ._models import InvocationData as Invocation
    from ._models import InvocationData as InvocationData
    from ._models import ToolCallData as ToolCallData
    from ._models import ToolResponseData as ToolResponseData
    from ._models import WorkerOffer as WorkerOffer

_LAZY = {
    **dict.fromkeys(("decode_result", "encode_input", "encode_line", "negotiate", "result_warnings", "strip_to_version"), "_codec"),
    **dict.fromkeys(("EvalInput", "EvalResult", "EvalStatus", "IntermediateStepData", "InvocationData",
                     "ToolCallData", "ToolResponseData", "WorkerOffer"), "_models"),
}

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
    "WorkerOffer",
    "decode_result",
    "encode_input",
    "encode_line",
    "load_schema",
    "negotiate",
    "parse_version",
    "result_warnings",
    "strip_to_version",
]


def __getattr__(name: str) -> Any:
    if name == "Invocation":
        name_in_module, module = "InvocationData", "_models"
    elif name in _LAZY:
        name_in_module, module = name, _LAZY[name]
    else:
        raise AttributeError(f"module 'agentevals.protocol' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name_in_module)
    globals()[name] = value
    return value
