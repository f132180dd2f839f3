"""The package's one HTTP client: requests, a deadline on every call, one-line errors.

    from agentevals.core._http import HttpError, request

    response = request("GET", url, timeout=10, deadline=10)         # Response(status, reason, headers, body)
    if response.status == 404: ...
    request("POST", url, body=data, headers={"Content-Type": "application/x-protobuf"}, timeout=5, deadline=5, proxies=False)
    with open(path, "wb") as out:
        request("GET", url, timeout=60, deadline=None, follow_redirects=True, into=out)  # streamed to a file

Every status comes back as a ``Response`` (what a 404 or a 503 means is the caller's decision); what
is not an answer (refused, unreachable, TLS, no answer in time, too large) raises ``HttpError`` whose
message is one line naming the host. ``timeout`` bounds each socket operation (connect, each read);
``deadline`` bounds the whole call (checked between reads; each call names both, so none is unbounded).

requests is imported on the first call, not with this module: it costs ~0.2 s to import, and most runs
never send a request (``--help`` and a run over local files stay fast).
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
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
    headers: Mapping[str, str] = field(repr=False)
    """Case-insensitive: ``headers["location"]`` and ``headers["Location"]`` are the same."""
    body: bytes = field(repr=False)
    """The body (``b""`` when it was written ``into`` a file)."""

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


def _host(url: str) -> str:
    """``host:port`` of ``url`` (the url itself when it has none), as errors name it."""
    return urlsplit(url).netloc or url


def _no_answer(url: str, seconds: float) -> HttpError:
    return HttpError(f"no answer from {_host(url)} within {seconds:.3g}s", f"no answer within {seconds:.3g}s")


def _cause(exc: BaseException) -> str:
    """The innermost cause of a requests/urllib3 error (``[Errno 111] Connection refused``), one line:
    their own messages nest the pool, the URL and every wrapper."""
    seen: list[BaseException] = []
    todo: list[BaseException] = [exc]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.append(current)
        if isinstance(current, OSError) and current.errno is not None:
            return f"[Errno {current.errno}] {current.strerror}"
        todo.extend(a for a in current.args if isinstance(a, BaseException))
        for linked in (current.__cause__, current.__context__, getattr(current, "reason", None)):
            if isinstance(linked, BaseException):
                todo.append(linked)
    text = str(seen[-1]) if seen else str(exc)
    return " ".join(text.split()) or type(exc).__name__


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
    import requests

    end = None if deadline is None else time.monotonic() + deadline
    seconds = timeout if deadline is None else deadline
    with requests.Session() as session:
        session.trust_env = proxies  # False: no *_proxy variables (nor .netrc) from the environment
        try:
            answer = session.request(method, url, data=body, stream=True, allow_redirects=follow_redirects,
                                     headers={"User-Agent": "agentevals", **(headers or {})},
                                     timeout=max(_left(end, timeout), 0.05))
            with answer:
                return Response(answer.status_code, str(answer.reason or ""), answer.headers,
                                _read(_chunks(answer), url, end, max_bytes, into))
        except (requests.Timeout, TimeoutError):  # a socket operation, or the whole call, ran out of time
            raise _no_answer(url, seconds) from None
        except requests.ConnectionError as exc:
            cause = _cause(exc)
            if "timed out" in cause.lower():
                raise _no_answer(url, seconds) from None
            raise HttpError(f"cannot reach {_host(url)}: {cause}", cause) from None
        except HttpError:
            raise
        except (requests.RequestException, OSError) as exc:
            cause = _cause(exc)
            raise HttpError(f"cannot read from {_host(url)}: {cause}", cause) from None


def _chunks(answer: Any) -> Iterator[bytes]:
    """The body as it arrives (``read1``: what is there, so a slow body meets the deadline check)."""
    raw = answer.raw
    if not hasattr(raw, "read1"):  # urllib3 < 2
        yield from raw.stream(CHUNK, decode_content=True)
        return
    while True:
        block = raw.read1(CHUNK, decode_content=True)
        if not block:
            return
        yield block


def _left(end: Optional[float], timeout: float) -> float:
    return timeout if end is None else min(timeout, end - time.monotonic())


def _read(blocks: Iterator[bytes], url: str, end: Optional[float], max_bytes: Optional[int],
          into: Optional[IO[bytes]]) -> bytes:
    parts: list[bytes] = []
    size = 0
    for block in blocks:
        if end is not None and time.monotonic() > end:
            raise TimeoutError
        size += len(block)
        if max_bytes is not None and size > max_bytes:
            raise HttpError(f"{url}: larger than {max_bytes // (1024 * 1024)} MiB")
        if into is not None:
            into.write(block)
        else:
            parts.append(block)
    return b"".join(parts)
