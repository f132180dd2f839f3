"""Result-cache keys: what a (case, evaluator) result depends on, as one digest.

    work key = the identity's first 16 hex digits, then sha256(case content digest, evaluator identity)'s last 48
    case content   = trace ids, the agent's turns (inputs, tool calls, responses, figures), the golden turns
    evaluator      = type and class, its config as validated (name, threshold, paths, …), the contents of
                     every file or folder its config names, its code's folder (or top package) tree, the
                     runtime that runs that code (interpreter version; for Python, the installed
                     distributions and their versions), the values of the ``env:`` variables it is passed
                     (as digests, never the values), run options that change scores, agentevals' version (a
                     builtin metric's code ships with it)

Two runs that agree on all of that get the same result, so the second one reuses the first's. Where the
key cannot cover what decides the result, ``evaluator_identity`` raises ``NotCacheable`` with the reason
and the evaluator runs every time: a remote evaluator without a pinned ``sha256``, ``env: inherit``, a
command that is not a script file, a code folder past ``MAX_TREE_FILES`` files or ``MAX_TREE_BYTES``.

Example:
    ```python
    try:
        identity = evaluator_identity(evaluator, ignore={Path("runs.sqlite")})
    except NotCacheable as refusal:
        print(f"not cached: {refusal}")
    ```
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Collection, Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..__about__ import __version__
from ..core._json import dumps
from ..evaluators.base import NotCacheable

if TYPE_CHECKING:
    from ..engine.grouping import Case
    from ..evalsets.model import EvalCase
    from ..evaluators.base import BaseEvaluator

__all__ = ["KEY_PREFIX", "MAX_TREE_BYTES", "MAX_TREE_FILES", "NotCacheable", "case_digest", "code_root",
           "evaluator_identity", "expected_digest", "file_digest", "tree_digest", "value_digest", "work_key"]

MAX_TREE_FILES = 2000
"""A code folder with more files than this is not hashed: its evaluator is not cached (and the run says so)."""
MAX_TREE_BYTES = 64 << 20
"""Nor one holding more bytes than this (64 MiB)."""
SKIPPED_DIRS = frozenset({"node_modules", "__pycache__", "venv", "site-packages"})
"""Folders never hashed, besides hidden ones (``.git``, ``.venv``, ``.mypy_cache``, …): installed
dependencies (covered by the lockfile or requirements beside them, and the runtime's version) and caches."""


def value_digest(value: Any) -> str:
    """sha256 of ``value`` as sorted-key JSON (anything orjson cannot encode as its ``str``)."""
    return hashlib.sha256(_sorted_json(value)).hexdigest()


def _sorted_json(value: Any) -> bytes:
    """``value`` as sorted-key JSON bytes: orjson, or the stdlib for what orjson refuses (an integer past 64 bits in
    an evaluator's config; a key that is not a string), keys made strings so that they sort."""
    return dumps(value, sort_keys=True, default=str)


def case_digest(case: Case, *, expected: Optional[str] = None) -> str:
    """Digest of everything an evaluator can read about one case. ``expected``: ``expected_digest`` of its eval
    case, when the caller keeps it (one eval case is often matched by many cases)."""
    invocations = case.invocations
    h = hashlib.sha256(_sorted_json({
        "case": case.case_id,
        "traces": [t.trace_id for t in case.traces],
        "turns": len(invocations),
        "figures": [t.performance_metrics for t in case.traces],
        "expected": expected if expected is not None else expected_digest(case.eval_case),
        "eval_id": case.eval_case.eval_id if case.eval_case else None,
    }))
    for inv in invocations:  # each turn's JSON as pydantic writes it (no dict built for it; a turn's JSON ends itself)
        h.update(inv.model_dump_json().encode())
    return h.hexdigest()


def expected_digest(eval_case: Optional[EvalCase]) -> Optional[str]:
    """Digest of an eval case's golden turns (None without any): part of ``case_digest``."""
    expected = eval_case.conversation if eval_case else None
    if not expected:
        return None
    h = hashlib.sha256()
    for inv in expected:
        h.update(inv.model_dump_json().encode())
    return h.hexdigest()


def _file_bytes_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_digest(path: Path) -> str:
    """Digest of a file's bytes, or of a folder's tree (``tree_digest`` without its bounds' refusal: past
    them, the listing of names decides)."""
    if path.is_file():
        return _file_bytes_digest(path)
    try:
        return tree_digest(path)
    except NotCacheable:
        return value_digest(sorted(str(p.relative_to(path)) for p in _walk(path, frozenset())))


def _walk(root: Path, ignore: frozenset[Path]) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_DIRS)
        for name in sorted(files):
            path = Path(folder, name)
            if path not in ignore:
                yield path


def tree_digest(root: Path, *, ignore: Collection[Path] = ()) -> str:
    """Digest of a folder's relative names and file bytes, sorted; hidden folders and ``SKIPPED_DIRS``
    are left out, and so are the files in ``ignore`` (absolute paths: what agentevals itself writes there).

    Raises ``NotCacheable`` past ``MAX_TREE_FILES`` files or ``MAX_TREE_BYTES`` bytes (hashing a whole
    home folder on every run would cost more than the cache saves).
    """
    skip = frozenset(Path(p).absolute() for p in ignore)
    root = root.absolute()
    h = hashlib.sha256()
    count = size = 0
    for path in _walk(root, skip):
        count += 1
        if count > MAX_TREE_FILES:
            raise NotCacheable(f"its folder {root} has more than {MAX_TREE_FILES} files to hash "
                               "(keep the evaluator in a folder of its own)")
        h.update(str(path.relative_to(root)).encode("utf-8", "surrogateescape"))
        h.update(b"\0")
        if not path.is_file():  # a dangling link: its name alone is hashed
            h.update(b"-")
            continue
        try:
            size += path.stat().st_size
            if size > MAX_TREE_BYTES:
                raise NotCacheable(f"its folder {root} holds more than {MAX_TREE_BYTES >> 20} MiB to hash "
                                   "(keep the evaluator in a folder of its own)")
            h.update(_file_bytes_digest(path).encode())
        except OSError as exc:  # unreadable (or gone meanwhile): the result may depend on what cannot be seen
            raise NotCacheable(f"{path} cannot be read ({exc.strerror or exc})") from None
    return h.hexdigest()


def code_root(file: Path) -> Path:
    """The folder whose contents a program can import: the top package a ``.py`` file belongs to (the
    highest folder of an unbroken chain of ``__init__.py``), else the file's own folder (where the
    interpreter starts looking: ``sys.path[0]`` for Python, ``./`` for Node)."""
    folder = file.absolute().parent
    if file.suffix == ".py":
        while (folder / "__init__.py").is_file() and (folder.parent / "__init__.py").is_file():
            folder = folder.parent
    return folder


@lru_cache(maxsize=1)
def _python_distributions() -> str:
    """Digest of the distributions installed in this interpreter (name and version): what an evaluator run by
    it can import besides its own folder."""
    from importlib.metadata import distributions

    found = sorted({(d.metadata["Name"] or "", d.version or "") for d in distributions()})
    return value_digest(found)


@lru_cache(maxsize=64)
def _runtime_identity(suffix: str) -> Optional[dict[str, Any]]:
    from ..errors import ConfigError
    from ..execution.runtimes import PythonRuntime, runtime_for

    try:
        runtime = runtime_for(Path(f"x{suffix}"))
    except ConfigError:
        return None  # a data file (a prompt), not a program
    version = runtime.version()
    if version is None and runtime.name not in ("python", "node"):
        raise NotCacheable(f"runtime '{runtime.name}' does not report its version")
    # "Python 3.12.1 (/path/to/python)": the version, not where it is (a CI runner's path changes per job).
    found: dict[str, Any] = {"runtime": runtime.name, "version": re.sub(r"\s*\(.*\)$", "", version or "")}
    if isinstance(runtime, PythonRuntime) and runtime.executable == sys.executable:
        found["distributions"] = _python_distributions()
    return found


def _env_identity(ev: BaseEvaluator) -> Optional[dict[str, Optional[str]]]:
    setting = getattr(ev.config, "env", None)
    if setting is None:
        return None
    if setting == "inherit":
        raise NotCacheable("env: inherit passes the whole environment, which the key cannot cover "
                           "(list the variables it needs under env:)")
    # Digests, never the values: the key is stored, and a secret must not be guessable from it.
    return {name: (hashlib.sha256(os.environ[name].encode("utf-8", "surrogateescape")).hexdigest()
                   if name in os.environ else None) for name in sorted(setting)}


def evaluator_identity(ev: BaseEvaluator, *, ignore: Collection[Path] = ()) -> str:
    """Digest of what decides an evaluator's result apart from the case (see the module docstring).

    ``ignore``: files agentevals writes during a run (the store, the reports), left out of folder digests.
    Raises ``NotCacheable`` (the reason) when the key cannot cover it.
    """
    if not ev.reproducible:
        raise NotCacheable(ev.not_reproducible_reason)
    config = ev.config.model_dump(mode="json")
    files = {}
    for key, value in config.items():
        if isinstance(value, str) and value and key in ("path", "file", "script", "module", "prompt_file", "command"):
            try:
                target = ev.resolve_path(value)
                if target.exists():
                    files[key] = file_digest(target) if target.is_file() else tree_digest(target, ignore=ignore)
            except (OSError, ValueError):
                continue
    code, runtimes = [], {}
    for program in ev.code_paths():
        code.append(tree_digest(code_root(program), ignore=ignore))  # not its path: a moved checkout still hits
        runtimes[program.suffix.lower()] = _runtime_identity(program.suffix.lower())
    options = ev.options
    return value_digest({
        "type": ev.name,
        "class": f"{type(ev).__module__}.{type(ev).__qualname__}",
        "config": config,
        "files": files,
        "code": code,
        "runtimes": runtimes,
        "env": _env_identity(ev),
        "options": {"threshold": options.threshold, "trajectory_match_type": options.trajectory_match_type,
                    "judge_model": options.judge_model},
        "agentevals": __version__,
    })


KEY_PREFIX = 16
"""Hex digits of the evaluator identity a work key starts with: one index probe tells whether the store holds
any result of an evaluator (``RunStore.has_key_prefix``), and a run of a new evaluator looks up none."""


def work_key(case_content: str, identity: str) -> str:
    """The cache key of one (case, evaluator) pair: 64 hex digits, the identity's first ``KEY_PREFIX`` leading."""
    return identity[:KEY_PREFIX] + hashlib.sha256(f"{case_content}:{identity}".encode()).hexdigest()[KEY_PREFIX:]
