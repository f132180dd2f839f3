"""A small plugin registry: built-ins as lazy "module:attr" strings, entry points on a miss.

Evaluator types, builtin metrics, runtimes, executors and sources each have one ``Registry``.
Adding a plugin is one file plus one line in the registry's built-in table.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Iterable
from importlib.metadata import entry_points
from typing import Any, Generic, TypeVar

from ..errors import ConfigError

__all__ = ["Registry", "did_you_mean"]

T = TypeVar("T")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a close match exists, else an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Registry(Generic[T]):
    """Name → plugin object. ``kind`` names what it holds in messages ("evaluator type", "runtime")."""

    def __init__(self, kind: str, group: str, builtins: dict[str, str] | None = None) -> None:
        self.kind = kind
        self.group = group
        self._lazy: dict[str, str] = dict(builtins or {})
        self._loaded: dict[str, T] = {}
        self._entry_points_read = False

    def register(self, name: str, plugin: T | str, *, replace: bool = True) -> None:
        """Register ``plugin`` (an object, or a lazy ``"module:attr"`` string) under ``name``."""
        if not replace and name in self:
            raise ValueError(f"{self.kind} '{name}' is already registered")
        self._loaded.pop(name, None)
        self._lazy.pop(name, None)
        if isinstance(plugin, str):
            self._lazy[name] = plugin
        else:
            self._loaded[name] = plugin

    def __contains__(self, name: object) -> bool:
        return name in self._loaded or name in self._lazy

    def names(self) -> list[str]:
        self._read_entry_points()
        return sorted({*self._loaded, *self._lazy})

    def get(self, name: str) -> T:
        """Return the plugin, importing it on first use; unknown names raise ``ConfigError``."""
        if name not in self:
            self._read_entry_points()
        if name in self._loaded:
            return self._loaded[name]
        if name in self._lazy:
            module, _, attr = self._lazy.pop(name).partition(":")
            obj: Any = importlib.import_module(module)
            for part in attr.split("."):
                obj = getattr(obj, part)
            self._loaded[name] = obj
            return obj
        known = ", ".join(self.names()) or "none"
        raise ConfigError(f"unknown {self.kind} '{name}'{did_you_mean(name, self.names())}; known: {known}")

    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        self._entry_points_read = True
        for ep in entry_points(group=self.group):
            if ep.name not in self:
                self._lazy[ep.name] = ep.value
