"""Deterministic assertions usable by name in ``agentevals eval assert`` (AgentV semantics, binary 0/1).

``contains``, ``icontains``, ``contains-any``/``-all``, ``icontains-any``/``-all``, ``starts-with``,
``ends-with``, ``regex`` (JavaScript syntax, ``flags`` i/m/s), ``is-json``, ``equals``; snake_case
aliases (``is_json``) are accepted. The checks and their hit/miss texts are the AgentV family's
(``agentevals.evaluators.agentv._checks``), the same as the eval_config.yaml types of these names.

They are the built-ins of the ``ASSERTIONS`` registry; a distribution adds one with an ``Assertion`` subclass
in the ``agentevals.assertions`` entry-point group (its ``name`` is the entry-point name)::

    class AcmeAssertion(Assertion):
        name = "acme"
        value_kind = "string"

        def check(self, output: str, value: Any, config: dict[str, Any]) -> Check:
            return Check("acme" in output, hit="says acme", miss="does not say acme")
"""

from __future__ import annotations

import abc
import re
from collections.abc import Callable
from typing import Any, ClassVar, Final

from .._registry import Registry
from ..errors import ConfigError
from ..evaluators.agentv import _checks as checks
from ._runner import JudgeResult

__all__ = ["ASSERTIONS", "BUILTIN_ASSERTIONS", "Assertion", "builtin_assertion_names", "find_assertion",
           "run_builtin_assertion"]


def _regex(output: str, pattern: str, config: dict[str, Any]) -> checks.Check:
    try:
        return checks.regex(output, pattern, str(config.get("flags") or ""))
    except re.error as exc:
        raise ConfigError(f"invalid regex {pattern!r}: {exc}") from None
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


_STRING, _LIST, _NONE = "string", "list", "none"
# name → (kind of value, check(output, value, config))
BUILTIN_ASSERTIONS: Final[dict[str, tuple[str, Callable[[str, Any, dict[str, Any]], checks.Check]]]] = {
    "contains": (_STRING, lambda out, v, _: checks.contains(out, v)),
    "icontains": (_STRING, lambda out, v, _: checks.contains(out, v, ignore_case=True)),
    "contains-any": (_LIST, lambda out, v, _: checks.contains_any(out, v)),
    "icontains-any": (_LIST, lambda out, v, _: checks.contains_any(out, v, ignore_case=True)),
    "contains-all": (_LIST, lambda out, v, _: checks.contains_all(out, v)),
    "icontains-all": (_LIST, lambda out, v, _: checks.contains_all(out, v, ignore_case=True)),
    "starts-with": (_STRING, lambda out, v, _: checks.starts_with(out, v)),
    "ends-with": (_STRING, lambda out, v, _: checks.ends_with(out, v)),
    "equals": (_STRING, lambda out, v, _: checks.equals(out, v)),
    "regex": (_STRING, _regex),
    "is-json": (_NONE, lambda out, _v, _c: checks.is_json(out)),
}


class Assertion(abc.ABC):
    """A deterministic check usable by name in ``agentevals eval assert`` (binary: passed or not)."""

    name: ClassVar[str]
    """Registry key, entry-point name and ``eval assert NAME`` (kebab-case)."""
    aliases: ClassVar[tuple[str, ...]] = ()
    value_kind: ClassVar[str] = _STRING
    """What ``--value`` must be: ``"string"`` (non-empty), ``"list"`` (one or more strings) or ``"none"``."""

    @abc.abstractmethod
    def check(self, output: str, value: Any, config: dict[str, Any]) -> checks.Check:
        """Check ``output``; raise ``ConfigError`` (one line) for a value or config it cannot use."""


class _TableAssertion(Assertion):
    """A row of ``BUILTIN_ASSERTIONS``."""

    def __init__(self, name: str, kind: str, check: Callable[[str, Any, dict[str, Any]], checks.Check]) -> None:
        self.name = name  # type: ignore[misc]  # a per-row name: each instance is one built-in
        self.value_kind = kind  # type: ignore[misc]
        self._check = check

    def check(self, output: str, value: Any, config: dict[str, Any]) -> checks.Check:
        return self._check(output, value, config)


ASSERTIONS: Registry[Assertion] = Registry("builtin assertion", "agentevals.assertions", base=Assertion,
                                           instantiate=True)
"""``eval assert`` names → ``Assertion``; third-party ones come from the ``agentevals.assertions`` entry points."""
for _name, (_kind, _check) in BUILTIN_ASSERTIONS.items():
    ASSERTIONS.register(_name, _TableAssertion(_name, _kind, _check))


def builtin_assertion_names() -> list[str]:
    """The names ``eval assert`` accepts besides discovered judges (kebab-case; snake_case also works)."""
    return ASSERTIONS.names()


def find_assertion(name: str) -> Assertion | None:
    """The assertion called ``name`` (snake_case or kebab-case), None when there is none; ``ConfigError``
    for a plugin of that name that cannot be loaded."""
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
    key = name.replace("_", "-")
    assertion = find_assertion(name)
    if assertion is None:
        raise ConfigError(
            f"unknown builtin assertion '{name}'; known: {', '.join(builtin_assertion_names())}"
        )
    kind, check = assertion.value_kind, assertion.check
    value = config.get("value")
    if kind == _LIST and isinstance(value, str):
        value = [value]
    if kind == _STRING and isinstance(value, list) and len(value) == 1:
        value = value[0]
    ok = {
        _STRING: isinstance(value, str) and value != "",
        _LIST: isinstance(value, list) and bool(value) and all(isinstance(v, str) for v in value),
        _NONE: True,
    }[kind]
    if not ok:
        wanted = "a non-empty string" if kind == _STRING else "one or more strings"
        raise ConfigError(f"assertion '{key}' needs --value ({wanted}), got {value!r}")
    result = check(output, value, config)
    return JudgeResult(result.score, result.text, result.hits, result.misses)
