"""HTTP GET within a deadline, on a daemon thread so that a server that never answers cannot hang exit."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping
from typing import Any

from ..core._http import HttpError, request
from ..execution.deadline import Deadline
from .base import SourceError

__all__ = ["http_get"]

MAX_BYTES = 20 * 1024 * 1024
SOCKET_GRACE = 1.0


def _get(url: str, headers: Mapping[str, str], timeout: float) -> bytes | None:
    try:
        response = request("GET", url, headers=headers, timeout=max(timeout, 0.05), deadline=max(timeout, 0.05),
                           max_bytes=MAX_BYTES)
    except HttpError as exc:
        raise SourceError(str(exc)) from None
    if response.status == 404:
        return None
    if 300 <= response.status < 400:
        raise SourceError(f"{url}: unexpected redirect (HTTP {response.status}) to {response.headers.get('Location')}")
    if not response.ok:
        raise SourceError(f"{url}: HTTP {response.status} {response.reason}")
    return response.body


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
