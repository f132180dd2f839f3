"""Who may talk to ``serve``'s HTTP ports: the Host allow-list, the same-origin rule and the MCP token.

    policy = HostPolicy(bind="127.0.0.1", extra=["evals.internal"])
    app = RequestGuard(app, policy, what="API")               # the API and UI port
    app = RequestGuard(mcp_app, policy, what="MCP", token=t)   # the MCP port also checks the API token
    app = RequestGuard(otlp_app, policy, what="OTLP", check_host=False)   # agents use any name

Three checks, in this order, each answered with one line:

- **Host** (421): the ``Host`` header must name this server: ``localhost``, ``127.0.0.1``, ``[::1]`` (any
  port), the address given to ``--host`` when it is a specific one, and every ``--allowed-host``. A
  DNS-rebinding page (``evil.example`` resolving to 127.0.0.1) sends its own name and is refused, so it
  can read nothing.
- **Origin** (403): a request that changes state (any method but GET, HEAD, OPTIONS) and says where it
  comes from (``Origin``, else ``Referer``) must come from this server's own origin (scheme-less
  ``host:port`` equal to the ``Host`` it was sent to) or from an ``--allowed-host`` name. Browsers
  always send ``Origin`` on cross-site posts, so a page the user visits cannot submit a form to
  ``/api/evaluate``; scripts, SDKs and 0.11-era API clients send neither and keep working unchanged.
- **Token** (401, MCP only; the API checks its own): ``Authorization: Bearer <token>`` when one is set.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import Optional
from urllib.parse import urlsplit

import orjson
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from ._limits import check_token, error_body

__all__ = ["LOOPBACK_NAMES", "SAFE_METHODS", "HostPolicy", "RequestGuard", "refusal"]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
"""Methods that change nothing on this server (its routes keep it so): no Origin check."""


def _split_host(value: str) -> Optional[tuple[str, Optional[int]]]:
    """``Host``-header form (``name``, ``name:port``, ``[v6]``, ``[v6]:port``) → (lower-case name, port)."""
    value = value.strip().lower()
    if not value:
        return None
    try:
        parts = urlsplit(f"//{value}")
        name, port = parts.hostname, parts.port
    except ValueError:  # a bad port, a stray bracket
        return None
    if not name or parts.path or parts.username is not None:
        return None
    return name.rstrip("."), port


def _name(value: str) -> str:
    """A name as given to ``--allowed-host``/``--host`` (``[::1]``, ``host:8001`` allowed) → its bare name."""
    split = _split_host(value)
    if split is None:
        raise ValueError(f"not a host name: {value!r}")
    return split[0]


class HostPolicy:
    """The names this server answers to (``Host``) and the origins it takes state-changing requests from."""

    def __init__(self, *, bind: str = "127.0.0.1", extra: Iterable[str] = ()) -> None:
        self.extra = frozenset(_name(n) for n in extra)
        """``--allowed-host`` names: trusted as ``Host`` and as the origin of a request, on any port."""
        names = set(LOOPBACK_NAMES) | self.extra
        if _specific(bind):
            names.add(_name(bind if ":" not in bind or bind.startswith("[") else f"[{bind}]"))
        self.names = frozenset(names)

    def allows_host(self, host: Optional[str]) -> bool:
        """Whether a ``Host`` header names this server (any port: the name is what DNS rebinding changes)."""
        split = _split_host(host or "")
        return split is not None and split[0] in self.names

    def allows_origin(self, origin: str, host: Optional[str]) -> bool:
        """Whether ``origin`` (an ``Origin`` or ``Referer`` value) is this server's own origin (same
        ``host:port`` as the request's ``Host``) or an ``--allowed-host`` name."""
        try:
            parts = urlsplit(origin.strip())
            name, port = parts.hostname, parts.port
        except ValueError:
            return False
        if parts.scheme not in ("http", "https") or not name:  # "null" (sandboxed frame, file://), data:, …
            return False
        name = name.rstrip(".")
        if name in self.extra:
            return True
        own = _split_host(host or "")
        # One of our names too: on the OTLP port (any Host) a rebinding page's origin equals its Host.
        if own is None or own[0] != name or name not in self.names:
            return False
        default = 443 if parts.scheme == "https" else 80
        return (port or default) == (own[1] or default)


def _specific(bind: str) -> bool:
    """Whether ``--host`` names one address or name (not 0.0.0.0 / :: / empty, which mean "every")."""
    bind = bind.strip().strip("[]")
    if not bind:
        return False
    try:
        return not ipaddress.ip_address(bind).is_unspecified
    except ValueError:
        return True


def refusal(status: int, message: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """A one-line JSON refusal in the API's envelope (``{"data": null, "error": …}``)."""
    body = orjson.dumps(error_body(message))
    return status, [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                    (b"cache-control", b"no-store")], body


class RequestGuard:
    """ASGI middleware applying a ``HostPolicy`` (and, for MCP, the token) before the app sees a request.

    Pure ASGI (no ``BaseHTTPMiddleware``): streamed responses (SSE, MCP) pass through untouched.
    """

    def __init__(self, app: ASGIApp, policy: HostPolicy, *, what: str, token: Optional[str] = None,
                 check_host: bool = True) -> None:
        self.app, self.policy, self.what, self.token, self.check_host = app, policy, what, token, check_host

    def check(self, method: str, headers: Headers) -> Optional[tuple[int, str]]:
        """``(status, one line)`` when the request is refused, else None."""
        host = headers.get("host")
        if self.check_host and not self.policy.allows_host(host):
            shown = (host or "")[:100]
            return 421, (f"{self.what}: Host '{shown}' is not a name of this server (start serve with "
                         f"--allowed-host {_hint(shown)} to allow it)")
        if method.upper() not in SAFE_METHODS:
            source = headers.get("origin") or headers.get("referer")
            if source and not self.policy.allows_origin(source, host):
                kind = "Origin" if headers.get("origin") else "Referer"
                return 403, (f"{self.what}: cross-site request refused ({kind} '{source[:100]}' is not this "
                             "server; a page from another site cannot post here)")
        if self.token and not check_token(self.token, headers.get("authorization")):
            return 401, f"{self.what}: missing or wrong API token (Authorization: Bearer …)"
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        refused = self.check(scope.get("method", "GET"), Headers(scope=scope))
        if refused is None:
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        status, headers, body = refusal(*refused)
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _hint(host: str) -> str:
    split = _split_host(host)
    return split[0] if split else "NAME"
