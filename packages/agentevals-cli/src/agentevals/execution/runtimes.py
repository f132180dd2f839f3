"""Runtimes: which interpreter runs an evaluator file, chosen by its extension.

Built in: ``python`` (``.py``, the CLI's own interpreter or a cached venv) and ``node`` (``.js``,
``.mjs``, ``.cjs``, ``.ts``). A new language is one ``Runtime`` subclass plus ``register_runtime()``;
the ``code`` evaluator's extension check and the runner pick it up from the registry.

Example:
    ```python
    class GoRuntime(Runtime):
        @property
        def extensions(self) -> tuple[str, ...]:
            return (".go",)

        def build_command(self, path: Path) -> list[str]:
            go = shutil.which("go")
            if not go:
                raise RuntimeError("Go not found on PATH")
            return [go, "run", str(path)]

    register_runtime(GoRuntime())
    ```
"""

from __future__ import annotations

import abc
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

from ..core._registry import Registry
from ..errors import ConfigError
from .deadline import Deadline
from .environments import TSX_VERSION as TSX_VERSION  # its home is where it is installed; named here too
from .environments import ensure_node_modules, ensure_python_env

__all__ = [
    "RUNTIMES",
    "NodeRuntime",
    "PythonRuntime",
    "Runtime",
    "RuntimeSupport",
    "get_runtime",
    "get_runtimes",
    "register_runtime",
    "runtime_for",
    "supported_extensions",
]

TSX_ENV = "AGENTEVALS_TSX"
"""Path of a ``tsx`` executable to run ``.ts`` evaluators with (overrides every other choice)."""


@dataclass(frozen=True)
class RuntimeSupport:
    """One line of ``agentevals evaluator runtimes``: what runs files with these extensions, or why not."""

    extensions: tuple[str, ...]
    available: bool
    detail: str
    """Interpreter and version when available, else the reason and the fix."""


class Runtime(abc.ABC):
    """Maps file extensions to the command that runs such a file."""

    name: ClassVar[str]
    """Registry key and entry-point name; by default the class name without ``Runtime``, lower-cased
    (``GoRuntime`` → ``go``)."""
    aliases: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not any("name" in vars(c) for c in cls.__mro__):  # the first class that declares none: derived
            cls.name = re.sub(r"Runtime$", "", cls.__name__).lower() or cls.__name__.lower()

    @property
    @abc.abstractmethod
    def extensions(self) -> tuple[str, ...]:
        """File extensions this runtime handles, with the dot (``(".py",)``)."""

    @abc.abstractmethod
    def build_command(self, path: Path) -> list[str]:
        """The argv that runs ``path``; raise ``RuntimeError`` (one line, with the fix) when it cannot."""

    def is_available(self) -> bool:
        """Whether the interpreter exists on this machine."""
        try:
            self.build_command(Path(f"__probe__{self.extensions[0]}"))
        except RuntimeError:
            return False
        return True

    def version(self) -> str | None:
        """Interpreter version for reports, when known."""
        return None

    def check(self, path: Path) -> None:
        """Load-time check that ``path`` can run here; raise ``RuntimeError`` with the fix if not."""
        self.build_command(path)

    async def prepare(self, path: Path, *, deadline: Deadline) -> list[str]:
        """Install what ``path`` needs (dependencies declared next to it), then return its command."""
        return self.build_command(path)

    def support(self, where: Path) -> list[RuntimeSupport]:
        """What this runtime can run for files in ``where`` (for ``agentevals evaluator runtimes``)."""
        try:
            command = self.build_command(where / f"__probe__{self.extensions[0]}")
        except RuntimeError as exc:
            return [RuntimeSupport(tuple(self.extensions), False, str(exc))]
        return [RuntimeSupport(tuple(self.extensions), True, self.version() or command[0])]


@lru_cache(maxsize=32)
def _first_line(*cmd: str) -> str | None:
    """First line a ``--version`` style command prints, or None when it cannot run."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = (proc.stdout or proc.stderr).strip().splitlines()
    return lines[0].strip() if proc.returncode == 0 and lines else None


class PythonRuntime(Runtime):
    """``.py`` files: the CLI's own interpreter (where ``agentevals_evaluator_sdk`` is installed) or,
    when the evaluator's directory has a ``requirements.txt``, a cached venv built from it."""

    def __init__(self, python_path: str | Path | None = None) -> None:
        self._exe = str(python_path) if python_path else None

    name = "python"

    @property
    def extensions(self) -> tuple[str, ...]:
        return (".py",)

    @property
    def executable(self) -> str:
        return self._exe or sys.executable

    def build_command(self, path: Path) -> list[str]:
        return [self.executable, str(path)]

    def version(self) -> str | None:
        if self._exe is None:
            return f"Python {sys.version.split()[0]} ({sys.executable})"
        return _first_line(self.executable, "--version")

    async def prepare(self, path: Path, *, deadline: Deadline) -> list[str]:
        requirements = path.parent / "requirements.txt"
        if self._exe is None and requirements.is_file():
            python = await ensure_python_env(requirements, deadline=deadline)
            return [str(python), str(path)]
        return self.build_command(path)


def _version_tuple(text: str | None) -> tuple[int, int, int] | None:
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", text or "")
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def find_local_tsx(start: Path) -> Path | None:
    """``node_modules/.bin/tsx`` in ``start`` or the nearest parent directory that has one."""
    for directory in (start, *start.parents):
        for name in ("tsx", "tsx.cmd"):
            candidate = directory / "node_modules" / ".bin" / name
            if candidate.is_file():
                return candidate
    return None


class NodeRuntime(Runtime):
    """``.js``/``.mjs``/``.cjs`` with ``node``; ``.ts`` with tsx or Node's own type stripping.

    For ``.ts`` the first that exists wins: ``$AGENTEVALS_TSX``; ``node_modules/.bin/tsx`` in the
    evaluator's directory or a parent (the evaluator chose tsx); Node's type stripping (Node ≥ 22.6,
    with ``--experimental-strip-types`` before 23.6); ``tsx`` on ``PATH``.
    """

    STRIP_TYPES_SINCE = (22, 6, 0)
    STRIP_TYPES_DEFAULT_SINCE = (23, 6, 0)

    def __init__(self, node: str | None = None) -> None:
        self._node = node

    name = "node"

    @property
    def extensions(self) -> tuple[str, ...]:
        return (".js", ".mjs", ".cjs", ".ts")

    def node(self) -> str | None:
        return self._node or shutil.which("node")

    def node_version(self) -> tuple[int, int, int] | None:
        node = self.node()
        return _version_tuple(_first_line(node, "--version")) if node else None

    def _require_node(self) -> str:
        node = self.node()
        if not node:
            raise RuntimeError("node not found on PATH (needed for .js/.ts evaluators); install Node.js")
        return node

    def _tsx(self, directory: Path) -> tuple[str, str] | None:
        """(tsx executable, where it was found) for ``.ts`` files in ``directory``, before type stripping."""
        explicit = os.environ.get(TSX_ENV)
        if explicit:
            return explicit, f"${TSX_ENV}"
        local = find_local_tsx(directory)
        return (str(local), "node_modules") if local else None

    def build_command(self, path: Path) -> list[str]:
        node = self._require_node()
        if path.suffix.lower() != ".ts":
            return [node, str(path)]
        tsx = self._tsx(path.parent)
        if tsx:
            return [tsx[0], str(path)]
        version = self.node_version() or (0, 0, 0)
        if version >= self.STRIP_TYPES_SINCE:
            flags = [] if version >= self.STRIP_TYPES_DEFAULT_SINCE else ["--experimental-strip-types"]
            return [node, *flags, "--disable-warning=ExperimentalWarning", str(path)]
        on_path = shutil.which("tsx")
        if on_path:
            return [on_path, str(path)]
        raise RuntimeError(f"cannot run {path.name}: {self._no_typescript(version)}")

    def _no_typescript(self, version: tuple[int, int, int]) -> str:
        shown = ".".join(map(str, version)) if version != (0, 0, 0) else "(unknown version)"
        return (
            f"Node {shown} cannot strip TypeScript types and tsx was not found; upgrade to Node >= 22.6, "
            f"or run `npm install --save-dev tsx` in the evaluator's directory (or put tsx on PATH / set {TSX_ENV})"
        )

    def check(self, path: Path) -> None:
        try:
            self.build_command(path)
        except RuntimeError:
            # A package.json that brings tsx is installed before the first run; otherwise npm installs
            # tsx once per machine at the first run (and a machine without npm gets that row's ERROR).
            if not (path.suffix.lower() == ".ts" and self.node()):
                raise

    async def prepare(self, path: Path, *, deadline: Deadline) -> list[str]:
        self._require_node()
        if (path.parent / "package.json").is_file():
            await ensure_node_modules(path.parent, deadline=deadline)
        try:
            return self.build_command(path)
        except RuntimeError as exc:
            if path.suffix.lower() != ".ts":
                raise
            from .environments import ensure_tsx

            return [str(await ensure_tsx(deadline=deadline, why=str(exc))), str(path)]

    def version(self) -> str | None:
        node = self.node()
        return f"node {_first_line(node, '--version')} ({node})" if node else None

    def support(self, where: Path) -> list[RuntimeSupport]:
        js = (".js", ".mjs", ".cjs")
        try:
            self._require_node()
        except RuntimeError as exc:
            return [RuntimeSupport((*js, ".ts"), False, str(exc))]
        rows = [RuntimeSupport(js, True, self.version() or "node")]
        try:
            command = self.build_command(where / "__probe__.ts")
        except RuntimeError:
            npm = shutil.which("npm")
            if npm:  # what really runs: the evaluator's package.json brings tsx, else npm installs one for us
                npm_version = _first_line(npm, "--version")
                by = f"npm {npm_version}" if npm_version else "npm"
                return [*rows, RuntimeSupport((".ts",), True, (
                    f"tsx from the evaluator's package.json, else tsx {TSX_VERSION} installed by {by} once per "
                    "machine, on first use"
                ))]
            return [*rows, RuntimeSupport((".ts",), False, self._no_typescript(self.node_version() or (0, 0, 0)))]
        if Path(command[0]).name.startswith("tsx"):
            tsx_version = _first_line(command[0], "--version") or "tsx"
            return [*rows, RuntimeSupport((".ts",), True, f"{tsx_version} ({command[0]})")]
        return [*rows, RuntimeSupport((".ts",), True, f"node's type stripping ({' '.join(command[1:-1])})")]


RUNTIMES: Registry[Runtime] = Registry(
    "runtime",
    "agentevals.runtimes",
    {
        "python": "agentevals.execution.runtimes:PythonRuntime",
        "node": "agentevals.execution.runtimes:NodeRuntime",
    },
    base=Runtime,
    instantiate=True,
)
"""Runtime name → ``Runtime`` instance (classes, built-in or from entry points, are instantiated on first use)."""

_registered: list[str] = []


def _validate(runtime: object) -> Runtime:
    if not isinstance(runtime, Runtime):
        raise TypeError(f"register_runtime() needs a Runtime instance, got {type(runtime).__name__}")
    extensions = runtime.extensions
    if not extensions or not all(isinstance(e, str) and re.fullmatch(r"\.[A-Za-z0-9]+", e) for e in extensions):
        raise ValueError(f"runtime '{runtime.name}' must declare extensions like ('.go',), got {extensions!r}")
    return runtime


def register_runtime(runtime: Runtime, name: str | None = None) -> None:
    """Add (or replace) a runtime. For a shared extension, the latest registration wins over built-ins."""
    key = name or _validate(runtime).name
    _validate(runtime)  # also when a name is given
    RUNTIMES.register(key, runtime)
    if key in _registered:
        _registered.remove(key)
    _registered.append(key)


def get_runtime(name: str) -> Runtime:
    """The runtime registered as ``name`` (``ConfigError`` with the known names when there is none)."""
    return _validate(RUNTIMES.get(name))


def get_runtimes() -> list[Runtime]:
    """Every registered runtime, the most recently registered first."""
    names = RUNTIMES.names()
    order = [n for n in reversed(_registered) if n in names] + [n for n in names if n not in _registered]
    return [get_runtime(n) for n in order]


def supported_extensions() -> list[str]:
    """Every extension some registered runtime runs, sorted."""
    return sorted({ext.lower() for rt in get_runtimes() for ext in rt.extensions})


def runtime_for(path: Path) -> Runtime:
    """The runtime for ``path``'s extension; ``ConfigError`` naming the supported ones otherwise."""
    suffix = Path(path).suffix.lower()
    for runtime in get_runtimes():
        if suffix in (e.lower() for e in runtime.extensions):
            return runtime
    raise ConfigError(
        f"no runtime runs '{suffix or Path(path).name}' files (supported: {', '.join(supported_extensions())}); "
        "register one with agentevals.custom_evaluators.register_runtime()"
    )
