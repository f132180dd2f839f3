"""One plugin rule for every kind: a small registry with lazy built-ins, entry points on a miss.

Each kind of plugin has one ``Registry``: evaluator types, builtin metrics, runtimes, executors, evaluator
sources, report formats and trace formats (and whatever kind comes next: run-level executors, trace
sources). The rule, the same for every kind:

- A plugin is a class with ``name: ClassVar[str]`` — the registry key, the entry-point name and the YAML
  ``type:`` / CLI choice — and optional ``aliases: ClassVar[tuple[str, ...]]`` (other spellings).
- Built-ins are registered exactly like third-party plugins: one lazy ``"module:attr"`` string per class,
  imported on first use. Third-party plugins come from the kind's entry-point group, read only when a name
  is not built in. Aliases come from the classes, never as extra keys.
- A plugin is validated when it loads (as pluggy validates at registration): it must subclass the kind's
  ``base`` and its ``name`` must be the key it was registered under (or one of its ``aliases``). A plugin
  that cannot be imported is one ``ConfigError`` naming the entry point and its distribution; it stays
  registered, so the next lookup says the same thing (never "unknown").
- ``instantiate=True``: the registry hands out instances; a class is instantiated (no arguments) on first
  use and the instance kept.

Adding a kind (e.g. the engine's run-level executors)::

    RUN_EXECUTORS: Registry[type[RunPool]] = Registry(
        "run executor", "agentevals.run_executors",
        {"local": "agentevals.engine.local:LocalRunExecutor"},     # one line per class, keyed by its name
        base=RunExecutor,
    )
    cls = RUN_EXECUTORS.get("ray")          # imports on first use; ConfigError for unknown or broken ones
    RUN_EXECUTORS.names()                   # canonical names (built-ins and entry points), for choices
    RUN_EXECUTORS.register("mine", MyRunExecutor)   # from Python code

A third-party distribution declares the same key in its packaging metadata::

    [project.entry-points."agentevals.run_executors"]
    ray = "acme_ray:RayRunExecutor"         # RayRunExecutor.name == "ray"
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..errors import ConfigError

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["Registry", "did_you_mean", "plugin_name"]

T = TypeVar("T")


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` when a close match exists, else an empty string."""
    import difflib  # only for a name that is not known

    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


def plugin_name(plugin: object) -> str | None:
    """The ``name`` a plugin class (or instance) declares, or None when it declares no string."""
    name = getattr(plugin, "name", None)
    return name if isinstance(name, str) and name else None


def _aliases(plugin: object) -> tuple[str, ...]:
    aliases = getattr(plugin, "aliases", ())
    return tuple(a for a in aliases if isinstance(a, str) and a) if isinstance(aliases, (tuple, list)) else ()


def _describe(obj: object) -> str:
    if isinstance(obj, type):
        return f"class {obj.__module__}.{obj.__qualname__}"
    return f"{type(obj).__name__} {getattr(obj, '__qualname__', '') or repr(obj)[:60]}".rstrip()


class Registry(Generic[T]):
    """Name → plugin. ``kind`` names what it holds in messages ("evaluator type", "runtime").

    Args:
        kind: What the registry holds, for messages.
        group: The entry-point group third-party plugins are read from.
        builtins: Canonical name → lazy ``"module:attr"`` (one line per class).
        base: When given, a loaded plugin must be a subclass (or an instance) of it.
        instantiate: Hand out instances: a class is instantiated on first use and the instance kept.
    """

    def __init__(self, kind: str, group: str, builtins: dict[str, str] | None = None, *,
                 base: type | None = None, instantiate: bool = False) -> None:
        self.kind = kind
        self.group = group
        self.base = base
        self.instantiate = instantiate
        self._lazy: dict[str, str | EntryPoint] = dict(builtins or {})
        """Not yet imported: built-ins as "module:attr", third-party plugins as their entry point."""
        self._loaded: dict[str, T] = {}
        self._aliases: dict[str, str] = {}
        """Alias → key, for the plugins loaded so far."""
        self._entry_points_read = False
        self._lock = threading.RLock()  # ``serve`` looks plugins up from worker threads

    def register(self, name: str, plugin: T | str, *, replace: bool = True) -> None:
        """Register ``plugin`` (an object, or a lazy ``"module:attr"`` string) under ``name``.

        A class (or, with ``instantiate``, an instance) is checked against ``base`` at once (``TypeError``); its
        ``name`` may differ from the key: Python code chooses its own key (``register_runtime(rt, name="go2")``)
        and may register a plain factory function where the kind's consumers call one (executors).
        """
        if not replace and name in self:
            raise ValueError(f"{self.kind} '{name}' is already registered")
        if isinstance(plugin, type) or (self.instantiate and not isinstance(plugin, str)):
            problem = self._base_problem(plugin)  # (a plain factory from Python code is taken as it is)
            if problem:
                raise TypeError(f"{self.kind} '{name}': {problem}")
        with self._lock:
            self._loaded.pop(name, None)
            self._lazy.pop(name, None)
            self._aliases = {a: k for a, k in self._aliases.items() if k != name and a != name}
            if isinstance(plugin, str):
                self._lazy[name] = plugin
            else:
                self._loaded[name] = plugin
                self._add_aliases(name, plugin)

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is known without importing anything (a key, or an alias of a loaded plugin)."""
        return name in self._loaded or name in self._lazy or name in self._aliases

    def names(self, *, aliases: bool = False) -> list[str]:
        """The registered names (built-ins and entry points), sorted; with ``aliases``, every spelling
        (this imports the plugins to read their aliases)."""
        with self._lock:
            self._read_entry_points()
            if aliases:
                self._load_all()
            return sorted({*self._loaded, *self._lazy, *(self._aliases if aliases else ())})

    def get(self, name: str) -> T:
        """Return the plugin, importing it on first use.

        Raises:
            ConfigError: unknown name (with the known ones and a "did you mean"), a plugin that cannot be
                imported, or one that breaks the rule (wrong base class, a ``name`` that is not its key).
        """
        with self._lock:
            key = self._key(name)
            if key is not None:
                return self._load(key)
            self._load_all(strict=False)  # every spelling, for the "did you mean"
            spellings = sorted({*self._loaded, *self._lazy, *self._aliases})
            known = ", ".join(sorted({*self._loaded, *self._lazy})) or "none"
        raise ConfigError(f"unknown {self.kind} '{name}'{did_you_mean(name, spellings)}; known: {known}")

    def key(self, name: str) -> str:
        """The canonical name of ``name`` (itself, or the plugin an alias belongs to); ``ConfigError`` if unknown."""
        with self._lock:
            self.get(name)
            resolved = self._key(name)
        assert resolved is not None  # get() succeeded
        return resolved

    # -- lookup -----------------------------------------------------------------------------------------

    def _key(self, name: str) -> str | None:
        """The key ``name`` stands for, loading only what is needed to find an alias."""
        if name in self._loaded or name in self._lazy:
            return name
        if name in self._aliases:
            return self._aliases[name]
        # Fast path for the common aliases (``code-judge`` of ``code_judge``): load that one plugin only.
        for variant in {name.replace("-", "_"), name.replace("_", "-")} - {name}:
            if variant in self._lazy or variant in self._loaded:
                self._try_load(variant)
                if name in self._aliases:
                    return self._aliases[name]
        # Then the plugins themselves, built-ins first in table order, stopping at the first that has it; one
        # that cannot be loaded is skipped here (asked for by its own name, it says why).
        if self._load_until(name, builtins=True):
            return self._aliases[name]
        self._read_entry_points()
        if name in self._lazy:
            return name
        return self._aliases[name] if self._load_until(name, builtins=False) else None

    def _load_until(self, alias: str, *, builtins: bool) -> bool:
        for key, spec in list(self._lazy.items()):
            if isinstance(spec, str) == builtins and key in self._lazy:
                self._try_load(key)
                if alias in self._aliases:
                    return True
        return False

    def _load_all(self, *, strict: bool = True) -> None:
        for key in list(self._lazy):
            if strict:
                self._load(key)
            else:
                self._try_load(key)

    def _try_load(self, key: str) -> None:
        try:
            self._load(key)
        except ConfigError:
            pass

    def _read_entry_points(self) -> None:
        if self._entry_points_read:
            return
        from importlib.metadata import entry_points  # only on a miss: it costs a scan of site-packages

        self._entry_points_read = True
        for ep in entry_points(group=self.group):
            if ep.name not in self._lazy and ep.name not in self._loaded:
                self._lazy[ep.name] = ep

    # -- loading and the rule ---------------------------------------------------------------------------

    def _origin(self, key: str, spec: str | EntryPoint) -> str:
        if isinstance(spec, str):
            return f"built-in {self.kind} '{key}' ({spec})"
        dist = spec.dist  # None for an entry point made by hand
        where = f" from distribution '{dist.name} {dist.version}'" if dist is not None else ""
        return f"entry point '{spec.name}' (group {self.group}){where}"

    def _load(self, key: str) -> T:
        if key in self._loaded:
            return self._loaded[key]
        spec = self._lazy[key]
        origin = self._origin(key, spec)
        try:
            obj: Any = _import(spec)
        except Exception as exc:  # a plugin may fail in any way: one line, and it stays registered
            reason = str(exc).splitlines()[0] if str(exc) else ""
            raise ConfigError(f"{origin} could not be imported: {type(exc).__name__}: {reason}".rstrip(": ")) from None
        problem = self._base_problem(obj) or self._name_problem(key, obj)
        if problem:
            raise ConfigError(f"{origin}: {problem}")
        if self.instantiate and isinstance(obj, type):
            try:
                obj = obj()
            except Exception as exc:  # a third-party constructor: one line
                raise ConfigError(f"{origin}: {obj.__name__}() failed: {type(exc).__name__}: {exc}") from None
            problem = self._name_problem(key, obj)
            if problem:
                raise ConfigError(f"{origin}: {problem}")
        self._lazy.pop(key, None)
        self._loaded[key] = obj
        self._add_aliases(key, obj)
        return obj

    def _base_problem(self, obj: object) -> str | None:
        if self.base is None:
            return None
        if isinstance(obj, type) and issubclass(obj, self.base):
            return None
        if isinstance(obj, self.base):
            return None
        return f"{_describe(obj)} is not a subclass of {self.base.__module__}.{self.base.__qualname__}"

    def _name_problem(self, key: str, obj: object) -> str | None:
        name = plugin_name(obj)
        if name is None:
            if isinstance(obj, type) and self.instantiate:
                return None  # a ``name`` property (older plugins): checked on the instance
            if self.base is None:
                return None  # a plain function (a factory): its key is its name
            return f"{_describe(obj)} declares no name (a 'name' ClassVar equal to '{key}')"
        if name != key and key not in _aliases(obj):
            return f"{_describe(obj)} is named '{name}', not '{key}' (the entry-point name must be the plugin's name)"
        return None

    def _add_aliases(self, key: str, obj: object) -> None:
        for alias in _aliases(obj):
            if alias != key and alias not in self._lazy and alias not in self._loaded:
                self._aliases.setdefault(alias, key)


def _import(spec: str | EntryPoint) -> Any:
    if not isinstance(spec, str):
        return spec.load()
    module, _, attr = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj
