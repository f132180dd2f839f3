"""The package's one HTTP client: the standard library's urllib, a deadline on every call, one-line errors.

    from agentevals._http import HttpError, request

    response = request("GET", url, timeout=10, deadline=10)         # Response(status, reason, headers, body)
    if response.status == 404: ...
    request("POST", url, body=data, headers={"Content-Type": "application/x-protobuf"}, timeout=5, deadline=5, proxies=False)
    with open(path, "wb") as out:
        request("GET", url, timeout=60, deadline=None, follow_redirects=True, into=out)  # streamed to a file

Every status comes back as a ``Response`` (what a 404 or a 503 means is the caller's decision); what
is not an answer (refused, unreachable, TLS, no answer in time, too large) raises ``HttpError`` whose
message is one line naming the host. ``timeout`` bounds each socket operation (connect, each read);
``deadline`` bounds the whole call (checked between reads; each call names both, so none is unbounded).

Why urllib and not requests or httpx: the core install needs no HTTP dependency, and importing it costs
~57 ms against ~240 ms for requests and ~430 ms for httpx (which also imports click and rich for its
command line when they are installed; ``python -X importtime``, best of 10).
"""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import Message
from typing import IO, Any, Optional
from urllib.parse import urlsplit

__all__ = ["HttpError", "Response", "request"]

CHUNK = 1 << 16


class HttpError(OSError):
    """No HTTP answer: the host is unreachable, refused, too slow, or the body is too large. One line.

    ``detail`` is the cause without the host (``[Errno 111] Connection refused``), for callers that name
    the server their own way."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail or message


@dataclass(frozen=True)
class Response:
    """An HTTP answer, whatever its status."""

    status: int
    reason: str
    headers: Message = field(repr=False)
    body: bytes = field(repr=False)
    """The body (``b""`` when it was written ``into`` a file)."""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx comes back as the response


def _host(url: str) -> str:
    """``host:port`` of ``url`` (the url itself when it has none), as errors name it."""
    return urlsplit(url).netloc or url


def request(method: str, url: str, *, timeout: float, deadline: Optional[float],
            headers: Optional[Mapping[str, str]] = None, body: Optional[bytes] = None,
            proxies: bool = True, follow_redirects: bool = False, max_bytes: Optional[int] = None,
            into: Optional[IO[bytes]] = None) -> Response:
    """Send one request and read its answer.

    Args:
        timeout: seconds for each socket operation (connecting, each read).
        deadline: seconds for the whole call (``None``: only ``timeout`` applies, as for a large
            download that keeps arriving).
        proxies: use the ``*_proxy`` environment variables (False: connect directly).
        follow_redirects: follow 3xx answers (False: return them).
        max_bytes: refuse a larger body with ``HttpError``.
        into: write the body to this binary file instead of keeping it.
    """
    end = None if deadline is None else time.monotonic() + deadline
    handlers: list[Any] = [] if follow_redirects else [_NoRedirect()]
    if not proxies:
        handlers.append(urllib.request.ProxyHandler({}))
    opener = urllib.request.build_opener(*handlers)
    prepared = urllib.request.Request(url, data=body, method=method,
                                      headers={"User-Agent": "agentevals", **(headers or {})})
    try:
        try:
            answer = opener.open(prepared, timeout=max(_left(end, timeout), 0.05))
        except urllib.error.HTTPError as exc:  # a 4xx/5xx (or an unfollowed 3xx) is an answer too
            answer = exc
        with answer:
            return Response(answer.status if answer.status is not None else answer.code,
                            str(answer.reason or ""), answer.headers, _read(answer, url, end, max_bytes, into))
    except urllib.error.URLError as exc:
        raise HttpError(f"cannot reach {_host(url)}: {exc.reason}", str(exc.reason)) from None
    except TimeoutError:
        seconds = timeout if deadline is None else deadline
        raise HttpError(f"no answer from {_host(url)} within {seconds:.3g}s", f"no answer within {seconds:.3g}s") from None
    except HttpError:
        raise
    except OSError as exc:
        raise HttpError(f"cannot read from {_host(url)}: {exc}", str(exc)) from None


def _left(end: Optional[float], timeout: float) -> float:
    return timeout if end is None else min(timeout, end - time.monotonic())


def _read(answer: Any, url: str, end: Optional[float], max_bytes: Optional[int], into: Optional[IO[bytes]]) -> bytes:
    parts: list[bytes] = []
    size = 0
    read = getattr(answer, "read1", answer.read)  # what has arrived, so a slow body meets the deadline check
    while True:
        if end is not None and time.monotonic() > end:
            raise TimeoutError
        block = read(CHUNK)
        if not block:
            break
        size += len(block)
        if max_bytes is not None and size > max_bytes:
            raise HttpError(f"{url}: larger than {max_bytes // (1024 * 1024)} MiB")
        if into is not None:
            into.write(block)
        else:
            parts.append(block)
    return b"".join(parts)
