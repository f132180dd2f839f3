"""``AgentEvals``: run an agent inside a session whose spans and logs go to ``agentevals serve``.

    from agentevals import AgentEvals

    app = AgentEvals()                                   # endpoint: see below

    @app.agent
    def weather(prompt: str) -> str:
        return call_my_llm(prompt)                       # instrumented calls become child spans

    app.run(["What's the weather in Paris?"], eval_set_id="weather")   # one session, evaluated on exit

    with app.session(eval_set_id="weather"):             # or drive the agent yourself
        weather("And in Rome?")

The endpoint is ``endpoint=``, else ``AGENTEVALS_OTLP_ENDPOINT``, else ``http://localhost:4318``. The
``OTEL_EXPORTER_OTLP_*`` variables are never read: they may hold credentials for another backend, which
must not be sent here. Spans are exported over OTLP/HTTP protobuf by this module's own small exporter.

A session is one trace under an ``agentevals.session`` span carrying ``gen_ai.conversation.id`` and
``agentevals.eval_set_id``; when the ``with`` block exits the span ends with
``agentevals.session.complete = true`` and is flushed, and ``serve`` evaluates the session at once.
Needs the ``otel`` extra (``opentelemetry-sdk``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import json
import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from .errors import MissingDependencyError

__all__ = ["DEFAULT_ENDPOINT", "ENDPOINT_ENV", "AgentEvals", "Session"]

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "http://localhost:4318"
ENDPOINT_ENV = "AGENTEVALS_OTLP_ENDPOINT"
SESSION_SPAN = "agentevals.session"

_install_lock = threading.Lock()
_installed: dict[str, Any] = {}  # endpoint → (tracer provider, logger provider, span processor)


@dataclass
class Session:
    """The session an ``AgentEvals.session()`` block runs in."""

    session_id: str
    eval_set_id: Optional[str]


class AgentEvals:
    """Sends an agent's spans and logs to ``agentevals serve`` as one session per ``session()`` block."""

    def __init__(self, *, endpoint: Optional[str] = None, service_name: str = "agent", timeout: float = 10.0) -> None:
        self.endpoint = (endpoint or os.environ.get(ENDPOINT_ENV) or DEFAULT_ENDPOINT).rstrip("/")
        self.service_name = service_name
        self.timeout = timeout
        self._agent: Optional[Callable[..., Any]] = None

    # ---- the agent -------------------------------------------------------------------------------------

    def agent(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register the agent; each call becomes an ``invoke_agent`` span with the prompt and the answer."""
        name = getattr(fn, "__name__", "agent")

        def attributes(prompt: Any) -> dict[str, Any]:
            return {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name,
                    "gen_ai.input.messages": _messages("user", prompt)}

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(prompt: Any, *args: Any, **kwargs: Any) -> Any:
                with self._tracer().start_as_current_span(f"invoke_agent {name}", attributes=attributes(prompt)) as span:
                    answer = await fn(prompt, *args, **kwargs)
                    span.set_attribute("gen_ai.output.messages", _messages("assistant", answer))
                    return answer
            wrapped: Callable[..., Any] = run_async
        else:
            @functools.wraps(fn)
            def run_sync(prompt: Any, *args: Any, **kwargs: Any) -> Any:
                with self._tracer().start_as_current_span(f"invoke_agent {name}", attributes=attributes(prompt)) as span:
                    answer = fn(prompt, *args, **kwargs)
                    span.set_attribute("gen_ai.output.messages", _messages("assistant", answer))
                    return answer
            wrapped = run_sync
        self._agent = wrapped
        return wrapped

    def run(self, prompts: Sequence[Any], *, eval_set_id: Optional[str] = None,
            session_id: Optional[str] = None) -> list[Any]:
        """Call the ``@app.agent`` function on each prompt, in order, in one session; returns the answers."""
        if self._agent is None:
            raise RuntimeError("no agent registered: decorate your agent function with @app.agent")
        answers = []
        with self.session(eval_set_id=eval_set_id, session_id=session_id):
            for prompt in prompts:
                answer = self._agent(prompt)
                if inspect.isawaitable(answer):
                    answer = asyncio.run(_await(answer))
                answers.append(answer)
        return answers

    # ---- sessions --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(self, eval_set_id: Optional[str] = None, *, session_id: Optional[str] = None,
                metadata: Optional[dict[str, Any]] = None) -> Iterator[Session]:
        """Everything traced inside the block is one session, evaluated when the block exits."""
        session = Session(session_id or uuid.uuid4().hex, eval_set_id)
        attributes: dict[str, Any] = {"gen_ai.conversation.id": session.session_id}
        if eval_set_id:
            attributes["agentevals.eval_set_id"] = eval_set_id
        for key, value in (metadata or {}).items():
            attributes[f"agentevals.metadata.{key}"] = value if isinstance(value, (str, int, float, bool)) else str(value)
        with self._tracer().start_as_current_span(SESSION_SPAN, attributes=attributes) as span:
            try:
                yield session
            finally:
                span.set_attribute("agentevals.session.complete", True)
        self.flush()

    def flush(self) -> None:
        """Send what is buffered now (``timeout`` seconds at most)."""
        installed = _installed.get(self.endpoint)
        if installed:
            installed["spans"].force_flush(int(self.timeout * 1000))
            installed["logs"].force_flush(int(self.timeout * 1000))

    def _tracer(self) -> Any:
        return _install(self.endpoint, self.service_name, self.timeout)["tracer_provider"].get_tracer("agentevals")


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _messages(role: str, content: Any) -> str:
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _install(endpoint: str, service_name: str, timeout: float) -> dict[str, Any]:
    """Export the process's spans and logs to ``endpoint`` (once per endpoint).

    The global tracer and logger providers are used when they are SDK providers (the agent's own
    instrumentation then reaches us too); otherwise ours become the global ones.
    """
    try:
        from opentelemetry import _logs, trace
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise MissingDependencyError("AgentEvals", "otel") from exc
    from ._otlp_export import OtlpHttpLogExporter, OtlpHttpSpanExporter

    with _install_lock:
        if endpoint in _installed:
            return _installed[endpoint]
        resource = Resource.create({"service.name": service_name})
        tracer_provider = trace.get_tracer_provider()
        if not isinstance(tracer_provider, TracerProvider):
            tracer_provider = TracerProvider(resource=resource)
            trace.set_tracer_provider(tracer_provider)
        logger_provider = _logs.get_logger_provider()
        if not isinstance(logger_provider, LoggerProvider):
            logger_provider = LoggerProvider(resource=resource)
            _logs.set_logger_provider(logger_provider)
        spans = BatchSpanProcessor(OtlpHttpSpanExporter(f"{endpoint}/v1/traces", timeout=timeout),
                                   schedule_delay_millis=500)
        logs = BatchLogRecordProcessor(OtlpHttpLogExporter(f"{endpoint}/v1/logs", timeout=timeout),
                                       schedule_delay_millis=500)
        tracer_provider.add_span_processor(spans)
        logger_provider.add_log_record_processor(logs)
        _installed[endpoint] = {"tracer_provider": tracer_provider, "logger_provider": logger_provider,
                                "spans": spans, "logs": logs}
        return _installed[endpoint]
