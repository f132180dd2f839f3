"""Result-cache keys: what a (case, evaluator) result depends on, as one digest.

    work key = sha256(case content digest, evaluator identity)
    case content   = trace ids, the agent's turns (inputs, tool calls, responses, figures), the golden turns
    evaluator      = type and class, its config as validated (name, threshold, paths, …), the contents of
                     every file or folder its config names, run options that change scores, agentevals'
                     version (a builtin metric's code ships with it)

Two runs that agree on all of that get the same result, so the second one reuses the first's (unless the
evaluator is not ``reproducible``: a remote evaluator without a pinned ``sha256`` is always run).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..__about__ import __version__

if TYPE_CHECKING:
    from ..evaluators.base import BaseEvaluator
    from ..runner import Case

__all__ = ["case_digest", "evaluator_identity", "file_digest", "work_key"]

_MAX_TREE_FILES = 2000
"""A config path naming a folder: at most this many files are hashed (then the listing decides)."""


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()


def case_digest(case: Case) -> str:
    """Digest of everything an evaluator can read about one case."""
    expected = case.eval_case.conversation if case.eval_case else None
    return _digest({
        "case": case.case_id,
        "traces": [t.trace_id for t in case.traces],
        "turns": [inv.model_dump(mode="json") for inv in case.invocations],
        "figures": [t.performance_metrics for t in case.traces],
        "expected": [inv.model_dump(mode="json") for inv in expected] if expected else None,
        "eval_id": case.eval_case.eval_id if case.eval_case else None,
    })


def file_digest(path: Path) -> str:
    """Digest of a file's bytes, or of a folder's relative names and file bytes (sorted)."""
    h = hashlib.sha256()
    if path.is_file():
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        return h.hexdigest()
    count = 0
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if d not in (".git", "node_modules", "__pycache__", ".venv"))
        for name in sorted(files):
            child = Path(root, name)
            h.update(str(child.relative_to(path)).encode())
            if count < _MAX_TREE_FILES:
                h.update(file_digest(child).encode())
            count += 1
    return h.hexdigest()


def evaluator_identity(ev: BaseEvaluator) -> str:
    """Digest of what decides an evaluator's result apart from the case (see the module docstring)."""
    config = ev.config.model_dump(mode="json")
    files = {}
    for key, value in config.items():
        if isinstance(value, str) and value and key in ("path", "file", "script", "module", "prompt_file", "command"):
            try:
                target = ev.resolve_path(value)
                if target.exists():
                    files[key] = file_digest(target)
            except (OSError, ValueError):
                continue
    options = ev.options
    return _digest({
        "type": ev.name,
        "class": f"{type(ev).__module__}.{type(ev).__qualname__}",
        "config": config,
        "files": files,
        "options": {"threshold": options.threshold, "trajectory_match_type": options.trajectory_match_type,
                    "judge_model": options.judge_model},
        "agentevals": __version__,
    })


def work_key(case_content: str, identity: str) -> str:
    """The cache key of one (case, evaluator) pair."""
    return hashlib.sha256(f"{case_content}:{identity}".encode()).hexdigest()
