"""Every span attribute name we read, with its known aliases, in one place.

OpenTelemetry's GenAI conventions moved several times (``gen_ai.system`` → ``gen_ai.provider.name``,
messages between events and span attributes, legacy ``gen_ai.prompt.N`` / ``gen_ai.completion.N``), and
ADK and instrumentation libraries (OpenInference, OpenLLMetry) add their own names. Converters look up
fields only through ``first()`` with a key from ``ALIASES``, never with a literal attribute name.
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

__all__ = ["ALIASES", "first", "first_key"]

ALIASES: dict[str, tuple[str, ...]] = {
    # grouping
    "session_id": (
        "agentevals.session_name",
        "gen_ai.conversation.id",
        "session.id",
        "gcp.vertex.agent.session_id",
        "langsmith.trace.session_id",
        "traceloop.association.properties.session_id",
    ),
    "eval_id": ("agentevals.eval_id", "agentevals.eval_case_id", "eval.case.id"),
    "agent_name": ("gen_ai.agent.name", "agent.name", "openinference.agent.name", "graph.node.id"),
    # models and usage
    "request_model": ("gen_ai.request.model", "llm.model_name", "gen_ai.response.model"),
    "provider": ("gen_ai.provider.name", "gen_ai.system", "llm.provider", "llm.system"),
    "operation": ("gen_ai.operation.name", "openinference.span.kind", "traceloop.span.kind"),
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
        "tool.parameters",
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
    # ADK
    "adk_llm_request": ("gcp.vertex.agent.llm_request",),
    "adk_llm_response": ("gcp.vertex.agent.llm_response",),
    "adk_invocation_id": ("gcp.vertex.agent.invocation_id",),
}


def first_key(attributes: Mapping[str, Any], field: str) -> Optional[str]:
    """The first alias of ``field`` present (and not empty) in ``attributes``."""
    for key in ALIASES[field]:
        value = attributes.get(key)
        if value not in (None, ""):
            return key
    return None


def first(attributes: Mapping[str, Any], field: str, default: Any = None) -> Any:
    """The value of the first alias of ``field`` present in ``attributes``."""
    key = first_key(attributes, field)
    return attributes[key] if key else default
