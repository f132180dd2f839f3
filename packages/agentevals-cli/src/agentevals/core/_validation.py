"""Render pydantic validation errors as one-line messages."""

from __future__ import annotations

from pydantic import ValidationError

__all__ = ["format_validation_error", "loc_path"]


def loc_path(loc: tuple[object, ...]) -> str:
    """``("evaluators", 0, "threshold")`` → ``evaluators[0].threshold``."""
    path = ""
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else (f".{part}" if path else str(part))
    return path


def format_validation_error(error: ValidationError) -> str:
    """``field.path: message (got value)`` for each error, joined by ``; ``."""
    parts = []
    for item in error.errors():
        path = loc_path(tuple(item.get("loc", ())))
        message = item.get("msg", "invalid").removeprefix("Value error, ")
        got = f" (got {item['input']!r})" if "input" in item and item.get("type") != "value_error" else ""
        parts.append(f"{path + ': ' if path else ''}{message}{got}")
    return "; ".join(parts)
