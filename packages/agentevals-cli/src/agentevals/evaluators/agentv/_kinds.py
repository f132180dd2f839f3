"""AgentV's deterministic assertion kinds: one table, one row per kind, read by every consumer.

A row says everything about a kind: its spellings, what its ``value`` is, the check that scores it, the
name AgentV gives an unnamed entry, the sentence AgentV's transpiler writes for it and the line a
grading brief shows. Read by:

* the eval_config.yaml types (``assertions``: one evaluator class per row, registered under every
  spelling in ``agentevals.evaluators.EVALUATOR_TYPES``);
* ``agentevals eval assert <name>`` (``agentevals.judges``);
* ``agentevals transpile`` (``transpile._render``) and ``agentevals eval prompt`` (``transpile._prompt``).

**To add an assertion kind, add a row to** ``ASSERTION_KINDS`` **below** (its check usually goes in
``_checks``). At run time (a test, an embedding program) ``add_assertion_kind`` does the same::

    >>> from agentevals.evaluators.agentv import AssertionKind, find_assertion_kind
    >>> find_assertion_kind("is_json").auto_name
    'is-json'
    >>> find_assertion_kind("contains_any").spellings
    ('contains_any', 'contains-any')

Importing this module is cheap (no pydantic, no ``regex``): the registry reads the spellings from it
when ``agentevals.evaluators`` is imported, and a check named by a string is imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, Final, Literal

if TYPE_CHECKING:
    from ._checks import Check

__all__ = ["ASSERTION_KINDS", "AssertionKind", "AssertionKinds", "ValueKind", "add_assertion_kind", "find_assertion_kind",
           "registry_entries"]

ValueKind = Literal["string", "strings", "regex", "none"]
"""What an entry's ``value`` is: one non-empty text, a non-empty list of texts, a JavaScript pattern (one
text, with ``flags``), or nothing (the kind takes no value)."""

_CHECKS: Final = "agentevals.evaluators.agentv._checks"
_MODULE: Final = "agentevals.evaluators.agentv.assertions"
"""Where the evaluator class of each row is made (``<ClassName>`` there, generated on first use)."""


@dataclass(frozen=True, eq=False)  # a row is itself: compared and hashed by identity
class AssertionKind:
    """One deterministic AgentV assertion kind (scored 1 or 0 from the answer text alone).

    Templates are ``str.format`` patterns: ``{value}`` is the entry's value as text, ``{value_count}`` the
    length of a list value (``auto_name``); ``{values}`` a list value joined by ``', '`` (``instruction``).
    """

    name: str
    """AgentV's spelling (kebab-case): the name ``eval assert`` and the transpiler use."""
    value: ValueKind
    """What ``value:`` holds (see ``ValueKind``)."""
    check: str | Callable[..., Check]
    """The check: a callable, a function name in ``_checks``, or ``"module:function"``. Called as
    ``check(answer, **check_args)`` for ``none``, ``check(answer, value, **check_args)`` for ``string`` and
    ``strings``, ``check(answer, value, flags, **check_args)`` (plus ``timeout=``) for ``regex``; returns a
    ``Check``."""
    auto_name: str
    """The name AgentV gives an entry without one (``contains-any-{value_count}``)."""
    instruction: str | None
    """The sentence AgentV's transpiler writes into evals.json (``Output contains '{value}'``); None: it
    renders the entry only as ``<type> assertion``, as AgentV v2.19 does for ``icontains-any``."""
    summary: str
    """What passes, in one sentence: the evaluator class's docstring."""
    check_args: Mapping[str, Any] = field(default_factory=dict)
    """Keyword arguments of the check (``{"ignore_case": True}`` for the ``icontains`` family)."""
    brief: str | None = None
    """The grading brief's line (``agentevals eval prompt eval --grading-brief``); None: AgentV's default
    ``[<kind>] <value>``."""
    aliases: tuple[str, ...] = ()
    """Spellings besides ``name`` and its snake_case form (which are always accepted)."""

    @property
    def type_name(self) -> str:
        """The snake_case spelling: the evaluator class's ``name`` and a result row's ``type``."""
        return self.name.replace("-", "_")

    @property
    def spellings(self) -> tuple[str, ...]:
        """Every ``type:`` this kind answers to: snake_case, kebab-case, then the aliases."""
        return tuple(dict.fromkeys((self.type_name, self.name, *self.aliases)))

    @property
    def class_name(self) -> str:
        """The evaluator class's name: ``contains-any`` → ``ContainsAnyEvaluator``."""
        return "".join(part.capitalize() for part in self.name.replace("_", "-").split("-")) + "Evaluator"

    @cached_property
    def check_function(self) -> Callable[..., Check]:
        """``check`` imported (a string is resolved on first use, so the table stays cheap to import)."""
        if callable(self.check):
            return self.check
        module, _, attr = self.check.rpartition(":")
        function: Callable[..., Check] = getattr(importlib.import_module(module or _CHECKS), attr)
        return function

    def run(self, answer: str, value: Any = None, *, flags: str = "", timeout: float | None = None) -> Check:
        """Score ``answer`` against an already validated ``value`` (and ``flags`` for a pattern)."""
        check = self._bound
        if self.value == "none":
            return check(answer)
        if self.value == "regex":
            return check(answer, value, flags) if timeout is None else check(answer, value, flags, timeout=timeout)
        return check(answer, value)

    @cached_property
    def _bound(self) -> Callable[..., Check]:
        """The check with ``check_args`` applied (once per row: ``run`` is on every case's path)."""
        return partial(self.check_function, **self.check_args) if self.check_args else self.check_function


# name, value, check (a function of _checks), auto_name, instruction, summary[, check_args][, brief=…]
_ROWS: Final = (
    AssertionKind("contains", "string", "contains", "contains-{value}", "Output contains '{value}'",
                  "The answer contains ``value`` (case-sensitive, no trimming).",
                  brief="Output contains '{value}'"),
    AssertionKind("contains-any", "strings", "contains_any", "contains-any-{value_count}",
                  "Output contains any of: '{values}'",
                  "The answer contains at least one of ``value`` (case-sensitive)."),
    AssertionKind("contains-all", "strings", "contains_all", "contains-all-{value_count}",
                  "Output contains all of: '{values}'",
                  "The answer contains every one of ``value`` (case-sensitive)."),
    AssertionKind("icontains", "string", "contains", "icontains-{value}",
                  "Output contains (case-insensitive) '{value}'",
                  "The answer contains ``value``, ignoring case.", {"ignore_case": True}),
    AssertionKind("icontains-any", "strings", "contains_any", "icontains-any-{value_count}", None,
                  "The answer contains at least one of ``value``, ignoring case.", {"ignore_case": True}),
    AssertionKind("icontains-all", "strings", "contains_all", "icontains-all-{value_count}", None,
                  "The answer contains every one of ``value``, ignoring case.", {"ignore_case": True}),
    AssertionKind("starts-with", "string", "starts_with", "starts-with-{value}", "Output starts with '{value}'",
                  "The answer starts with ``value``, both trimmed."),
    AssertionKind("ends-with", "string", "ends_with", "ends-with-{value}", "Output ends with '{value}'",
                  "The answer ends with ``value``, both trimmed."),
    AssertionKind("regex", "regex", "regex", "regex-{value:.30}", "Output matches regex: {value}",
                  "The answer matches the JavaScript regular expression ``value`` (``flags`` like ``i``, ``m``)."),
    AssertionKind("is-json", "none", "is_json", "is-json", "Output is valid JSON",
                  "The answer parses as JSON (``JSON.parse`` rules: no NaN/Infinity)."),
    AssertionKind("equals", "string", "equals", "equals-{value}", "Output exactly equals: {value}",
                  "The answer equals ``value``, both trimmed."),
)
"""The table (AgentV v2.19's deterministic assertions, ``evaluators/assertions.ts``), in AgentV's order."""


class AssertionKinds(Mapping[str, AssertionKind]):
    """The table as a live mapping: AgentV name (kebab-case) → row; ``find`` takes any spelling."""

    def __init__(self, rows: tuple[AssertionKind, ...]) -> None:
        self._rows: dict[str, AssertionKind] = {}
        self._spellings: dict[str, AssertionKind] = {}
        for row in rows:
            self.add(row)

    def __getitem__(self, name: str) -> AssertionKind:
        return self._rows[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def find(self, spelling: Any) -> AssertionKind | None:
        """The row ``spelling`` names (``is_json``, ``is-json``…), else None."""
        return self._spellings.get(spelling) if isinstance(spelling, str) else None

    def add(self, row: AssertionKind, *, replace: bool = False) -> None:
        """Add ``row`` (``ValueError``: not kebab-case, a spelling of another row, an unknown value kind, or
        the name taken without ``replace``)."""
        if "_" in row.name or not row.name:
            raise ValueError(f"assertion kind '{row.name}': name it in AgentV's kebab-case "
                             f"('{row.name.replace('_', '-')}'); the snake_case spelling is accepted anyway")
        if row.name in self._rows and not replace:
            raise ValueError(f"assertion kind '{row.name}' already exists (replace=True replaces it)")
        taken = {s: self._spellings[s].name for s in row.spellings
                 if s in self._spellings and self._spellings[s].name != row.name}
        if taken:
            shown = ", ".join(f"'{s}' is kind '{k}'" for s, k in taken.items())
            raise ValueError(f"assertion kind '{row.name}': {shown}")
        if row.value not in ("string", "strings", "regex", "none"):
            raise ValueError(f"assertion kind '{row.name}': unknown value kind {row.value!r} "
                             "(string, strings, regex, none)")
        old = self._rows.get(row.name)
        for spelling in old.spellings if old else ():
            del self._spellings[spelling]
        self._rows[row.name] = row
        self._spellings.update(dict.fromkeys(row.spellings, row))


ASSERTION_KINDS: Final = AssertionKinds(_ROWS)
"""Every assertion kind, by AgentV name. Read it; add to it with ``add_assertion_kind``."""


def find_assertion_kind(spelling: Any) -> AssertionKind | None:
    """The assertion kind a ``type:`` names, in any spelling (``contains_any``, ``contains-any``), else None."""
    return ASSERTION_KINDS.find(spelling)


def registry_entries() -> dict[str, str]:
    """Each kind's ``type_name`` → its lazy ``"module:Class"``: the lines of ``EVALUATOR_TYPES`` (the other
    spellings are the class's ``aliases``)."""
    return {row.type_name: f"{_MODULE}:{row.class_name}" for row in ASSERTION_KINDS.values()}


def add_assertion_kind(row: AssertionKind, *, replace: bool = False) -> None:
    """Add a kind at run time: it then works as an eval_config.yaml ``type:`` (every spelling), in
    ``agentevals eval assert`` and in ``agentevals transpile`` / ``eval prompt``, like a row of the table.

    Raises:
        ValueError: one of its spellings belongs to another kind (or the name is taken, without ``replace``).
    """
    from .. import EVALUATOR_TYPES  # here, not at the top: the registry itself reads this module

    others = [s for s in row.spellings if s in EVALUATOR_TYPES and ASSERTION_KINDS.find(s) is None]
    if others:
        raise ValueError(f"assertion kind '{row.name}': evaluator type {', '.join(others)} already exists")
    ASSERTION_KINDS.add(row, replace=replace)
    EVALUATOR_TYPES.register(row.type_name, registry_entries()[row.type_name])
    from . import assertions

    assertions.forget(row)  # a replaced row gets a new class
