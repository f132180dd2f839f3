"""Every span attribute name we read, with its known aliases, in one place.

OpenTelemetry's GenAI conventions moved several times (``gen_ai.system`` → ``gen_ai.provider.name``,
messages between events and span attributes, legacy ``gen_ai.prompt.N`` / ``gen_ai.completion.N``), and
ADK and instrumentation libraries (OpenInference, OpenLLMetry) add their own names. Converters look up
fields only through ``first()`` with a key from ``ALIASES``, never with a literal attribute name; flattened message lists
(``llm.input_messages.N.message.role``, ``gen_ai.prompt.N.content``) are read with ``indexed()``, whose
aliases are prefixes. Event names that carry messages are listed here too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["ALIASES", "CONTENT_BLOCKS", "INPUT_MESSAGE_EVENTS", "OUTPUT_MESSAGE_EVENTS", "TOOL_SPAN_EVENTS", "first",
           "first_key", "indexed"]

ALIASES: dict[str, tuple[str, ...]] = {
    # grouping
    "session_id": (
        "agentevals.session_name",
        "gen_ai.conversation.id",
        "session.id",
        "gcp.vertex.agent.session_id",
        "langsmith.trace.session_id",
        "traceloop.association.properties.session_id",
        "traceloop.association.properties.thread_id",
    ),
    "eval_id": ("agentevals.eval.case.id", "agentevals.eval_id", "agentevals.eval_case_id", "eval.case.id"),
    "agent_name": ("gen_ai.agent.name", "agent.name", "openinference.agent.name", "graph.node.id"),
    # models and usage
    "request_model": ("gen_ai.request.model", "llm.model_name", "gen_ai.response.model"),
    "operation": (
        "gen_ai.operation.name",
        "openinference.span.kind",
        "traceloop.span.kind",
        "agent.span.type",
        "llm.request.type",
    ),
    "input_tokens": (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.prompt_tokens",
        "llm.token_count.prompt",
        "llm.usage.prompt_tokens",
    ),
    "output_tokens": (
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.completion_tokens",
        "llm.token_count.completion",
        "llm.usage.completion_tokens",
    ),
    "cache_read_tokens": (
        "gen_ai.usage.cache_read_input_tokens",
        "gen_ai.usage.cache_read.input_tokens",
        "llm.token_count.prompt_details.cache_read",
    ),
    "cache_creation_tokens": (
        "gen_ai.usage.cache_creation_input_tokens",
        "gen_ai.usage.cache_creation.input_tokens",
        "llm.token_count.prompt_details.cache_write",
    ),
    # tools
    "tool_name": ("gen_ai.tool.name", "tool.name", "tool_call.function.name"),
    "tool_call_id": ("gen_ai.tool.call.id", "tool_call.id", "tool.call_id"),
    "tool_args": (
        "gcp.vertex.agent.tool_call_args",
        "gen_ai.tool.call.arguments",
        "tool_call.function.arguments",
        "input.value",
        "traceloop.entity.input",
    ),
    "tool_result": (
        "gcp.vertex.agent.tool_response",
        "gen_ai.tool.call.result",
        "output.value",
        "traceloop.entity.output",
    ),
    # messages (GenAI): JSON text, or structured values in log records
    "input_messages": ("gen_ai.input.messages", "gen_ai.prompt", "gen_ai.input.preview"),
    "output_messages": ("gen_ai.output.messages", "gen_ai.completion", "gen_ai.output.preview"),
    # flattened message lists, read with indexed(): PREFIX.N.…
    "input_messages_indexed": ("llm.input_messages", "gen_ai.prompt"),
    "output_messages_indexed": ("llm.output_messages", "gen_ai.completion"),
    # raw request/response payloads (OpenInference), the last resort for messages
    "input_payload": ("input.value",),
    "output_payload": ("output.value",),
    # ADK
    "adk_llm_request": ("gcp.vertex.agent.llm_request",),
    "adk_llm_response": ("gcp.vertex.agent.llm_response",),
}


INPUT_MESSAGE_EVENTS: dict[str, str] = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}
"""Semconv 1.28 to 1.36 per-message events (span events or log records) → the message role."""

OUTPUT_MESSAGE_EVENTS: tuple[str, ...] = ("gen_ai.choice",)
"""Events holding one model output choice (``{index, finish_reason, message}``)."""

TOOL_SPAN_EVENTS: dict[str, tuple[str, str]] = {"tool_args": ("gen_ai.tool.message", "content"),
                                                 "tool_result": ("gen_ai.choice", "message")}
"""Pre-1.37 per-message events on a *tool* span (Strands): field → (event name, attribute). Read when the
span has none of the field's attribute aliases."""

CONTENT_BLOCKS: dict[str, str] = {"toolUse": "tool_call", "toolResult": "tool_call_response"}
"""Bedrock Converse content blocks → the GenAI part type they are read as. Instrumentations on the pre-1.37
events (Strands by default) put content lists like ``[{"text": …}, {"toolUse": {"toolUseId", "name",
"input"}}]`` and ``[{"toolResult": {"toolUseId", "content": [{"text": …}], "status"}}]`` in the events."""


_ALIAS_SETS: dict[str, frozenset[str]] = {name: frozenset(keys) for name, keys in ALIASES.items()}
_HEADS: dict[str, tuple[str, ...]] = {name: tuple(f"{key}." for key in keys) for name, keys in ALIASES.items()}


def first_key(attributes: Mapping[str, Any], field: str) -> str | None:
    """The first alias of ``field`` present (and not empty) in ``attributes``."""
    # Most lookups find none of the aliases: one C-level check over the (few) attributes says so, instead of
    # a lookup per alias (a dozen lookups per span, every span of every live session).
    if attributes.keys().isdisjoint(_ALIAS_SETS[field]):
        return None
    for key in ALIASES[field]:
        value = attributes.get(key)
        if value not in (None, ""):
            return key
    return None


def first(attributes: Mapping[str, Any], field: str, default: Any = None) -> Any:
    """The value of the first alias of ``field`` present in ``attributes``."""
    key = first_key(attributes, field)
    return attributes[key] if key else default


def indexed(attributes: Mapping[str, Any], field: str) -> list[Any]:
    """Rebuild a flattened list (``PREFIX.0.message.role`` …) under the first prefix alias of ``field`` present.

    Dotted segments become nested dicts and runs of numeric keys become lists in index order:
    ``{"llm.input_messages.0.message.role": "user"}`` → ``[{"message": {"role": "user"}}]``.
    """
    heads = _HEADS[field]
    if not any(key.startswith(heads) for key in attributes):  # most spans: no flattened list at all
        return []
    for prefix in ALIASES[field]:
        head = prefix + "."
        tree: dict[str, Any] = {}
        for key, value in attributes.items():
            if not key.startswith(head) or not key[len(head):].split(".", 1)[0].isdigit():
                continue
            *path, leaf = key[len(head):].split(".")
            node = tree
            for part in path:
                if not isinstance(node.get(part), dict):
                    node[part] = {}
                node = node[part]
            node[leaf] = value
        if tree:
            return _as_lists(tree)
    return []


def _as_lists(node: Any) -> Any:
    if not isinstance(node, dict):
        return node
    if node and all(k.isdigit() for k in node):
        return [_as_lists(node[k]) for k in sorted(node, key=int)]
    return {k: _as_lists(v) for k, v in node.items()}
