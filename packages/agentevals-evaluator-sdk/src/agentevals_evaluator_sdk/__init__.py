"""agentevals-evaluator-sdk: write custom evaluators for agentevals.

An evaluator reads one ``EvalInput`` JSON document on stdin and writes one ``EvalResult`` on stdout::

    from agentevals_evaluator_sdk import evaluator, EvalInput, EvalResult

    @evaluator
    def tool_check(input: EvalInput) -> EvalResult:
        used = [bool(inv.intermediate_steps.tool_calls) for inv in input.invocations]
        scores = [1.0 if u else 0.0 for u in used]
        return EvalResult(score=sum(scores) / max(len(scores), 1), per_invocation_scores=scores)

    if __name__ == "__main__":
        tool_check.run()
"""

from .__about__ import __version__ as __version__
from .decorator import Evaluator as Evaluator
from .decorator import evaluator as evaluator
from .errors import EvaluatorDefinitionError as EvaluatorDefinitionError
from .errors import EvaluatorError as EvaluatorError
from .errors import InputError as InputError
from .errors import ProtocolVersionError as ProtocolVersionError
from .errors import ResultError as ResultError
from .protocol import PROTOCOL_VERSION as PROTOCOL_VERSION
from .protocol import SUPPORTED_VERSIONS as SUPPORTED_VERSIONS
from .protocol import load_schema as load_schema
from .protocol import negotiate as negotiate
from .types import EvalInput as EvalInput
from .types import EvalResult as EvalResult
from .types import EvalStatus as EvalStatus
from .types import IntermediateStepData as IntermediateStepData
from .types import InvocationData as InvocationData
from .types import ToolCallData as ToolCallData
from .types import ToolResponseData as ToolResponseData
from .types import WorkerOffer as WorkerOffer

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "EvalInput",
    "EvalResult",
    "EvalStatus",
    "Evaluator",
    "EvaluatorDefinitionError",
    "EvaluatorError",
    "InputError",
    "IntermediateStepData",
    "InvocationData",
    "ProtocolVersionError",
    "ResultError",
    "ToolCallData",
    "ToolResponseData",
    "WorkerOffer",
    "__version__",
    "evaluator",
    "load_schema",
    "negotiate",
]
