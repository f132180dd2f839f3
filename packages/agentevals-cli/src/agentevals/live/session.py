"""``AgentEvals``: run an agent inside a session whose spans and logs go to ``agentevals serve``.

    from agentevals import AgentEvals

    app = AgentEvals()                                   # endpoint: see below

    @app.agent
    def weather(prompt: str) -> str:
        return call_my_llm(prompt)                       # instrumented calls become child spans

    app.run(["What's the weather in Paris?"], eval_set_id="weather")   # one session, evaluated on exit

    with app.session(eval_set_id="weather"):             # or drive the agent yourself
        weather("And in Rome?")

    async with app.session_async(eval_set_id="weather"):  # the same, in async code
        ...

agentevals-cli 0.11's arguments are accepted as they were: ``AgentEvals(ws_url, eval_set_id, metadata,
auto_instrument, capture_message_content, streaming, endpoint)`` and ``session(eval_set_id, session_name,
metadata, tracer_provider)``; a session is the session id, a ``str`` (0.11 yielded the name).

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
import warnings
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from typing import Any, Optional
from urllib.parse import urlsplit

from ..errors import MissingDependencyError

__all__ = ["DEFAULT_ENDPOINT", "ENDPOINT_ENV", "AgentEvals", "Session"]

log = logging.getLogger(__name__)

DEFAULT_ENDPOINT = "http://localhost:4318"
ENDPOINT_ENV = "AGENTEVALS_OTLP_ENDPOINT"
SESSION_SPAN = "agentevals.session"
LEGACY_WS_URL = "ws://localhost:8001/ws/traces"
"""agentevals-cli 0.11's default ``ws_url`` (a WebSocket it no longer used; OTLP/HTTP on port 4318 replaced it)."""

_install_lock = threading.Lock()
_installed: dict[tuple[str, Optional[int]], Any] = {}  # (endpoint, explicit provider) → providers, processors


class Session(str):
    """The session an ``AgentEvals.session()`` block runs in: its id (a ``str``, as 0.11's session name was),
    with ``.session_id`` and ``.eval_set_id``."""

    eval_set_id: Optional[str]

    def __new__(cls, session_id: str, eval_set_id: Optional[str] = None) -> Session:
        self = super().__new__(cls, session_id)
        self.eval_set_id = eval_set_id
        return self

    @property
    def session_id(self) -> str:
        return str(self)


class AgentEvals:
    """Sends an agent's spans and logs to ``agentevals serve`` as one session per ``session()`` block.

    Args:
        ws_url: agentevals-cli 0.11's WebSocket address (deprecated): a non-default one means OTLP/HTTP on
            port 4318 of its host, as 0.11 read it, when neither ``endpoint`` nor ``AGENTEVALS_OTLP_ENDPOINT``
            is set.
        eval_set_id: The eval set of every session that names none.
        metadata: Added to every session (``agentevals.metadata.<key>`` attributes).
        auto_instrument: Turn on the OpenAI (v2) instrumentation when it is installed, as 0.11 did.
        capture_message_content: Ask GenAI instrumentations to record message content (sets
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` unless it is set).
        streaming: False: sessions export nothing (the agent code runs unchanged, offline).
        endpoint: The OTLP/HTTP receiver of ``agentevals serve``.
    """

    def __init__(self, ws_url: Optional[str] = None, eval_set_id: Optional[str] = None,
                 metadata: Optional[dict[str, Any]] = None, auto_instrument: bool = True,
                 capture_message_content: bool = True, streaming: bool = True, endpoint: Optional[str] = None,
                 *, service_name: str = "agent", timeout: float = 10.0) -> None:
        self.endpoint = (endpoint or os.environ.get(ENDPOINT_ENV) or _from_ws_url(ws_url) or DEFAULT_ENDPOINT).rstrip("/")
        self.eval_set_id = eval_set_id
        self.metadata = dict(metadata or {})
        self.auto_instrument = auto_instrument
        self.capture_message_content = capture_message_content
        self.streaming = streaming
        self.service_name = service_name
        self.timeout = timeout
        self._agent: Optional[Callable[..., Any]] = None

    # ---- the agent -------------------------------------------------------------------------------------

    def agent(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Register the agent; each call becomes an ``invoke_agent`` span with the prompt and the answer."""
        name = getattr(fn, "__name__", "agent")

        def attributes(prompt: Any) -> dict[str, Any]:
            out = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
            if prompt is not _NO_PROMPT:
                out["gen_ai.input.messages"] = _messages("user", prompt)
            return out

        if inspect.iscoroutinefunction(fn):
            @functools.wraps(fn)
            async def run_async(prompt: Any = _NO_PROMPT, *args: Any, **kwargs: Any) -> Any:
                with self._tracer().start_as_current_span(f"invoke_agent {name}", attributes=attributes(prompt)) as span:
                    answer = await fn(*_given(prompt), *args, **kwargs)
                    span.set_attribute("gen_ai.output.messages", _messages("assistant", answer))
                    return answer
            wrapped: Callable[..., Any] = run_async
        else:
            @functools.wraps(fn)
            def run_sync(prompt: Any = _NO_PROMPT, *args: Any, **kwargs: Any) -> Any:
                with self._tracer().start_as_current_span(f"invoke_agent {name}", attributes=attributes(prompt)) as span:
                    answer = fn(*_given(prompt), *args, **kwargs)
                    span.set_attribute("gen_ai.output.messages", _messages("assistant", answer))
                    return answer
            wrapped = run_sync
        self._agent = wrapped
        return wrapped

    def run(self, prompts: Optional[Sequence[Any]] = None, interactive: bool = False,
            eval_set_id: Optional[str] = None, metadata: Optional[dict[str, Any]] = None, *,
            session_id: Optional[str] = None) -> list[Any]:
        """Call the ``@app.agent`` function on each prompt, in order, in one session; returns the answers.

        ``interactive=True`` (0.11) reads prompts from stdin until end of file instead; with neither, the agent
        is called once without a prompt (as 0.11 did). Answers are returned, not printed.
        """
        if self._agent is None:
            raise RuntimeError("no agent registered: decorate your agent function with @app.agent")
        answers = []
        with self.session(eval_set_id=eval_set_id, metadata=metadata, session_id=session_id):
            for prompt in (prompts if prompts is not None else _stdin_prompts() if interactive else [_NO_PROMPT]):
                answer = self._agent(prompt)
                if inspect.isawaitable(answer):
                    answer = asyncio.run(_await(answer))
                answers.append(answer)
        return answers

    # ---- sessions --------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def session(self, eval_set_id: Optional[str] = None, session_name: Optional[str] = None,
                metadata: Optional[dict[str, Any]] = None, tracer_provider: Any = None, *,
                session_id: Optional[str] = None) -> Iterator[Session]:
        """Everything traced inside the block is one session, evaluated when the block exits.

        ``session_name`` is 0.11's name for ``session_id``; ``tracer_provider`` an SDK ``TracerProvider`` to
        export from instead of the global one (e.g. StrandsTelemetry's).
        """
        session = self._new_session(eval_set_id, session_name, session_id)
        if not self.streaming:
            yield session
            return
        tracer = self._tracer(tracer_provider)
        with tracer.start_as_current_span(SESSION_SPAN, attributes=self._attributes(session, metadata)) as span:
            try:
                yield session
            finally:
                span.set_attribute("agentevals.session.complete", True)
        self.flush()

    @contextlib.asynccontextmanager
    async def session_async(self, eval_set_id: Optional[str] = None, session_name: Optional[str] = None,
                            metadata: Optional[dict[str, Any]] = None, tracer_provider: Any = None, *,
                            session_id: Optional[str] = None) -> AsyncIterator[Session]:
        """``session()`` for async code: setting up and the final flush run on a worker thread."""
        session = self._new_session(eval_set_id, session_name, session_id)
        if not self.streaming:
            yield session
            return
        tracer = await asyncio.to_thread(self._tracer, tracer_provider)
        with tracer.start_as_current_span(SESSION_SPAN, attributes=self._attributes(session, metadata)) as span:
            try:
                yield session
            finally:
                span.set_attribute("agentevals.session.complete", True)
        await asyncio.to_thread(self.flush)

    def flush(self) -> None:
        """Send what is buffered now (``timeout`` seconds at most)."""
        for (endpoint, _), installed in list(_installed.items()):
            if endpoint == self.endpoint:
                installed["spans"].force_flush(int(self.timeout * 1000))
                installed["logs"].force_flush(int(self.timeout * 1000))

    def _new_session(self, eval_set_id: Optional[str], session_name: Optional[str],
                     session_id: Optional[str]) -> Session:
        if session_name and session_id and session_name != session_id:
            raise TypeError("AgentEvals.session: give session_id or session_name (0.11's name for it), not both")
        return Session(session_id or session_name or uuid.uuid4().hex, eval_set_id or self.eval_set_id)

    def _attributes(self, session: Session, metadata: Optional[dict[str, Any]]) -> dict[str, Any]:
        attributes: dict[str, Any] = {"gen_ai.conversation.id": session.session_id}
        if session.eval_set_id:
            attributes["agentevals.eval_set_id"] = session.eval_set_id
        for key, value in {**self.metadata, **(metadata or {})}.items():
            attributes[f"agentevals.metadata.{key}"] = value if isinstance(value, (str, int, float, bool)) else str(value)
        return attributes

    def _tracer(self, tracer_provider: Any = None) -> Any:
        if self.capture_message_content:
            os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", _content_capture_default())
        installed = _install(self.endpoint, self.service_name, self.timeout, tracer_provider)
        if self.auto_instrument:
            _auto_instrument()
        return installed["tracer_provider"].get_tracer("agentevals")


def _from_ws_url(ws_url: Optional[str]) -> Optional[str]:
    """0.11's reading of a non-default ``ws_url``: OTLP/HTTP on port 4318 of its host (deprecated)."""
    if not ws_url or ws_url == LEGACY_WS_URL:
        return None
    warnings.warn("AgentEvals(ws_url=...) is deprecated: agentevals receives OTLP; pass endpoint='http://host:4318'",
                  DeprecationWarning, stacklevel=3)
    parts = urlsplit(ws_url)
    return f"{'https' if parts.scheme in ('wss', 'https') else 'http'}://{parts.hostname or 'localhost'}:4318"


def _content_capture_default() -> str:
    """What GenAI instrumentations accept for content capture in the current semconv mode (as 0.11 chose)."""
    opt_in = {v.strip() for v in os.environ.get("OTEL_SEMCONV_STABILITY_OPT_IN", "").split(",")}
    return "SPAN_ONLY" if "gen_ai_latest_experimental" in opt_in else "true"


def _auto_instrument() -> None:
    """Turn on the instrumentations 0.11 turned on when they are installed (OpenAI v2; Strands' semconv mode)."""
    try:
        from opentelemetry.instrumentation.openai_v2 import (  # type: ignore[import-not-found]  # optional, not a dependency
            OpenAIInstrumentor,
        )

        OpenAIInstrumentor().instrument()
    except (ImportError, RuntimeError):
        pass
    try:
        import strands  # type: ignore[import-not-found]  # noqa: F401  # optional, not a dependency

        os.environ.setdefault("OTEL_SEMCONV_STABILITY_OPT_IN", "gen_ai_latest_experimental")
    except ImportError:
        pass


def _stdin_prompts() -> Iterator[str]:
    """Lines of stdin until end of file (0.11's ``interactive`` mode)."""
    import sys

    for line in sys.stdin:
        yield line.rstrip("\n")


_NO_PROMPT: Any = object()
"""``run()`` without prompts calls the agent with no argument (0.11)."""


def _given(prompt: Any) -> tuple[Any, ...]:
    return () if prompt is _NO_PROMPT else (prompt,)


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _messages(role: str, content: Any) -> str:
    text = content if isinstance(content, str) else json.dumps(content, default=str)
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _install(endpoint: str, service_name: str, timeout: float, tracer_provider: Any = None) -> dict[str, Any]:
    """Export the process's spans and logs to ``endpoint`` (once per endpoint and tracer provider).

    ``tracer_provider`` when given; else the global tracer and logger providers when they are SDK
    providers (the agent's own instrumentation then reaches us too); otherwise ours become the global ones.
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
        key = (endpoint, id(tracer_provider) if tracer_provider is not None else None)
        if key in _installed:
            return _installed[key]
        resource = Resource.create({"service.name": service_name})
        tracer_provider = tracer_provider if tracer_provider is not None else trace.get_tracer_provider()
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
        _installed[key] = {"tracer_provider": tracer_provider, "logger_provider": logger_provider,
                           "spans": spans, "logs": logs}
        return _installed[key]
