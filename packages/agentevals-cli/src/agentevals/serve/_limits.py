"""Request limits and the API token, shared by every HTTP endpoint of ``serve``."""

from __future__ import annotations

import hmac
import zlib
from typing import Any, Optional

from starlette.requests import Request

__all__ = ["BodyTooLarge", "check_token", "error_body", "read_body"]


def error_body(message: str) -> dict[str, Any]:
    """Every refusal's JSON body: our envelope (``data``/``error``, as 0.11's StandardResponse) with 0.11's
    FastAPI ``detail`` beside it (what 0.11 answered for a 404, a 422 or an HTTPException)."""
    return {"data": None, "error": message, "detail": message}


class BodyTooLarge(ValueError):
    """The request body (after decompression) is larger than the limit: answered with HTTP 413."""


async def read_body(request: Request, limit: int) -> bytes:
    """The body, decompressed when ``Content-Encoding: gzip``/``deflate``; ``BodyTooLarge`` past ``limit``.

    Both the bytes on the wire and the decompressed bytes are counted, so neither a huge upload nor a
    small gzip bomb can take more than ``limit`` bytes of memory.
    """
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"request body of {declared} bytes is over the {limit}-byte limit")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"request body is over the {limit}-byte limit")
        chunks.append(chunk)
    body = b"".join(chunks)
    encoding = request.headers.get("content-encoding", "").strip().lower()
    if encoding in ("gzip", "deflate"):
        wbits = 16 + zlib.MAX_WBITS if encoding == "gzip" else zlib.MAX_WBITS
        inflater = zlib.decompressobj(wbits)
        try:
            body = inflater.decompress(body, limit + 1)
        except zlib.error as exc:
            raise ValueError(f"invalid {encoding} body: {exc}") from None
        if len(body) > limit or inflater.unconsumed_tail:
            raise BodyTooLarge(f"decompressed request body is over the {limit}-byte limit")
    elif encoding not in ("", "identity"):
        raise ValueError(f"unsupported Content-Encoding '{encoding}' (use gzip or none)")
    return body


def check_token(token: Optional[str], authorization: Optional[str]) -> bool:
    """Whether ``Authorization: Bearer <token>`` matches (always True when no token is configured)."""
    if not token:
        return True
    scheme, _, given = (authorization or "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


