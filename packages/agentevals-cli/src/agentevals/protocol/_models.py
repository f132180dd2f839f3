"""The host's pydantic models of the wire protocol (kept schema-identical to the SDK's; a test checks).

Wire models ignore unknown fields, so an evaluator built against an older minor keeps working when the
host sends fields added later. Fields added after 1.0 carry ``x-protocol-since`` in their JSON Schema.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Optional

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from ..core._defaults import new_dict, new_list
from ..core._docs import ATTRIBUTE_DOCS

__all__ = [
    "PERFORMANCE_METRICS_SCHEMA",
    "EvalInput",
    "EvalResult",
    "EvalStatus",
    "IntermediateStepData",
    "InvocationData",
    "ToolCallData",
    "ToolResponseData",
    "WorkerOffer",
]

# defer_build: built on first use, so that start-up pays only for the models a command uses
_WIRE = ConfigDict(extra="ignore", populate_by_name=True, defer_build=True, **ATTRIBUTE_DOCS)
_SINCE_1_1: dict[str, Any] = {"x-protocol-since": "1.1"}
_SINCE_1_2: dict[str, Any] = {"x-protocol-since": "1.2"}


def _stats() -> dict[str, Any]:
    number = {"type": ["number", "null"]}
    return {
        "type": "object",
        "properties": {**{k: number for k in ("min", "median", "max", "p50", "p95", "p99")}, "count": {"type": "integer"}},
    }


def _object(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props}


_INT = {"type": "integer"}
PERFORMANCE_METRICS_SCHEMA: dict[str, Any] = {
    "anyOf": [
        _object(
            latency=_object(overall=_stats(), llm_calls=_stats(), tool_executions=_stats()),
            tokens=_object(
                total_prompt=_INT,
                total_output=_INT,
                total=_INT,
                per_llm_call=_stats(),
                cache_creation_tokens=_INT,
                cache_read_tokens=_INT,
            ),
            counts=_object(llm_calls=_INT, tool_calls=_INT, invocations=_INT),
            models={"type": "array", "items": {"type": "string"}},
            tool_names={"type": "array", "items": {"type": "string"}},
        ),
        {"type": "null"},
    ],
    "default": None,
    "description": "This turn's own latency (ms), token and count figures, when measured.",
    **_SINCE_1_1,
}
"""Shape of ``InvocationData.performance_metrics`` (a plain dict on the Python side)."""

CASE_METRICS_SCHEMA: dict[str, Any] = {
    **PERFORMANCE_METRICS_SCHEMA,
    "description": "The whole case's latency (ms), token and count figures (a conversation's, once), when measured.",
    **_SINCE_1_2,
}
"""Shape of ``EvalInput.performance_metrics``: the same figures, for the whole case."""


class EvalStatus(str, Enum):
    """Result status; the wire uses the string values."""

    PASSED = "PASSED"
    FAILED = "FAILED"
    NOT_EVALUATED = "NOT_EVALUATED"


class ToolCallData(BaseModel):
    """A tool the agent called."""

    model_config = _WIRE

    name: str
    """Tool name."""
    args: dict[str, Any] = Field(default_factory=new_dict)
    """Arguments the agent passed, as a JSON object."""
    id: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_1)
    """Call id as recorded in the trace, when there is one."""


class ToolResponseData(BaseModel):
    """What a tool returned to the agent."""

    model_config = _WIRE

    name: str
    """Tool name."""
    output: str = ""
    """The tool's output as text (JSON text when the tool returned structured data)."""
    id: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_1)
    """Id of the call this responds to."""
    status: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_1)
    """Status of the tool execution ("OK", "ERROR") when recorded."""
    response: Any = Field(default=None, json_schema_extra=_SINCE_1_1)
    """The result as a structured JSON value, when the tool returned one."""


class IntermediateStepData(BaseModel):
    """Steps between the user input and the final response."""

    model_config = _WIRE

    tool_calls: list[ToolCallData] = Field(default_factory=new_list)
    """Tools the agent called, in call order."""
    tool_responses: list[ToolResponseData] = Field(default_factory=new_list)
    """Responses the agent received from tools, in order."""


class InvocationData(BaseModel):
    """One agent turn: the user's input, the steps the agent took, and its final response."""

    model_config = _WIRE

    invocation_id: str = ""
    """Unique turn identifier."""
    user_content: str = ""
    """What the user said."""
    final_response: Optional[str] = None
    """The agent's final response, or null when it gave none."""
    intermediate_steps: IntermediateStepData = Field(default_factory=IntermediateStepData)
    """Tool calls and tool responses of this turn."""
    performance_metrics: Annotated[Optional[dict[str, Any]], WithJsonSchema(PERFORMANCE_METRICS_SCHEMA)] = None
    """This turn's own latency (ms), token and count figures, when measured."""
    trace_id: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_1)
    """Trace the turn was read from."""
    span_id: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_1)
    """Span that delimits the turn."""


class WorkerOffer(BaseModel):
    """The host offers to keep the evaluator process alive (protocol 1.2, persistent workers).

    The first input still arrives on stdin, which is then closed, exactly as in 1.0. An evaluator that
    accepts answers with ``"worker": true`` in its result (one line on stdout) and keeps running: each
    further input is one JSON line on file descriptor ``input_fd``, each result one JSON line on stdout,
    matched by ``request_id``. End of file on ``input_fd`` means stop. An evaluator that does not know
    the offer ignores it and exits after its result, as in 1.0.
    """

    model_config = _WIRE

    input_fd: int
    """File descriptor (inherited) on which further EvalInputs arrive, one JSON line each."""


class EvalInput(BaseModel):
    """What an evaluator receives on stdin."""

    model_config = _WIRE

    protocol_version: str = "1.0"
    """Wire-format version of this document, "MAJOR.MINOR"; absent means 1.0."""
    metric_name: str = ""
    """Name of this evaluator in the user's config."""
    threshold: float = 0.5
    """Score at or above which the result passes."""
    config: dict[str, Any] = Field(default_factory=new_dict)
    """User-provided config from the YAML entry."""
    invocations: list[InvocationData] = Field(default_factory=new_list)
    """Agent turns to evaluate."""
    expected_invocations: Optional[list[InvocationData]] = None
    """Golden reference turns from the eval set, or null."""
    performance_metrics: Annotated[Optional[dict[str, Any]], WithJsonSchema(CASE_METRICS_SCHEMA)] = None
    """The whole case's latency (ms), token and count figures (a conversation's, once), when measured."""
    request_id: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_2)
    """Set by the host on every input of a persistent-worker exchange; the result echoes it."""
    worker: Optional[WorkerOffer] = Field(default=None, json_schema_extra=_SINCE_1_2)
    """Offer to keep this process for more inputs (first input only); see ``WorkerOffer``."""


def _lax_number(value: Any) -> Any:
    """Accept on input what the 0.2 SDK accepted: a boolean (1.0/0.0) or a numeric string ("0.5").

    Anything else is left to the strict check (a non-numeric string is an error naming the value);
    what the SDK emits is always a JSON number.
    """
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return value
    return value


UnitScore = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False), BeforeValidator(_lax_number)]


class EvalResult(BaseModel):
    """What an evaluator writes to stdout.

    Example:
        ```python
        EvalResult(score=0.75, per_invocation_scores=[1.0, 0.5], details={"why": "..."})
        ```
    """

    model_config = ConfigDict(extra="ignore", validate_assignment=True, defer_build=True, **ATTRIBUTE_DOCS)

    score: Optional[UnitScore] = None
    """Overall score in [0, 1]. May be null only when status is NOT_EVALUATED."""
    status: Optional[EvalStatus] = None
    """PASSED, FAILED or NOT_EVALUATED; when omitted the host derives it from score vs threshold."""
    per_invocation_scores: list[Optional[UnitScore]] = Field(default_factory=new_list)
    """Per-turn scores in input order (empty when not computed)."""
    details: Optional[dict[str, Any]] = None
    """Free-form metadata for debugging."""
    protocol_version: Optional[str] = None
    """Version the result was produced under; a result without one is read as 1.0."""
    request_id: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_2)
    """The ``request_id`` of the input this answers (persistent workers)."""
    worker: Optional[bool] = Field(default=None, json_schema_extra=_SINCE_1_2)
    """``true`` in the first result: the evaluator accepted the host's ``WorkerOffer`` and keeps reading."""
    error: Optional[str] = Field(default=None, json_schema_extra=_SINCE_1_2)
    """A persistent worker could not evaluate this input: the one-line cause (score and status are then ignored)."""

    @model_validator(mode="after")
    def _check_score(self) -> EvalResult:
        if self.score is None and self.status != EvalStatus.NOT_EVALUATED and self.error is None:
            raise ValueError("score is required unless status is NOT_EVALUATED")
        return self
