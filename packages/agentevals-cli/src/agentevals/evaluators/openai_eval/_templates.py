"""OpenAI's grader template syntax: ``{{ namespace.variable }}`` substitution, checked at load time.

OpenAI's graders substitute every ``{{ … }}`` with a variable of the ``item`` or ``sample`` namespace
(JSON-path-like: ``item.a.b``, ``item.list[0]``). No other syntax exists, so we implement exactly that
instead of a general template engine (a ``{%`` in a prompt stays text, as on the service).

The items we grade are the agent's turns, so the namespaces hold:

    item.user_content        the user's message of the turn
    item.actual_response     the agent's final response
    item.expected_response   the eval case's final response for the same turn
    sample.output_text       alias of item.actual_response (there is no model sample to generate)
"""

from __future__ import annotations

import re
from typing import Any

from ...core._registry import did_you_mean

__all__ = [
    "ITEM_FIELDS",
    "SAMPLE_ALIASES",
    "check_template",
    "for_evals_api",
    "item_fields",
    "render",
    "variables",
]

ITEM_FIELDS = ("user_content", "actual_response", "expected_response")
SAMPLE_ALIASES = {"output_text": "actual_response"}
"""``sample.*`` variables we can fill, and the item field that stands for each."""

_PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_PATH = re.compile(r"^(item|sample)\.([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[\d+\])*)$")


def variables(template: str) -> list[tuple[str, str]]:
    """``(namespace, field)`` of each placeholder; ``ValueError`` naming the first bad one."""
    found = []
    for match in _PLACEHOLDER.finditer(template):
        path = match.group(1).strip()
        parsed = _PATH.match(path)
        if not parsed:
            raise ValueError(
                f"template placeholder {match.group(0)!r} is not '{{{{ item.<field> }}}}' or "
                f"'{{{{ sample.output_text }}}}'"
            )
        namespace, name, rest = parsed.groups()
        if namespace == "sample" and (name not in SAMPLE_ALIASES or rest):
            raise ValueError(
                f"template uses sample.{name}{rest}; recorded turns have no model sample, only "
                "sample.output_text (the agent's response)"
            )
        if namespace == "item" and (name not in ITEM_FIELDS or rest):
            hint = did_you_mean(name, ITEM_FIELDS)
            raise ValueError(f"template uses item.{name}{rest}{hint}; item has: {', '.join(ITEM_FIELDS)}")
        found.append((namespace, name))
    return found


def check_template(template: str) -> str:
    """Pydantic validator: the template only uses variables we can fill."""
    variables(template)
    return template


def item_fields(template: str) -> set[str]:
    """Item fields a (valid) template reads, with ``sample.output_text`` counted as ``actual_response``."""
    return {name if namespace == "item" else SAMPLE_ALIASES[name] for namespace, name in variables(template)}


def render(template: str, item: dict[str, Any]) -> str:
    """Substitute the placeholders of a valid template with ``item``'s fields (missing ones: empty)."""
    return _PLACEHOLDER.sub(lambda match: str(item.get(_field_of(match)) or ""), template)


def for_evals_api(template: str) -> str:
    """The template as the Evals API must see it: ``sample.*`` aliases point into the item namespace."""
    return _PLACEHOLDER.sub(lambda match: f"{{{{ item.{_field_of(match)} }}}}", template)


def _field_of(match: re.Match[str]) -> str:
    # _PLACEHOLDER only matches paths that _PATH matches
    namespace, name = _PATH.match(match.group(1).strip()).groups()[:2]  # type: ignore[union-attr]
    return name if namespace == "item" else SAMPLE_ALIASES[name]
