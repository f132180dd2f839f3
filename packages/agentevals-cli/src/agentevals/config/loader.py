"""Load eval_config.yaml strictly: every mistake is reported with file:line:col before anything runs.

    evaluators:
      - name: tool_trajectory_avg_score      # builtin metric
        type: builtin
      - name: response_quality
        type: code
        path: ./evaluators/response_quality.py   # relative to this file (else to the working directory)
        threshold: 0.7
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, Literal, Optional

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
)

from ..core._docs import ATTRIBUTE_DOCS
from ..core._names import snake_case
from ..core._registry import Registry, did_you_mean
from ..core._validation import loc_path
from ..engine.options import BuiltinThresholds, RunOptions, TrajectoryMatchType
from ..errors import ConfigError
from ..evaluators import EVALUATOR_TYPES, BaseEvaluator

__all__ = ["EvalConfig", "LoadedEvaluator", "RunSettings", "build_evaluators", "load_config", "marked_loader",
           "parse_config"]


class _Mapping(dict):
    """A dict that remembers where it and each of its keys stood in the YAML file."""

    line: int = 0
    col: int = 0
    key_marks: dict[Any, tuple[int, int]]


class _Sequence(list):
    """A list that remembers where each item stood."""

    item_marks: list[tuple[int, int]]


@functools.cache
def marked_loader() -> type:
    """The YAML loader that records marks (built on first use: a run without a config never imports yaml)."""
    import yaml

    from ..core._yaml import BoundedLoader

    class _MarkedLoader(BoundedLoader, yaml.SafeLoader):
        def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> _Sequence:
            items = _Sequence(self.construct_object(child, deep=True) for child in node.value)
            items.item_marks = [(child.start_mark.line + 1, child.start_mark.column + 1) for child in node.value]
            return items

        def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> _Mapping:
            mapping = _Mapping()
            mapping.line, mapping.col = node.start_mark.line + 1, node.start_mark.column + 1
            mapping.key_marks = {}
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=deep)
                if key in mapping.key_marks:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"duplicate key '{key}'", key_node.start_mark)
                mapping[key] = self.construct_object(value_node, deep=True)
                mapping.key_marks[key] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            return mapping

    _MarkedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _MarkedLoader.construct_mapping)
    _MarkedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _MarkedLoader.construct_sequence)
    return _MarkedLoader


def _alert_rule(rule: str) -> str:
    """An ``alerts:`` rule that parses (``agentevals config validate`` names the column that does not)."""
    from .alert_rules import parse_rule

    try:
        parse_rule(rule)
    except ValueError as exc:
        raise ValueError(f"{rule!r}: {exc}") from None
    return rule


class RunSettings(BaseModel):
    """Top-level run settings allowed beside ``evaluators`` (CLI flags override them)."""

    # defer_build: built on first use, so that start-up pays only for the models a command uses
    model_config = ConfigDict(extra="forbid", defer_build=True, **ATTRIBUTE_DOCS)

    evaluators: list[Any] = Field(default_factory=list)
    """The evaluator entries, in output order."""
    eval_set: Optional[str] = None
    """ADK EvalSet JSON (``-e/--eval-set`` overrides it); relative to this file, else to the working directory."""
    judge_model: Optional[str] = None
    """Default judge model for LLM-based metrics."""
    trajectory_match_type: Optional[TrajectoryMatchType] = None
    """How tool_trajectory_avg_score matches tool calls: exact, in_order or any_order (any case)."""
    builtin_thresholds: BuiltinThresholds = "uniform"
    """Threshold of builtin metrics that set none: ``uniform`` (0.5 each, as agentevals-cli 0.11) or ``adk``
    (ADK's defaults: 1.0 for tool_trajectory_avg_score, 0.8 for response_match_score)."""
    trace_format: Optional[str] = None
    """Trace file format: ``jaeger-json``, ``otlp-json`` or a plugin's (``-f/--format`` overrides it; default:
    detected from content)."""
    output: Optional[str] = None
    """Report format: ``table``, ``json``, ``summary``, ``junit``, ``markdown``, ``html`` or a plugin's
    (``-o/--output`` overrides it)."""
    output_format: Optional[str] = None
    """Same as ``output`` (agentevals-cli 0.11's name)."""
    fail_on_evaluation_error: bool = False
    """Stop the run at the first evaluator exception (MASEval semantics)."""
    repeat_key: Optional[str] = None
    """What identifies a case across repetitions when traces carry no eval id."""
    pass_at_k: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)
    """k values for pass@k / pass^k (default: k = number of repetitions)."""
    concurrency: Optional[Annotated[int, Field(ge=1)]] = None
    """How many evaluations run at once, across all cases (default: the number of cores)."""
    write_back: bool = False
    """After the run, write each result back to the trace backend its trace came from (``--write-back``;
    ``agentevals run`` and the Python API, never ``serve``)."""
    sample: Optional[Annotated[float, Field(gt=0.0, le=1.0)]] = None
    """Share of sessions (or traces) evaluated, by a hash of the conversation (else trace) id: the same
    sessions for every evaluator, a lower rate's a subset of a higher one's (``--sample`` overrides it; an
    evaluator's own ``sample:`` applies within it). Default: every session."""
    filter: Optional[str] = None
    """Only sessions matching this predicate are evaluated, e.g. ``attr.deployment.environment == "prod"
    and duration > 2s`` (``--filter`` overrides it); the others are counted as filtered out."""
    alerts: list[Annotated[str, AfterValidator(_alert_rule)]] = Field(default_factory=list)
    """``serve``'s alert rules, e.g. ``tool_trajectory_avg_score pass_rate < 0.9 over 1h`` (``--alert`` adds)."""
    alert_webhook: Optional[str] = None
    """URL an alert's JSON body is POSTed to when it fires or clears (``--alert-webhook`` overrides it)."""
    judge_prices: dict[str, dict[str, float]] = Field(default_factory=dict)
    """USD per million tokens by judge model, ``{model: {input: X, output: Y}}``: overrides the built-in
    table that ``budget_usd_per_day`` prices judge calls with."""
    agentv_rules: Literal["auto", "2.19", "current"] = "auto"
    """AgentV's scoring rules for AgentV entries: ``2.19`` (verdict ``borderline`` from 0.6, counted as passing by a
    composite's ``threshold``), ``current`` (AgentV 4.2+: pass at 0.8, else fail) or ``auto``: ``current`` when an
    entry is written in AgentV's later format (``assert-set``, ``script``, ``metric:``, ``code-grader``, …)."""

    @field_validator("trajectory_match_type", "builtin_thresholds", "trace_format", "output", "output_format",
                     "agentv_rules", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:
        """Enum values in any case (0.11's README writes ``IN_ORDER``)."""
        return value.strip().lower() if isinstance(value, str) else value

    @field_validator("filter")
    @classmethod
    def _filter_parses(cls, value: Optional[str]) -> Optional[str]:
        """A filter expression that parses (``engine.filters``): its column in the message."""
        if value is not None:
            from ..engine.filters import FilterError, parse_filter

            try:
                parse_filter(value, label="")
            except FilterError as exc:
                raise ValueError(str(exc)) from None
        return value

    @field_validator("trace_format", "output", "output_format")
    @classmethod
    def _registered(cls, value: Optional[str], info: ValidationInfo) -> Optional[str]:
        """A name of the trace-format / report-format registry (plugins included); its canonical name."""
        if value is None:
            return None
        registry: Registry[Any]
        if info.field_name == "trace_format":
            from ..traces.formats import TRACE_FORMATS as registry
        else:
            from ..report.formats import REPORT_FORMATS as registry
        try:
            return registry.key(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None

    @field_validator("judge_prices")
    @classmethod
    def _prices(cls, value: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        """Each entry is exactly ``{input: X, output: Y}``, non-negative USD per million tokens."""
        from ..evaluators.pricing import check_price_table

        check_price_table(value)
        return value


@dataclass
class LoadedEvaluator:
    """A validated entry: the evaluator instance and where it came from."""

    evaluator: BaseEvaluator
    where: str
    """``file:line`` of the entry (or ``-m NAME`` for metrics given on the command line)."""


@dataclass
class EvalConfig:
    """A whole config: evaluators in order plus run settings."""

    evaluators: list[LoadedEvaluator] = field(default_factory=list)
    settings: RunSettings = field(default_factory=RunSettings)
    source: Optional[Path] = None
    base_dir: Optional[Path] = None
    """The config file's folder (relative paths resolve against it first)."""
    notes: list[str] = field(default_factory=list)
    """Load-time notes (``file:line: …``), e.g. a path found relative to the working directory."""


def _where(source: str, mark: tuple[int, int] | None) -> str:
    return f"{source}:{mark[0]}:{mark[1]}" if mark else source


def load_config(path: str | Path) -> EvalConfig:
    """Read and validate an eval_config.yaml. Raises ``ConfigError`` listing every problem, one per line."""
    from ..core._files import read_input
    from ..errors import InputFileError

    path = Path(path)
    if not path.exists():
        raise ConfigError(f"{path}: config file not found")
    try:  # bounded, and a pipe (``-c <(…)``) is read once within the input deadline
        text = read_input(path, expected="a YAML config file").decode("utf-8")
    except InputFileError as exc:
        raise ConfigError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from None
    return parse_config(text, source=str(path), base_dir=path.resolve().parent)


def parse_config(text: str, *, source: str = "<config>", base_dir: Path | None = None) -> EvalConfig:
    """Parse config text; relative paths resolve against ``base_dir`` (the config file's directory)."""
    import yaml

    try:
        data = yaml.load(text, Loader=marked_loader())
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = _where(source, (mark.line + 1, mark.column + 1) if mark else None)
        raise ConfigError(f"{where}: invalid YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source}: invalid YAML: {exc}") from None
    if data is None:
        data = _Mapping()
        data.key_marks = {}
    if not isinstance(data, _Mapping):  # every mapping _MarkedLoader builds is one
        got = "a list" if isinstance(data, list) else f"{type(data).__name__} {data!r}"
        raise ConfigError(f"{source}: the config must be a mapping with an 'evaluators' list, got {got}")
    errors: list[str] = []
    try:
        settings = RunSettings.model_validate(dict(data))
    except ValidationError as exc:
        errors += _describe(exc, data, source, "the config", RunSettings)
        settings = RunSettings()
    if not isinstance(data.get("evaluators", []), list):
        raise ConfigError(f"{_where(source, data.key_marks.get('evaluators'))}: 'evaluators' must be a list")
    config = EvalConfig(settings=settings, source=Path(source) if source != "<config>" else None,
                        base_dir=base_dir)
    entries = data.get("evaluators") or []
    errors += _build_entries(entries, source, base_dir or Path.cwd(), config)
    _apply_agentv_rules(config, entries, source)
    if errors:
        raise ConfigError("\n".join(errors))
    return config


def _build_entries(entries: list[Any], source: str, base_dir: Path, config: EvalConfig) -> list[str]:
    errors: list[str] = []
    names: dict[str, str] = {}
    options = RunOptions()
    for index, entry in enumerate(entries):
        mark = (entry.line, entry.col) if isinstance(entry, _Mapping) else (
            entries.item_marks[index] if isinstance(entries, _Sequence) else None)
        where = _where(source, mark)
        if not isinstance(entry, dict):
            errors.append(f"{where}: evaluators[{index}] must be a mapping with 'name' and 'type'")
            continue
        label = f"evaluator '{entry.get('name')}'" if entry.get("name") else f"evaluators[{index}]"
        type_name = entry.get("type")
        if not isinstance(type_name, str) or not type_name:
            errors.append(f"{where}: {label} has no 'type' (one of: {', '.join(EVALUATOR_TYPES.names())})")
            continue
        try:
            cls = EVALUATOR_TYPES.get(type_name)
        except ConfigError as exc:
            key_where = _where(source, entry.key_marks.get("type") if isinstance(entry, _Mapping) else mark)
            errors.append(f"{key_where}: {label}: {exc}")
            continue
        entry = _snake_case_keys(entry, cls.Config)
        try:
            model = cls.Config.model_validate(dict(entry))
        except ValidationError as exc:
            errors += _describe(exc, entry, source, label, cls.Config)
            continue
        if model.name in names:
            errors.append(f"{where}: duplicate evaluator name '{model.name}' (first defined at {names[model.name]})")
            continue
        names[model.name] = where
        evaluator = cls(model, base_dir=base_dir, options=options)
        try:
            evaluator.check()
        except ConfigError as exc:
            errors.append(f"{where}: evaluator '{model.name}': {exc}")
            continue
        config.evaluators.append(LoadedEvaluator(evaluator, where))
        config.notes += [f"{where}: evaluator '{model.name}': {note}" for note in evaluator.notes]
    return errors


def _apply_agentv_rules(config: EvalConfig, entries: list[Any], source: str) -> None:
    """Score every AgentV entry under the rules of the format the config is written in (``agentv_rules:``
    chooses); a note says when that is AgentV's current format, whose rules differ from v2.19's."""
    from ..evaluators.agentv._base import AgentVEvaluator
    from ..evaluators.agentv._rules import current_spelling, detect_rules

    agentv = [e.evaluator for e in config.evaluators if isinstance(e.evaluator, AgentVEvaluator)]
    chosen = config.settings.agentv_rules
    rules = detect_rules(entries) if chosen == "auto" else chosen
    for evaluator in agentv:
        evaluator.use_rules(rules)
    if agentv and chosen == "auto" and rules == "current":
        index, spelling = next((i, found) for i, e in enumerate(entries) if (found := current_spelling(e)))
        entry = entries[index]
        where = _where(source, (entry.line, entry.col) if isinstance(entry, _Mapping) else None)
        config.notes.append(f"{where}: AgentV entries are scored under AgentV's current rules (no 'borderline' "
                            f"verdict: below 0.8 is 'fail'), as this entry is in its later format ({spelling}); "
                            "set agentv_rules: 2.19 for v2.19's")


def _snake_case_keys(entry: Any, model: type[BaseModel]) -> Any:
    """agentevals-cli 0.11 also read builtin entries' keys in camelCase (``judgeModel``): a camelCase key
    whose snake_case form is a field of ``model`` is read as that field (its position kept for messages)."""
    if not isinstance(entry, _Mapping):
        return entry
    renamed = {key: snake for key in entry if isinstance(key, str)
               and (snake := snake_case(key)) != key
               and snake in model.model_fields and snake not in entry}
    if not renamed:
        return entry
    out = _Mapping({renamed.get(k, k): v for k, v in entry.items()})
    out.line, out.col = entry.line, entry.col
    out.key_marks = {renamed.get(k, k): mark for k, mark in entry.key_marks.items()}
    return out


def _model_at(model: type[BaseModel], path: tuple[Any, ...]) -> Optional[type[BaseModel]]:
    """The pydantic model that validates the mapping at ``path`` inside ``model`` (None when unknown)."""
    import typing

    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        if not (isinstance(current, type) and issubclass(current, BaseModel)) or part not in current.model_fields:
            return None
        annotation = current.model_fields[part].annotation
        candidates = [annotation, *typing.get_args(annotation)]
        current = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        for arg in typing.get_args(annotation):  # list[Model] / dict[str, Model]
            current = current or next((c for c in typing.get_args(arg) if isinstance(c, type)
                                       and issubclass(c, BaseModel)), None)
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def _mark_at(entry: Any, loc: tuple[Any, ...]) -> Optional[tuple[int, int]]:
    """The position of the deepest key of ``loc`` that the YAML recorded."""
    node, mark = entry, None
    for part in loc:
        if isinstance(node, _Mapping) and part in node.key_marks:
            mark = node.key_marks[part]
        elif isinstance(node, _Sequence) and isinstance(part, int) and part < len(node.item_marks):
            mark = node.item_marks[part]
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            break
    return mark


def _describe(exc: ValidationError, entry: Any, source: str, label: str, model: type[BaseModel]) -> list[str]:
    """One line per pydantic error: file:line:col, what, the value, and a suggestion for typos."""
    lines = []
    entry_mark = (entry.line, entry.col) if isinstance(entry, _Mapping) else None
    for item in exc.errors():
        loc = tuple(item.get("loc", ()))
        where = _where(source, _mark_at(entry, loc) or entry_mark)
        if item.get("type") == "extra_forbidden":
            key = loc[-1] if loc else "?"
            parent = _model_at(model, loc[:-1])
            hint = did_you_mean(str(key), parent.model_fields) if parent else ""
            at = f" at {loc_path(loc)}" if len(loc) > 1 else ""
            lines.append(f"{where}: unknown key '{key}' in {label}{at}{hint}")
            continue
        message = item.get("msg", "invalid").removeprefix("Value error, ")
        value = f" (got {item['input']!r})" if item.get("type") not in ("missing", "value_error") and "input" in item else ""
        lines.append(f"{where}: {label}: {loc_path(loc) or 'entry'}: {message}{value}")
    return lines


def build_evaluators(metric_names: list[str], *, options: RunOptions, existing: list[str]) -> list[LoadedEvaluator]:
    """Builtin metric entries for ``-m NAME`` flags not already in the config (checked like config entries)."""
    cls = EVALUATOR_TYPES.get("builtin")
    out: list[LoadedEvaluator] = []
    errors = []
    for name in metric_names:
        if name in existing or any(e.evaluator.config.name == name for e in out):
            continue
        evaluator = cls(cls.Config(name=name, type="builtin"), base_dir=Path.cwd(), options=options)
        try:
            evaluator.check()
        except ConfigError as exc:
            errors.append(f"-m {name}: {exc}")
            continue
        out.append(LoadedEvaluator(evaluator, f"-m {name}"))
    if errors:
        raise ConfigError("\n".join(errors))
    return out
