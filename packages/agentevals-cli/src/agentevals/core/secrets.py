"""Credential references: a run's ``credential_refs`` (logical name → ``{"kind": …, …locator}``) resolved once.

A run may carry references to secrets instead of the secrets themselves (agentevals-cli 0.11's
``credentialRefs``): ``{"judge": {"kind": "env", "name": "OPENAI_API_KEY"}}``. The engine resolves every
reference once when the run starts (``resolve_credential_refs``) and hands the values to the evaluators on
``RunOptions.credentials``; a builtin metric's ``credential_ref: judge`` names the entry its judge uses.

    refs = check_credential_refs({"judge": {"kind": "env", "name": "OPENAI_API_KEY"}})   # ConfigError if malformed
    credentials = await resolve_credential_refs(refs)
    key = credentials.value("judge")          # the secret, or None
    credentials.problem("judge")              # why it could not be resolved (one line), or None

Resolvers are a registry like every other plugin kind: ``env`` is built in (``EnvSecretResolver``, an
environment variable of this process), others come from the entry-point group
``agentevals.secret_resolvers`` (0.11's group, so 0.11 plugins keep working: the entry point's name is the
``kind``, its value a factory ``factory(ref: dict) -> resolver`` whose ``resolve(ref)`` returns the secret,
awaitable or not). ``register_secret_resolver(kind, factory)`` registers one from Python code.

Values never leave this object except through ``value``: its ``repr`` lists names only, problems never hold
a value, and ``RunOptions`` keeps it out of the run store and reports (the references are recorded).
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Optional, Protocol

from ..errors import ConfigError, first_line
from ._registry import Registry

__all__ = ["SECRET_RESOLVERS", "Credentials", "EnvSecretResolver", "SecretResolver", "check_credential_refs",
           "register_secret_resolver", "resolve_credential_refs"]


class SecretResolver(Protocol):
    """What a resolver factory returns: ``resolve(ref)`` gives the secret (a string), or raises why not."""

    def resolve(self, ref: dict[str, Any]) -> Any: ...


SECRET_RESOLVERS: Registry[Callable[[dict[str, Any]], SecretResolver]] = Registry(
    "secret resolver", "agentevals.secret_resolvers",
    {"env": "agentevals.core.secrets:EnvSecretResolver"},
)
"""``kind`` → factory (a class or a function taking the reference dict)."""


def register_secret_resolver(kind: str, factory: Callable[[dict[str, Any]], SecretResolver]) -> None:
    """Register (or replace) the resolver factory for ``kind`` from Python code (0.11's
    ``register_resolver_factory``)."""
    SECRET_RESOLVERS.register(kind, factory)


class EnvSecretResolver:
    """``{"kind": "env", "name": "OPENAI_API_KEY"}``: the value of an environment variable of this process."""

    name: ClassVar[str] = "env"

    def __init__(self, ref: Optional[Mapping[str, Any]] = None) -> None:
        pass

    async def resolve(self, ref: Mapping[str, Any]) -> str:
        var = ref.get("name")
        if not isinstance(var, str) or not var:
            raise ValueError("an env reference needs 'name' (the environment variable)")
        value = os.environ.get(var)
        if not value:
            raise ValueError(f"environment variable '{var}' is {'empty' if value == '' else 'not set'}")
        return value


def check_credential_refs(refs: Any, *, label: str = "credential_refs") -> dict[str, dict[str, Any]]:
    """``refs`` as a ``{name: {"kind": …, …}}`` map, or ``ConfigError`` (one line) when it is not one.

    Only the shape is checked here; whether a ``kind`` is known is decided when the run resolves it (an
    unknown kind, like an unset variable, makes the rows of the evaluators that use it errors)."""
    if not isinstance(refs, Mapping):
        raise ConfigError(f"{label}: expected an object of name → reference, e.g. "
                          '{"judge": {"kind": "env", "name": "OPENAI_API_KEY"}}, got ' + type(refs).__name__)
    checked: dict[str, dict[str, Any]] = {}
    for name, ref in refs.items():
        if not isinstance(name, str) or not name:
            raise ConfigError(f"{label}: a name must be a non-empty string, got {name!r}")
        if not isinstance(ref, Mapping):
            raise ConfigError(f"{label}: '{name}': expected a reference object such as "
                              f'{{"kind": "env", "name": "OPENAI_API_KEY"}}, got {type(ref).__name__}')
        if not isinstance(ref.get("kind"), str) or not ref.get("kind"):
            raise ConfigError(f"{label}: '{name}': missing 'kind' (e.g. \"env\")")
        checked[name] = dict(ref)
    return checked


class Credentials:
    """The secrets of one run's ``credential_refs``: each name's value, or why it has none."""

    def __init__(self, values: Mapping[str, str], problems: Mapping[str, str]) -> None:
        self._values = dict(values)
        self._problems = dict(problems)

    def value(self, name: str) -> Optional[str]:
        """The secret resolved for ``name``, or None."""
        return self._values.get(name)

    def problem(self, name: str) -> Optional[str]:
        """Why ``name`` has no value (one line, never a secret), or None when it has one."""
        if name in self._values:
            return None
        if name in self._problems:
            return f"could not be resolved: {self._problems[name]}"
        known = ", ".join(sorted({*self._values, *self._problems})) or "none"
        return f"is not in the run's credential_refs (names given: {known})"

    @property
    def names(self) -> list[str]:
        return sorted({*self._values, *self._problems})

    def __repr__(self) -> str:  # names only: a repr ends up in logs and tracebacks
        return f"Credentials(resolved={sorted(self._values)}, unresolved={sorted(self._problems)})"

    def __deepcopy__(self, memo: dict[int, Any]) -> Credentials:
        return self  # immutable; dataclasses.asdict(RunOptions) copies fields deeply


async def _resolve_one(ref: dict[str, Any]) -> str:
    factory = SECRET_RESOLVERS.get(ref["kind"])  # ConfigError: unknown kind (with the known ones)
    resolver = factory(ref)
    value = resolver.resolve(ref)
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str) or not value:
        got = "an empty string" if value == "" else type(value).__name__
        raise ValueError(f"the resolver returned {got}, not a secret string")
    return value


async def resolve_credential_refs(refs: Mapping[str, Mapping[str, Any]]) -> Credentials:
    """Resolve every reference once. One that cannot be resolved (an unknown kind, an unset variable, a
    resolver that raises) is recorded with its reason; the others are resolved all the same."""
    values: dict[str, str] = {}
    problems: dict[str, str] = {}
    for name, ref in check_credential_refs(refs).items():
        try:
            values[name] = await _resolve_one(ref)
        except ConfigError as exc:
            problems[name] = first_line(exc)
        except ValueError as exc:  # the resolver's own "why not" (0.11's resolvers raise ValueError)
            problems[name] = f"{ref['kind']}: {first_line(exc)}"
        except Exception as exc:  # a plugin may fail in any way: one line, without a traceback
            problems[name] = f"{ref['kind']}: {type(exc).__name__}: {first_line(exc)}"
    return Credentials(values, problems)
