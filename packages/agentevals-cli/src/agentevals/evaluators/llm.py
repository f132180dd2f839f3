"""OpenAI-compatible chat client shared by every LLM-backed evaluator (llm_judge, rubric, openai_eval, …).

Credentials and endpoint come from the entry (``base_url``, ``api_key_env``) or the standard variables
(``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``), so local servers
(vLLM, Ollama, gateways) work. The ``openai`` package is the optional ``openai`` extra.

Retries are ours, not the ``openai`` client's: rate limits (408/409/429), 5xx and connection errors are
retried ``max_retries`` times after the server's ``retry-after`` (up to 60 s; else a doubling backoff), but only
while the wait fits before the client's deadline: a wait past it fails at once with the server's cause.

Example:
    ```python
    settings = LLMSettings(model="gpt-4o-mini")
    reason = settings.unavailable_reason()      # None, or why this cannot run (→ NOT_EVALUATED)
    async with settings.client(timeout=30) as client:
        text = await client.complete([{"role": "user", "content": "Say hi"}])
        vectors = await client.embed(["a", "b"], model="text-embedding-3-large")
        evals = await client.call(client.raw.evals.list)    # any API call, errors mapped the same way
    ```
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ..core.redact import redact
from ..errors import EvaluatorFailure, MissingDependencyError, first_line
from .usage import record_usage

__all__ = ["ChatClient", "LLMSettings", "redact"]

RETRY_STATUSES = frozenset({408, 409, 429})
"""Besides every 5xx: statuses worth another try."""
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 8.0
RETRY_AFTER_MAX = 60.0
"""A longer ``retry-after`` is not honoured (the doubling backoff is used instead), as the openai client does."""

@dataclass
class LLMSettings:
    """Where and how to call an OpenAI-compatible API."""

    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    """Name of the environment variable holding the key (default OPENAI_API_KEY)."""
    max_retries: int = 2

    @property
    def key_variable(self) -> str:
        return self.api_key_env or "OPENAI_API_KEY"

    @property
    def api_key(self) -> str | None:
        return os.environ.get(self.key_variable) or None

    @property
    def endpoint(self) -> str:
        """The base URL calls go to (entry, then OPENAI_BASE_URL), without credentials, for messages."""
        url = self.base_url or os.environ.get("OPENAI_BASE_URL")
        if not url:
            return "the OpenAI API"
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, host, parts.path, "", ""))

    def unavailable_reason(self, *, need_model: bool = True) -> str | None:
        """Why a call cannot be made (missing extra, key or model), or None when it can.

        Args:
            need_model: Whether a missing ``model`` counts (not for the Evals API or when the caller
                passes the model per call).
        """
        try:
            import openai  # noqa: F401
        except ImportError:
            return 'the openai extra is not installed: pip install "agentevals-cli[openai]"'
        if not self.api_key:
            return f"no API key: set {self.key_variable}"
        if need_model and not self.model:
            return "no model configured (set `model:` or pass -j/--judge-model)"
        return None

    def client(self, *, timeout: float, deadline: float | None = None) -> ChatClient:
        """A client whose requests each get ``timeout`` seconds; retries stop at ``deadline``
        (a ``time.monotonic()`` value; default: none, each retry is bounded by ``max_retries`` only)."""
        return ChatClient(self, timeout=timeout, deadline=deadline)


class ChatClient:
    """A thin async wrapper over ``openai.AsyncOpenAI`` with bounded retries and redacted errors."""

    def __init__(self, settings: LLMSettings, *, timeout: float, deadline: float | None = None) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - guarded by unavailable_reason
            raise MissingDependencyError("calling an OpenAI-compatible API", "openai") from exc
        self.settings = settings
        self.deadline = deadline
        """``time.monotonic()`` after which no retry is started (None: no limit but ``max_retries``)."""
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            organization=os.environ.get("OPENAI_ORG_ID") or None,
            project=os.environ.get("OPENAI_PROJECT_ID") or None,
            timeout=timeout,
            max_retries=0,  # retried in call(), within the deadline
        )

    @property
    def raw(self) -> Any:
        """The underlying ``openai.AsyncOpenAI`` (for the Evals API and embeddings)."""
        return self._client

    async def __aenter__(self) -> ChatClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    async def call(self, method: Callable[..., Awaitable[Any]], /, *args: Any, **kwargs: Any) -> Any:
        """Await ``method(*args, **kwargs)`` (a method of ``raw``); failures become one-line EvaluatorFailures.

        Rate limits, 5xx and connection errors are retried (``max_retries``, within ``deadline``).
        """
        attempt = 0
        while True:
            try:
                return await method(*args, **kwargs)
            except self._openai.APIError as exc:
                wait = self._retry_wait(exc, attempt)
                if wait is None or attempt >= self.settings.max_retries:
                    raise EvaluatorFailure(self.describe_error(exc)) from None
                asked = self._retry_after(exc)
                if asked is not None and asked > RETRY_AFTER_MAX:
                    raise EvaluatorFailure(f"{self.describe_error(exc)} (the server asks to retry in {asked:g}s, "
                                           f"more than the {RETRY_AFTER_MAX:g}s agentevals waits)") from None
                if self.deadline is not None and time.monotonic() + wait >= self.deadline:
                    why = (f"the server asks to retry in {wait:g}s, past the deadline"
                           if self._retry_after(exc) is not None else "no time left to retry")
                    raise EvaluatorFailure(f"{self.describe_error(exc)} ({why})") from None
                attempt += 1
                await asyncio.sleep(wait)
            except ValueError as exc:  # the body is not the JSON the client expects (json.JSONDecodeError, …)
                message = f"malformed response from {self.settings.endpoint}: {first_line(exc)}"
                raise EvaluatorFailure(redact(message, self.settings.api_key)) from None

    def _retry_after(self, exc: BaseException) -> float | None:
        """Seconds the server asked to wait (``retry-after-ms`` / ``retry-after``), when it said."""
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None) or {}
        try:
            if headers.get("retry-after-ms"):
                return max(0.0, float(headers["retry-after-ms"]) / 1000)
            value = headers.get("retry-after")
            if value:
                try:
                    return max(0.0, float(value))
                except ValueError:
                    when = email.utils.parsedate_to_datetime(value)
                    return max(0.0, when.timestamp() - time.time())
        except (TypeError, ValueError):
            return None
        return None

    def _retry_wait(self, exc: BaseException, attempt: int) -> float | None:
        """Seconds to wait before retrying after ``exc``, or None when it is not worth retrying."""
        status = getattr(exc, "status_code", None)
        retryable = isinstance(exc, self._openai.APIConnectionError) or (
            isinstance(status, int) and (status in RETRY_STATUSES or status >= 500)
        )
        if not retryable:
            return None
        asked = self._retry_after(exc)
        if asked is not None and asked <= RETRY_AFTER_MAX:
            return asked
        return min(BACKOFF_MAX, BACKOFF_FIRST * 2**attempt)

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        json_schema: dict[str, Any] | None = None,
        schema_name: str = "result",
        temperature: float | None = 0.0,
        **params: Any,
    ) -> Any:
        """Return the reply text, or the parsed JSON object when ``json_schema`` is given.

        Args:
            temperature: Sampling temperature; None leaves it out (reasoning models reject it).
            **params: Further chat-completions parameters (``top_p``, ``seed``, ``max_completion_tokens``,
                ``reasoning_effort``); None values are left out.
        """
        kwargs: dict[str, Any] = {"model": self.settings.model, "messages": messages, "temperature": temperature}
        kwargs.update(params)
        kwargs = {k: v for k, v in kwargs.items() if v is not None}
        if json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
            }
        response = await self.call(self._client.chat.completions.create, **kwargs)
        record_usage(kwargs.get("model"), response)  # the evaluation's judge tokens (budgets, /api/metrics)
        text = (response.choices[0].message.content or "") if response.choices else ""
        if json_schema is None:
            return text
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise EvaluatorFailure(f"judge reply is not valid JSON: {text[:200]!r}") from None

    async def embed(self, texts: list[str], *, model: str | None = None) -> list[list[float]]:
        """Embedding vectors of ``texts`` (in order) from the embeddings endpoint."""
        create = self._client.embeddings.create
        response = await self.call(create, model=model or self.settings.model, input=texts)
        record_usage(model or self.settings.model, response)
        data = sorted(response.data, key=lambda d: d.index)
        if len(data) != len(texts):
            where = self.settings.endpoint
            raise EvaluatorFailure(f"{where} returned {len(data)} embeddings for {len(texts)} texts")
        return [list(d.embedding) for d in data]

    def describe_error(self, exc: BaseException) -> str:
        """One line for an API failure, without secrets."""
        status = getattr(exc, "status_code", None)
        kind = type(exc).__name__
        message = str(getattr(exc, "message", "") or exc).splitlines()[0] if str(exc) else kind
        message = re.sub(r"^Error code: \d+ - ", "", message)  # the status is said once, below
        body = getattr(exc, "body", None)  # the JSON error: its "error" object (openai before ~1.70: the whole body)
        found = body.get("error", body) if isinstance(body, dict) else None
        if isinstance(found, dict) and isinstance(found.get("message"), str) and found["message"].strip():
            message = found["message"].strip().splitlines()[0]
        root, seen = exc, 0  # e.g. "Connection error." → the innermost cause: "[Errno 111] Connect call failed"
        while (cause := root.__cause__ or root.__context__) is not None and seen < 10:
            root, seen = cause, seen + 1
        if status is None and root is not exc and str(root).strip():
            message = f"{message.rstrip('.')}: {str(root).strip().splitlines()[0]}"
        where = f"HTTP {status}" if status else kind
        return redact(f"{where} from {self.settings.endpoint}: {message}", self.settings.api_key)

    async def aclose(self) -> None:
        await self._client.close()
