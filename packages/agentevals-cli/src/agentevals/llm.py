"""OpenAI-compatible chat client shared by every LLM-backed evaluator (llm_judge, rubric, openai_eval, …).

Credentials and endpoint come from the entry (``base_url``, ``api_key_env``) or the standard variables
(``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``), so local servers
(vLLM, Ollama, gateways) work. The ``openai`` package is the optional ``openai`` extra.

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

import json
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .errors import EvaluatorFailure, MissingDependencyError

__all__ = ["ChatClient", "LLMSettings", "redact"]

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|Bearer\s+[A-Za-z0-9_\-.]{6,})")


def redact(text: str, *secrets: str | None) -> str:
    """Remove API keys (given ones and anything key-shaped) from a message."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _SECRET.sub("***", text)


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

    def client(self, *, timeout: float) -> ChatClient:
        return ChatClient(self, timeout=timeout)


class ChatClient:
    """A thin async wrapper over ``openai.AsyncOpenAI`` with bounded retries and redacted errors."""

    def __init__(self, settings: LLMSettings, *, timeout: float) -> None:
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - guarded by unavailable_reason
            raise MissingDependencyError("calling an OpenAI-compatible API", "openai") from exc
        self.settings = settings
        self._openai = openai
        self._client = openai.AsyncOpenAI(
            api_key=settings.api_key,
            base_url=settings.base_url or os.environ.get("OPENAI_BASE_URL") or None,
            organization=os.environ.get("OPENAI_ORG_ID") or None,
            project=os.environ.get("OPENAI_PROJECT_ID") or None,
            timeout=timeout,
            max_retries=settings.max_retries,
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

        The client's own bounded retries (429, 5xx, connection errors; ``max_retries``) happen inside.
        """
        try:
            return await method(*args, **kwargs)
        except self._openai.APIError as exc:
            raise EvaluatorFailure(self.describe_error(exc)) from None
        except ValueError as exc:  # the body is not the JSON the client expects (json.JSONDecodeError, …)
            detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            message = f"malformed response from {self.settings.endpoint}: {detail}"
            raise EvaluatorFailure(redact(message, self.settings.api_key)) from None

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
        where = f"HTTP {status}" if status else kind
        return redact(f"{where} from {self.settings.endpoint}: {message}", self.settings.api_key)

    async def aclose(self) -> None:
        await self._client.close()
