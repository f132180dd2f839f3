"""OpenAI-compatible chat client shared by every LLM-backed evaluator (llm_judge, rubric, openai_eval, …).

Credentials and endpoint come from the entry (``base_url``, ``api_key_env``) or the standard variables
(``OPENAI_API_KEY``, ``OPENAI_BASE_URL``, ``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``), so local servers
(vLLM, Ollama, gateways) work. The ``openai`` package is the optional ``openai`` extra.

Example:
    ```python
    settings = LLMSettings(model="gpt-4o-mini")
    reason = settings.unavailable_reason()      # None, or why this cannot run (→ NOT_EVALUATED)
    client = settings.client(timeout=30)
    text = await client.complete([{"role": "user", "content": "Say hi"}])
    ```
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from typing import Any, Optional

from .errors import EvaluatorFailure, MissingDependencyError

__all__ = ["ChatClient", "LLMSettings", "redact"]

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-]{6,}|Bearer\s+[A-Za-z0-9_\-.]{6,})")


def redact(text: str, *secrets: Optional[str]) -> str:
    """Remove API keys (given ones and anything key-shaped) from a message."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return _SECRET.sub("***", text)


@dataclass
class LLMSettings:
    """Where and how to call an OpenAI-compatible API."""

    model: Optional[str] = None
    base_url: Optional[str] = None
    api_key_env: Optional[str] = None
    """Name of the environment variable holding the key (default OPENAI_API_KEY)."""
    max_retries: int = 2

    @property
    def key_variable(self) -> str:
        return self.api_key_env or "OPENAI_API_KEY"

    @property
    def api_key(self) -> Optional[str]:
        return os.environ.get(self.key_variable) or None

    def unavailable_reason(self) -> Optional[str]:
        """Why a call cannot be made (missing extra, key or model), or None when it can."""
        try:
            import openai  # noqa: F401
        except ImportError:
            return f'the openai extra is not installed: pip install "agentevals-cli[openai]"'
        if not self.api_key:
            return f"no API key: set {self.key_variable}"
        if not self.model:
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

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        json_schema: Optional[dict[str, Any]] = None,
        schema_name: str = "result",
        temperature: float = 0.0,
    ) -> Any:
        """Return the reply text, or the parsed JSON object when ``json_schema`` is given."""
        kwargs: dict[str, Any] = {"model": self.settings.model, "messages": messages, "temperature": temperature}
        if json_schema is not None:
            kwargs["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": json_schema, "strict": True},
            }
        try:
            response = await self._client.chat.completions.create(**kwargs)
        except self._openai.APIError as exc:
            raise EvaluatorFailure(self.describe_error(exc)) from None
        text = (response.choices[0].message.content or "") if response.choices else ""
        if json_schema is None:
            return text
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            raise EvaluatorFailure(f"judge reply is not valid JSON: {text[:200]!r}") from None

    def describe_error(self, exc: BaseException) -> str:
        """One line for an API failure, without secrets."""
        status = getattr(exc, "status_code", None)
        kind = type(exc).__name__
        message = str(getattr(exc, "message", "") or exc).splitlines()[0] if str(exc) else kind
        where = f"HTTP {status}" if status else kind
        return redact(f"{where} from {self.settings.base_url or 'the API'}: {message}", self.settings.api_key)

    async def aclose(self) -> None:
        await self._client.close()
