"""Configs that arrive over the network may not run code on this machine (``serve --allow-code-evaluators``).

    refusal = code_in_config(path)          # or code_in_entries([...]) for JSON evaluator entries
    if refusal: raise HTTPException(403, refusal)

A config uploaded to ``/api/evaluate`` (or named to MCP-over-HTTP's ``evaluate_traces``) comes from
whoever can reach the port, so an entry that runs a program, a command or code fetched from elsewhere
(``type: code``, ``remote``, ``python``, ``code_judge`` and its AgentV spellings, an ``llm_judge`` whose
prompt is a command, a composite member or aggregator of those, a plugin type) is refused before the
config is even loaded (loading already imports ``type: python`` modules). Each type says what it runs
(``BaseEvaluator.runs_code``). So are ``base_url`` and ``api_key_env``: they would send this server's API
keys (any environment variable) to an address the config chooses; and, in a request that carries
``credential_refs`` (which may name any environment variable of this server), ``judge_base_url``, where a
builtin judge sends the resolved secret. Keys are compared in snake_case (the loader reads ``baseUrl`` as
``base_url``). The config given to ``serve -c`` on the command line is the user's own and is not checked.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any, Optional

from ..core._names import snake_case
from ..errors import ConfigError

__all__ = ["FLAG", "code_in_config", "code_in_entries"]

FLAG = "--allow-code-evaluators"
_CREDENTIAL_KEYS = ("base_url", "api_key_env")


def code_in_config(path: str | Path, *, credential_refs: bool = False) -> Optional[str]:
    """Why the config file at ``path`` may not run here (one line), or None. An unreadable or invalid
    file is left to the config loader, which reports it the usual way. ``credential_refs``: the request
    carries secret references, so ``judge_base_url`` is refused too."""
    import yaml

    from ..config.loader import marked_loader

    try:
        text = Path(path).read_text("utf-8")
        data = yaml.load(text, Loader=marked_loader())
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None
    entries = data.get("evaluators") if isinstance(data, dict) else None
    return code_in_entries(entries if isinstance(entries, list) else [], where=Path(path).name,
                           credential_refs=credential_refs)


def code_in_entries(entries: Iterable[Any], *, where: str = "config", credential_refs: bool = False) -> Optional[str]:
    """Why these evaluator entries may not run here (one line naming the first offending one), or None."""
    seen: set[int] = set()  # YAML aliases share nodes: visit each once (an alias bomb stays linear)
    keys = (*_CREDENTIAL_KEYS, "judge_base_url") if credential_refs else _CREDENTIAL_KEYS
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        label = f"evaluator '{entry.get('name')}'" if isinstance(entry.get("name"), str) else f"evaluators[{index}]"
        reason = _walk(entry, seen, keys)
        if reason:
            return (f"{where}: {label} {reason}: configs sent to this server may not run code on it "
                    f"(start serve with {FLAG} to allow it)")
    return None


def _walk(node: Any, seen: set[int], keys: tuple[str, ...], depth: int = 0) -> Optional[str]:
    if id(node) in seen or depth > 64:
        return None
    seen.add(id(node))
    if isinstance(node, dict):
        for key in node:
            name = snake_case(key) if isinstance(key, str) else key  # as the config loader reads it
            if name in keys:
                if name == "judge_base_url":
                    return f"sets {key} (where the judge sends the secret of the request's credential_refs)"
                return f"sets {key} (where this server's API keys are sent)"
        kind = node.get("type")
        if isinstance(kind, str):
            reason = _type_reason(kind, node)
            if reason:
                return reason
        children: Iterable[Any] = node.values()
    elif isinstance(node, list):
        children = node
    else:
        return None
    for child in children:
        reason = _walk(child, seen, keys, depth + 1)
        if reason:
            return reason
    return None


def _type_reason(kind: str, node: dict[str, Any]) -> Optional[str]:
    """What an entry (or a composite's member or aggregator) of type ``kind`` runs; None for a type
    that is not an evaluator type (an openai_eval grader's ``type``, a misspelling the loader reports)."""
    from ..evaluators import EVALUATOR_TYPES

    try:  # a built-in, or a plugin type found through its entry point
        cls = EVALUATOR_TYPES.get(kind)
    except ConfigError:
        return None
    return cls.runs_code(node)
