"""``RegistryChoice``: a ``click.Choice`` whose choices are a plugin registry's names, read when needed.

The registry module is imported, and its entry-point group scanned, only when click needs the choices
(``--help`` or parsing that option), never when the CLI is imported: start-up stays fast.

    @click.option("-f", "--format", type=RegistryChoice("agentevals.traces.formats:TRACE_FORMATS"))
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Optional

import click

if TYPE_CHECKING:
    from ..core._registry import Registry

__all__ = ["RegistryChoice"]


class RegistryChoice(click.Choice):  # unparameterized: click < 8.4 has no Choice[T]
    """The canonical names of the registry at ``"module:attr"``; an alias is accepted and given as its name."""

    def __init__(self, registry: str, *, case_sensitive: bool = True) -> None:
        self._registry_path = registry
        super().__init__((), case_sensitive=case_sensitive)

    def registry(self) -> Registry[Any]:
        module, _, attr = self._registry_path.partition(":")
        return getattr(importlib.import_module(module), attr)

    @property  # click stores a tuple; ours is read from the registry each time
    def choices(self) -> tuple[str, ...]:
        return tuple(self.registry().names())

    @choices.setter
    def choices(self, value: Any) -> None:  # click.Choice.__init__ assigns (); the registry is the truth
        pass

    def convert(self, value: Any, param: Optional[click.Parameter], ctx: Optional[click.Context]) -> Any:
        if isinstance(value, str) and value not in self.choices and (value.lower() not in self.choices
                                                                      or self.case_sensitive):
            from ..errors import ConfigError

            try:  # an alias of some plugin: its canonical name
                return self.registry().key(value)
            except ConfigError:
                pass
        return super().convert(value, param, ctx)


class ChoicesInHelp(click.Option):
    """An option whose help text lists a registry's names (``{choices}`` in ``help``), read at ``--help``.

        @click.option("-o", cls=ChoicesInHelp, registry="agentevals.report:REPORT_FORMATS", help="Report: {choices}")
    """

    def __init__(self, *args: Any, registry: str, **kwargs: Any) -> None:
        self._choice = RegistryChoice(registry)
        super().__init__(*args, **kwargs)

    def get_help_record(self, ctx: click.Context) -> Optional[tuple[str, str]]:
        if self.help and "{choices}" in self.help:
            self.help = self.help.replace("{choices}", ", ".join(self._choice.choices))
        return super().get_help_record(ctx)
