"""Protocol versions the CLI speaks and where their schemas live."""

from __future__ import annotations

import json
from functools import cache
from typing import Any

__all__ = ["PROTOCOL_VERSION", "SUPPORTED_VERSIONS", "load_schema", "parse_version"]

PROTOCOL_VERSION = "1.2"
"""Highest protocol version the CLI speaks (and sends by default)."""

SUPPORTED_VERSIONS: tuple[str, ...] = ("1.0", "1.1", "1.2")
"""Every version the CLI ships a schema for, oldest first."""


def parse_version(text: object) -> tuple[int, int]:
    """``"1.10"`` → ``(1, 10)``; raises ``ValueError`` for anything else."""
    if not isinstance(text, str):
        raise ValueError(f"protocol_version must be a string like '1.0', got {text!r}")
    parts = text.strip().split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"protocol_version must look like 'MAJOR.MINOR', got {text!r}")
    return int(parts[0]), int(parts[1])


@cache
def load_schema(name: str, version: str) -> dict[str, Any]:
    """Load a shipped wire schema, e.g. ``load_schema("eval_result", "1.0")``."""
    # imported here: it costs ~10 ms that ``agentevals --help`` and ``run`` need not pay
    from importlib import resources

    text = resources.files(__package__).joinpath("schema").joinpath(f"{name}.v{version}.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema
