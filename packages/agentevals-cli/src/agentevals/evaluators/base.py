"""The evaluator plug-in contract: a config model, load-time checks, and an async ``evaluate``.

Adding an evaluator type = one module with a ``BaseEvaluator`` subclass + one line in
``agentevals.evaluators.EVALUATOR_TYPES``. The class's ``name`` is its YAML ``type:``.

Example:
    ```python
    class ContainsEvaluator(BaseEvaluator):
        name = "contains"

        class Config(EvaluatorConfig):
            type: Literal["contains"] = "contains"
            value: str

        async def evaluate(self, ctx: EvalContext) -> MetricResult:
            text = ctx.invocations[-1].final_response or ""
            return MetricResult.scored(self.config.name, float(self.config.value in text), 1.0, type=self.name)
    ```
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..core._docs import ATTRIBUTE_DOCS
from ..core.limits import EVALUATOR_TIMEOUT
from ..engine.options import RunOptions
from ..results import MetricResult

if TYPE_CHECKING:
    from ..evalsets.model import EvalCase
    from ..protocol import InvocationData
    from ..traces.model import ConvertedTrace

__all__ = ["BaseEvaluator", "EvalContext", "EvaluatorConfig", "NotCacheable"]


class NotCacheable(Exception):
    """The run store's result cache cannot know everything that decides this evaluator's result (the
    message says what): its results are neither reused nor stored for reuse, it runs every time."""


class EvaluatorConfig(BaseModel):
    """Fields every evaluator entry of eval_config.yaml accepts. Unknown keys are errors."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, defer_build=True, **ATTRIBUTE_DOCS)
    # (defer_build: an evaluator type's config model is built when an entry of that type is read)

    name: str = Field(min_length=1)
    """Unique name for the evaluator (used in output)."""
    type: str
    """Evaluator type."""
    threshold: Optional[float] = Field(default=0.5, ge=0.0, le=1.0)
    """Score at or above this value means PASSED."""
    weight: float = Field(default=1.0, ge=0.0, allow_inf_nan=False)
    """Weight in the case's weighted score."""
    required: Union[bool, float, None] = None
    """Gate: ``true`` (score must reach 0.8) or a number in (0, 1]; a failed gate makes the case score 0."""
    timeout: Optional[float] = Field(default=None, gt=0, allow_inf_nan=False)
    """Deadline in seconds for one evaluation (default: the type's own, a few seconds for cheap checks)."""
    sample: Optional[float] = Field(default=None, gt=0.0, le=1.0)
    """Share of sessions this evaluator scores, chosen by the same hash as the run's ``sample`` (nested:
    a session in at 0.1 is in at 0.5). Default: every session the run evaluates."""
    max_calls_per_hour: Optional[int] = Field(default=None, ge=1)
    """At most this many evaluations per rolling hour (``serve``): beyond it, sessions are sampled down
    (counted as over budget), never queued or overspent."""
    budget_usd_per_day: Optional[float] = Field(default=None, gt=0.0, allow_inf_nan=False)
    """At most this much judge spend per rolling day, priced from the judge's token counts (``judge_prices``):
    beyond it, sessions are sampled down (counted as over budget)."""

    @field_validator("required")
    @classmethod
    def _check_required(cls, value: Union[bool, float, None]) -> Union[bool, float, None]:
        if value is None or isinstance(value, bool):
            return value
        if not 0.0 < value <= 1.0:
            raise ValueError(f"required must be true or a number in (0, 1], got {value!r}")
        return value

    @property
    def gate(self) -> Optional[float]:
        """The required score, or None when the evaluator is not a gate."""
        if self.required is True:
            return 0.8
        if self.required is False or self.required is None:
            return None
        return float(self.required)


@dataclass
class EvalContext:
    """What an evaluator sees for one case: the agent's turns, the golden turns, and the raw traces."""

    case_id: str
    invocations: list[InvocationData]
    expected_invocations: Optional[list[InvocationData]] = None
    eval_case: Optional[EvalCase] = None
    traces: list[ConvertedTrace] = field(default_factory=list)
    options: RunOptions = field(default_factory=RunOptions)
    performance_metrics: Optional[dict[str, Any]] = None
    """Whole-case latency/token/count figures."""
    match_reason: Optional[str] = None
    """How the eval case was matched, or why none was (e.g. "no eval set given (-e/--eval-set)")."""


class BaseEvaluator(ABC):
    """An evaluator type. Instances are built once per run from a validated config entry."""

    name: ClassVar[str]
    """Registry key, entry-point name and YAML ``type:``."""
    aliases: ClassVar[tuple[str, ...]] = ()
    """Other spellings of ``type:`` (``code-judge`` for ``code_judge``)."""
    Config: ClassVar[type[EvaluatorConfig]] = EvaluatorConfig
    default_timeout: ClassVar[float] = EVALUATOR_TIMEOUT
    """Deadline when the entry sets no ``timeout``: generous for types that call out (LLM judges),
    seconds for cheap in-process checks."""
    needs_spans: ClassVar[bool] = False
    """Reads the raw spans (``ctx.traces[i].trace``); when no configured evaluator does, the runner drops
    them right after conversion to keep memory small on large inputs."""

    def __init__(self, config: EvaluatorConfig, *, base_dir: Path, options: Optional[RunOptions] = None) -> None:
        self.config = config
        self.base_dir = base_dir
        """Directory of the config file: relative paths resolve against it first."""
        self.options = options or RunOptions()
        """Load-time options (what ``check`` may read). A run's options reach ``evaluate`` as
        ``EvalContext.options`` only: the engine never writes them here, so one evaluator object can serve
        several runs at once (serve's sessions, two API calls)."""
        self.notes: list[str] = []
        """Load-time notes for the user (e.g. a path found relative to the working directory)."""

    @property
    def display_name(self) -> str:
        return self.config.name

    @property
    def timeout(self) -> float:
        """Hard deadline in seconds for one evaluation: the entry's ``timeout``, else ``default_timeout``."""
        return getattr(self.config, "timeout", None) or self.default_timeout

    @property
    def reproducible(self) -> bool:
        """Whether the config (and the files it names) fully determine this evaluator's code, so the run
        store's result cache may reuse its results. False e.g. for a remote evaluator fetched from a
        branch without a pinned ``sha256``: its code can change under the same config."""
        return True

    @classmethod
    def runs_code(cls, entry: Mapping[str, Any]) -> Optional[str]:
        """What in a config ``entry`` of this type runs a program, a command or code fetched from
        elsewhere on this machine (a short phrase), or None when it only computes in-process.

        ``agentevals serve`` refuses such entries in configs uploaded through its API or MCP port unless
        started with ``--allow-code-evaluators``. A type from a plugin package is assumed to run code
        unless its class overrides this; the built-in types answer for themselves.
        """
        if cls.__module__.split(".")[0] == "agentevals":
            return None
        return f"a plugin evaluator type ({cls.__module__}) may run any code"

    @property
    def not_reproducible_reason(self) -> str:
        """Why ``reproducible`` is False, in a few words (the ``-v`` line of a run that re-ran it)."""
        return "its code can change under the same config"

    def code_paths(self) -> list[Path]:
        """The files of this evaluator's own program, whose folders (or top packages) the result cache
        hashes with their runtime's version (``store.keys``). Builtins: none (their code ships with
        agentevals). Raise ``NotCacheable`` when the code cannot be known."""
        return []

    def check(self) -> None:
        """Load-time checks (files exist, runtime available, extra installed); raise ``ConfigError``."""

    def resolve_path(self, path: str) -> Path:
        """Resolve a path from the config: the config file's directory first, then the working directory
        (as agentevals-cli 0.11 did); using the second adds a note saying so."""
        from ..core._files import resolve_config_path

        resolved, note = resolve_config_path(path, self.base_dir)
        if note and note not in self.notes:
            self.notes.append(note)
        return resolved

    @abstractmethod
    async def evaluate(self, ctx: EvalContext) -> Union[MetricResult, list[MetricResult]]:
        """Score one case. Raise to signal an ERROR (the runner turns it into that row's one-line cause)."""

    async def aclose(self) -> None:
        """Release resources (processes, sessions) at the end of the run."""
