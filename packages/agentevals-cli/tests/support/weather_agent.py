"""A weather agent instrumented with the plain OpenTelemetry SDK (official GenAI semconv attributes),
and the ADK eval set it should pass."""

from __future__ import annotations

import json
from pathlib import Path

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

QUESTION = "What's the weather in Paris?"
ANSWER = "It is sunny in Paris."


def weather_eval_set(folder: Path) -> Path:
    """An ADK eval set whose one case is the weather agent below (tool get_weather, city Paris)."""
    path = folder / "weather.json"
    path.write_text(json.dumps({"eval_set_id": "weather", "eval_cases": [{"eval_id": "paris", "conversation": [{
        "invocation_id": "paris-1",
        "user_content": {"role": "user", "parts": [{"text": QUESTION}]},
        "final_response": {"role": "model", "parts": [{"text": ANSWER}]},
        "intermediate_data": {"tool_uses": [{"name": "get_weather", "args": {"city": "Paris"}}]},
    }]}]}))
    return path


def run_weather_agent(exporter, *, city: str = "Paris") -> str:
    """A GenAI-instrumented agent (official semconv attributes) on the plain SDK; returns its trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "weather-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("weather")

    def messages(role: str, text: str) -> str:
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])

    with tracer.start_as_current_span("invoke_agent weather", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "weather",
            "gen_ai.input.messages": messages("user", QUESTION),
            "gen_ai.output.messages": messages("assistant", ANSWER)}) as root:
        with tracer.start_as_current_span("execute_tool get_weather", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                "gen_ai.tool.call.id": "call-1", "gen_ai.tool.call.arguments": json.dumps({"city": city}),
                "gen_ai.tool.call.result": "sunny"}):
            pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    provider.shutdown()
    return trace_id
