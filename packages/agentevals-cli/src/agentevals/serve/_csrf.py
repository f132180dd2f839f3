"""CSRF tokens for the web UI's own forms (double submit, signed with a per-process secret).

Every UI form that changes state (``method="post"``) carries a hidden field; the guard refuses a UI
POST without a valid one (HTTP 403, one line). A token is ``HMAC(secret, nonce)`` where ``nonce`` lives in
an HttpOnly, SameSite=Strict cookie set by the page that shows the form: a page on another site can
neither read the cookie nor compute the HMAC, and a restart of ``serve`` (a new secret) voids old tokens.

How a page and its form use it (``web_ui.page`` does the first two for every template):

    tokens = CsrfTokens()
    nonce, fresh = tokens.nonce(request.cookies.get(CSRF_COOKIE))
    html = template.render(csrf_field=tokens.field(nonce))       # {{ csrf_field }} inside <form method="post">
    if fresh: tokens.set_cookie(response, nonce)

and the server checks each UI POST before the route runs (``CsrfCheck``, mounted by ``api_app``), so a
new form route needs nothing more than ``{{ csrf_field }}`` in its template.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Optional
from urllib.parse import parse_qs

from markupsafe import Markup
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ._guard import SAFE_METHODS, refusal

__all__ = ["CSRF_COOKIE", "CSRF_FIELD", "CsrfCheck", "CsrfTokens"]

CSRF_COOKIE = "agentevals_csrf"
CSRF_FIELD = "csrf_token"
_NONCE_CHARS = 43  # secrets.token_urlsafe(32)


class CsrfTokens:
    """Issues and checks the tokens of one server process."""

    def __init__(self, secret: Optional[bytes] = None) -> None:
        self._secret = secret or secrets.token_bytes(32)

    def nonce(self, cookie: Optional[str]) -> tuple[str, bool]:
        """The browser's nonce from its cookie, or a new one: ``(nonce, needs_setting)``."""
        if cookie and len(cookie) == _NONCE_CHARS and cookie.replace("-", "").replace("_", "").isalnum():
            return cookie, False
        return secrets.token_urlsafe(32), True

    def token(self, nonce: str) -> str:
        """The form token that goes with ``nonce``."""
        return hmac.new(self._secret, nonce.encode(), hashlib.sha256).hexdigest()

    def field(self, nonce: str) -> Markup:
        """The hidden ``<input>`` to put inside a POST form."""
        return Markup('<input type="hidden" name="{}" value="{}">').format(CSRF_FIELD, self.token(nonce))

    def valid(self, cookie: Optional[str], token: Optional[str]) -> bool:
        """Whether a submitted ``token`` matches the browser's cookie (constant time)."""
        if not cookie or not token:
            return False
        return hmac.compare_digest(self.token(cookie).encode(), token.strip().encode())

    @staticmethod
    def set_cookie(response: Response, nonce: str) -> None:
        response.set_cookie(CSRF_COOKIE, nonce, httponly=True, samesite="strict", path="/")


class CsrfCheck:
    """ASGI middleware: a state-changing request outside ``/api`` (a UI form post) needs a valid token.

    The body is read (at most ``limit`` bytes: forms are small; a declared ``Content-Length`` over it is
    refused with 413 before reading), checked, then handed to the app unchanged. The token may also come in an ``X-CSRF-Token`` header.
    """

    def __init__(self, app: ASGIApp, tokens: CsrfTokens, *, exempt: tuple[str, ...] = ("/api/", "/mcp"),
                 limit: int = 1 << 20) -> None:
        self.app, self.tokens, self.exempt, self.limit = app, tokens, exempt, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if (scope["type"] != "http" or scope.get("method", "GET").upper() in SAFE_METHODS
                or path.startswith(self.exempt)):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.limit:  # refused before a byte is read
            await _refuse(send, 413, f"form post to {path} is over {self.limit} bytes")
            return
        messages: list[Message] = []
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await _refuse(send, 413, f"form post to {path} is over {self.limit} bytes")
                return
            chunks.append(chunk)  # joined once below: `body += chunk` is quadratic in the number of chunks
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        token = headers.get("x-csrf-token") or await _form_token(scope, body)
        if not self.tokens.valid(Request(scope).cookies.get(CSRF_COOKIE), token):
            await _refuse(send, 403, f"form post to {path} refused: missing or invalid CSRF token "
                                     "(reload the page and submit again)")
            return

        async def replay() -> Message:
            return messages.pop(0) if messages else await receive()

        await self.app(scope, replay, send)


async def _form_token(scope: Scope, body: bytes) -> Optional[str]:
    """The ``csrf_token`` field of an urlencoded or multipart body (None when absent or unreadable)."""
    kind = Headers(scope=scope).get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/x-www-form-urlencoded":
        values = parse_qs(body.decode("latin-1")).get(CSRF_FIELD)
        return values[0] if values else None
    if kind == "multipart/form-data":
        sent = False

        async def once() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            async with Request(scope, once).form(max_files=1000, max_fields=1000) as form:
                value = form.get(CSRF_FIELD)
                return value if isinstance(value, str) else None
        except Exception:  # a malformed multipart body: no token (refused), never a traceback
            return None
    return None


async def _refuse(send: Send, status: int, message: str) -> None:
    status, headers, body = refusal(status, message)
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
