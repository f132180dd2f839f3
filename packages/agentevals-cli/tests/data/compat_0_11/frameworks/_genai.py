"""Emit the span a GenAI instrumentation emits for one model call."""

import json

from opentelemetry import trace


def model_call(model: str, prompt: str, answer: str, *, operation: str = "chat") -> str:
    def messages(role, text):
        return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])

    with trace.get_tracer("stand-in").start_as_current_span(f"{operation} {model}", attributes={
            "gen_ai.operation.name": operation, "gen_ai.request.model": model,
            "gen_ai.input.messages": messages("user", prompt), "gen_ai.output.messages": messages("assistant", answer)}):
        return answer
