"""Run-wide options shared by the CLI, the Python API and the evaluators (which read them from their
``EvalContext``, never from their own attributes: one evaluator object may serve several runs)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional

if TYPE_CHECKING:
    from ..core.secrets import Credentials
    from ..trace_sources import ReadContext
    from .admission import Admission
    from .budget import JudgeLedger

__all__ = ["PROBES", "BuiltinThresholds", "GroupBy", "JudgeProbe", "RunOptions", "TrajectoryMatchType",
           "default_concurrency"]

GroupBy = Literal["auto", "trace", "conversation"]
TrajectoryMatchType = Literal["exact", "in_order", "any_order"]
BuiltinThresholds = Literal["uniform", "adk"]
"""Default pass threshold of builtin metrics given none: ``uniform`` = 0.5 for every metric (as
agentevals-cli 0.11 had it), ``adk`` = each metric's ADK default (1.0 trajectory, 0.8 response match)."""
ProbeKind = Literal["position", "verbosity", "label-order", "paraphrase"]
PROBES: tuple[ProbeKind, ...] = ("position", "verbosity", "label-order", "paraphrase")
"""The bias probes of ``agentevals calibrate --probes`` (docs/trust.md)."""


@dataclass(frozen=True)
class JudgeProbe:
    """A bias probe: how the LLM judges of this run change their prompt (``evaluators.agentv._judge.probe_prompt``).

    ``position``: the prompt's ``[[ ## … ## ]]`` sections in reverse order (the answer before the criteria);
    ``verbosity``: the answer padded with irrelevant text; ``label-order``: rubric items in reverse order;
    ``paraphrase``: the answer replaced by ``paraphrases[case id]`` (cases without one are asked unchanged).
    """

    kind: ProbeKind
    paraphrases: dict[str, str] = field(default_factory=dict)


@dataclass
class RunOptions:
    """Knobs of one run. CLI flags and eval_config.yaml fill the same object."""

    judge_model: Optional[str] = None
    """Judge model for LLM-based metrics (``-j/--judge-model``)."""
    threshold: Optional[float] = None
    """Overrides every builtin metric's default threshold (``-t/--threshold``)."""
    trajectory_match_type: Optional[TrajectoryMatchType] = None
    builtin_thresholds: BuiltinThresholds = "uniform"
    """Where a builtin metric's threshold comes from when neither its entry nor ``-t`` sets one."""
    group_by: GroupBy = "auto"
    strict: bool = False
    """NOT_EVALUATED fails the run too."""
    fail_on_evaluation_error: bool = False
    repeat_key: Optional[str] = None
    """What identifies a case when traces carry no eval id (see the repetitions docs); set, it asks for
    repetitions (so does ``pass_at_k``; else only traces marked ``agentevals.repeat_index`` are)."""
    pass_at_k: list[int] = field(default_factory=list)
    """k values for pass@k / pass^k; empty = k = n."""
    concurrency: int = field(default_factory=lambda: default_concurrency())
    """How many (case × evaluator) evaluations run at once, across all cases (``--concurrency``,
    ``concurrency:`` in eval_config.yaml); also the most worker processes one evaluator gets.
    Default: the number of cores. Under ``executor: ray``: evaluations at once in each Ray actor (default 1,
    one actor per CPU of the cluster)."""
    executor: str = "local"
    """Where the run's work goes (``--executor``): ``local`` (this process) or ``ray`` (batches of cases
    across a Ray cluster; the ``ray`` extra)."""
    ray_address: Optional[str] = None
    """The Ray cluster to use (``--ray-address``; default ``$RAY_ADDRESS``, else a local Ray instance)."""
    dump_inputs: Optional[Path] = None
    """Directory to write each EvalInput sent to an evaluator program into (``--dump-inputs``), as
    ``<evaluator>/<case id>.json``: replay one with ``agentevals evaluator run PATH --input FILE``."""
    trace_format: Optional[str] = None
    """Trace file format from the config (``-f`` overrides it)."""
    output: Optional[str] = None
    """Report format from the config (``-o`` overrides it)."""
    independent_cases: bool = False
    """Each case is its own evaluation (live sessions batched into one run): a single-case eval set pairs
    with every case, as it pairs with the only trace of a run (agentevals-cli 0.11's rule)."""
    notes: list[str] = field(default_factory=list)
    """Load-time notes for the run's report (e.g. a config path found relative to the working directory)."""
    write_back: bool = False
    """Results go back to the trace backends their traces came from after the run (``--write-back``,
    ``write_back:`` in eval_config.yaml). Done by the caller (``run``, the Python API; see
    ``agentevals.trace_sources.write_back``), not the engine; recorded with the run's options."""
    persistent_workers: bool = True
    """Offer persistent worker processes (protocol 1.2) to local ``type: code`` evaluators; ``False``
    (``--no-persistent-workers``, and with ``dump_inputs``) starts one process per evaluation, as in 1.0."""
    sample: Optional[float] = None
    """Share of sessions evaluated (``--sample``, ``sample:`` in eval_config.yaml), see ``engine.admission``."""
    filter: Optional[str] = None
    """Predicate a session must match to be evaluated (``--filter``, ``filter:``), see ``engine.admission``."""
    admissions: list[Admission] = field(default_factory=list)
    """Checks consulted before each (case × evaluator) evaluation runs (sampling, filters, judge budgets): the
    first that gives a ``Skip`` stands in for the evaluation (``engine.admission``)."""
    judge_prices: dict[str, dict[str, float]] = field(default_factory=dict)
    """USD per million tokens by judge model, ``{model: {"input": X, "output": Y}}`` (``judge_prices:``): over
    the built-in table (``agentevals.evaluators.pricing``) that prices ``details["judge_usage"]`` and budgets."""
    judge_ledger: Optional[JudgeLedger] = None
    """Rolling judge counts and spend that ``max_calls_per_hour`` / ``budget_usd_per_day`` are checked against
    (``engine.budget``): ``serve`` passes one ledger to every batch so budgets span them; None: the run's own."""
    credential_refs: Optional[dict[str, dict[str, Any]]] = None
    """Secret references of the run, logical name → ``{"kind": "env", "name": "OPENAI_API_KEY"}`` (agentevals-cli
    0.11's ``credentialRefs``; ``core.secrets``): what a builtin metric's ``credential_ref`` names. Locators only,
    recorded with the run. None: the run has none (judges read their keys from the environment)."""
    credentials: Optional[Credentials] = field(default=None, repr=False, compare=False)
    """The secrets of ``credential_refs``, resolved once when the run starts (``engine.run``). Never recorded:
    the run store, reports and command lines get the references only."""
    judge_probe: Optional[JudgeProbe] = None
    """A bias probe applied to every LLM judge prompt of the run (``agentevals calibrate --probes``); None: none."""
    read_context: Optional[ReadContext] = None
    """How pull sources read (``--since``, ``--since last``'s watermarks, the windows ``--resume`` re-reads)
    and, after the run, the window each one read (``ReadContext.windows``). None: the defaults. Under
    ``--executor ray`` the reader actor reads with its ``since``, watermarks and pinned windows, but the
    windows it read stay on the cluster (not recorded in the run store)."""


def default_concurrency() -> int:
    """The number of cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not on Linux
        return max(1, os.cpu_count() or 1)
