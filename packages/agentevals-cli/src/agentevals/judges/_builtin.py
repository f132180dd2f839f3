"""Deterministic assertions usable by name in ``agentevals eval assert`` (AgentV semantics, binary 0/1).

``contains``, ``icontains``, ``contains-any``/``-all``, ``icontains-any``/``-all``, ``starts-with``,
``ends-with``, ``regex`` (JavaScript syntax, ``flags`` i/m/s), ``is-json``, ``equals``; snake_case
aliases (``is_json``) are accepted. Each is a row of the AgentV assertion table
(``agentevals.evaluators.agentv._kinds``): the same check, hit and miss texts as the eval_config.yaml
type of that name, and a row added there is a name here.

A distribution adds another with an ``Assertion`` subclass in the ``agentevals.assertions`` entry-point
group (its ``name`` is the entry-point name)::

    class AcmeAssertion(Assertion):
        name = "acme"
        value_kind = "string"

        def check(self, output: str, value: Any, config: dict[str, Any]) -> Check:
            return Check("acme" in output, hit="says acme", miss="does not say acme")
"""

from __future__ import annotations

import abc
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from ..core._registry import Registry
from ..errors import ConfigError
from ..evaluators.agentv import ASSERTION_KINDS, AssertionKind, find_assertion_kind
from ..evaluators.agentv._checks import Check
from ._runner import JudgeResult

__all__ = ["ASSERTIONS", "BUILTIN_ASSERTIONS", "Assertion", "builtin_assertion_names", "find_assertion",
           "run_builtin_assertion"]

BUILTIN_ASSERTIONS: Final[Mapping[str, AssertionKind]] = ASSERTION_KINDS
"""Name (kebab-case) → its row of the AgentV assertion table (``evaluators.agentv._kinds``), live."""


class Assertion(abc.ABC):
    """A deterministic check usable by name in ``agentevals eval assert`` (binary: passed or not)."""

    name: ClassVar[str]
    """Registry key, entry-point name and ``eval assert NAME`` (kebab-case)."""
    aliases: ClassVar[tuple[str, ...]] = ()
    value_kind: ClassVar[str] = "string"
    """What ``--value`` must be: ``"string"`` (non-empty), ``"list"`` (one or more strings) or ``"none"``."""

    @abc.abstractmethod
    def check(self, output: str, value: Any, config: dict[str, Any]) -> Check:
        """Check ``output``; raise ``ConfigError`` (one line) for a value or config it cannot use."""


class _RowAssertion(Assertion):
    """A row of the AgentV assertion table, as an ``Assertion``."""

    def __init__(self, row: AssertionKind) -> None:
        self.name = row.name  # type: ignore[misc]  # a per-row name: each instance is one table row
        self.value_kind = "list" if row.value == "strings" else row.value  # type: ignore[misc]  # per row
        self.row = row

    def check(self, output: str, value: Any, config: dict[str, Any]) -> Check:
        try:
            return self.row.run(output, value, flags=str(config.get("flags") or ""))
        except re.error as exc:
            raise ConfigError(f"invalid regex {value!r}: {exc}") from None
        except ValueError as exc:
            if self.row.value != "regex":
                raise
            raise ConfigError(str(exc)) from None


ASSERTIONS: Registry[Assertion] = Registry("builtin assertion", "agentevals.assertions", base=Assertion,
                                           instantiate=True)
"""Third-party ``eval assert`` names (``agentevals.assertions`` entry points); the table's rows come first."""


def builtin_assertion_names() -> list[str]:
    """The names ``eval assert`` accepts besides discovered judges (kebab-case; snake_case also works)."""
    return sorted({*BUILTIN_ASSERTIONS, *ASSERTIONS.names()})


def find_assertion(name: str) -> Assertion | None:
    """The assertion called ``name`` (snake_case or kebab-case), None when there is none; ``ConfigError``
    for a plugin of that name that cannot be loaded."""
    row = find_assertion_kind(name)
    if row is not None:
        return _RowAssertion(row)
    key = name.replace("_", "-")
    try:
        return ASSERTIONS.get(key)
    except ConfigError:
        if key in ASSERTIONS:  # registered but broken: say so
            raise
        return None


def run_builtin_assertion(name: str, output: str, config: dict[str, Any]) -> JudgeResult:
    """Run builtin assertion ``name`` on ``output``; ``config`` holds ``value`` (and ``flags`` for regex).

    Raises:
        ConfigError: unknown name, a missing/ill-typed ``value``, or a regex that does not compile.
    """
    assertion = find_assertion(name)
    if assertion is None:
        raise ConfigError(
            f"unknown builtin assertion '{name}'; known: {', '.join(builtin_assertion_names())}"
        )
    kind = "string" if assertion.value_kind == "regex" else assertion.value_kind
    value = config.get("value")
    if kind == "list" and isinstance(value, str):
        value = [value]
    if kind == "string" and isinstance(value, list) and len(value) == 1:
        value = value[0]
    ok = {
        "string": isinstance(value, str) and value != "",
        "list": isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value),
        "none": True,
    }[kind]
    if not ok:
        wanted = "one or more strings" if kind == "list" else "a non-empty string"
        raise ConfigError(f"assertion '{assertion.name}' needs --value ({wanted}), got {value!r}")
    result = assertion.check(output, value, config)
    return JudgeResult(result.score, result.text, result.hits, result.misses)
