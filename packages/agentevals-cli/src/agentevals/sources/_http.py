"""HTTP GET within a deadline, on a daemon thread so that a server that never answers cannot hang exit."""

from __future__ import annotations

import asyncio
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..execution.deadline import Deadline
from .base import SourceError

__all__ = ["http_get"]

MAX_BYTES = 20 * 1024 * 1024
SOCKET_GRACE = 1.0


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # the 3xx surfaces as an HTTPError


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


def _get(url: str, headers: Mapping[str, str], timeout: float) -> bytes | None:
    opener = urllib.request.build_opener(_NoRedirect)
    request = urllib.request.Request(url, headers={"User-Agent": "agentevals", **headers})
    try:
        with opener.open(request, timeout=max(timeout, 0.05)) as response:
            body = response.read(MAX_BYTES + 1)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            return None
        if 300 <= exc.code < 400:
            raise SourceError(f"{url}: unexpected redirect (HTTP {exc.code}) to {exc.headers.get('Location')}") from None
        raise SourceError(f"{url}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise SourceError(f"cannot reach {_host(url)}: {exc.reason}") from None
    except TimeoutError:
        raise SourceError(f"no answer from {_host(url)} within {timeout:.3g}s") from None
    except OSError as exc:
        raise SourceError(f"cannot read from {_host(url)}: {exc}") from None
    if len(body) > MAX_BYTES:
        raise SourceError(f"{url}: larger than {MAX_BYTES // (1024 * 1024)} MiB")
    return body


async def http_get(url: str, *, deadline: Deadline, headers: Mapping[str, str] | None = None) -> bytes | None:
    """The body of ``url`` (None for 404); ``SourceError`` for anything else, at the latest at the deadline."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[bytes | None] = loop.create_future()

    def settle(outcome: Any, failed: bool) -> None:
        if not future.done():
            if failed:
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    def work() -> None:
        try:
            # The socket waits a little longer than the deadline so that the deadline (which names the
            # step) fires first; the thread then ends on its own shortly after.
            outcome: Any = _get(url, headers or {}, deadline.remaining() + SOCKET_GRACE)
            failed = False
        except BaseException as exc:  # delivered to the awaiting task
            outcome, failed = exc, True
        try:
            loop.call_soon_threadsafe(settle, outcome, failed)
        except RuntimeError:  # the loop is gone: nobody waits any more
            pass

    threading.Thread(target=work, name="agentevals-http", daemon=True).start()
    return await deadline.wait(future)
