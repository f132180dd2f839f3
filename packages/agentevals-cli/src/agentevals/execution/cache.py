"""Where agentevals caches downloads and environments, and the file locks that guard them.

The cache root is ``$XDG_CACHE_HOME/agentevals`` when ``XDG_CACHE_HOME`` is set, else
``~/.cache/agentevals`` (on Windows, the platform's user cache directory). Inside it:
``evaluators/`` (remote evaluators), ``venvs/`` (Python environments), ``locks/``.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from .deadline import Deadline

__all__ = ["cache_root", "content_hash", "locked"]


def cache_root() -> Path:
    """The agentevals cache directory (not created)."""
    xdg = os.environ.get("XDG_CACHE_HOME")
    if xdg:
        return Path(xdg) / "agentevals"
    if sys.platform == "win32":  # pragma: no cover
        import platformdirs

        return Path(platformdirs.user_cache_dir("agentevals", appauthor=False))
    return Path.home() / ".cache" / "agentevals"


def content_hash(*parts: bytes | str, length: int = 16) -> str:
    """A short stable hex digest of ``parts`` (used as a cache key)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode() if isinstance(part, str) else part)
        digest.update(b"\0")
    return digest.hexdigest()[:length]


@asynccontextmanager
async def locked(key: str, deadline: Deadline) -> AsyncIterator[None]:
    """Hold the cache lock ``key`` (shared with other agentevals processes) until the block ends.

    Waits without blocking the event loop, at most until ``deadline``.
    """
    from filelock import FileLock, Timeout

    directory = cache_root() / "locks"
    directory.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(directory / f"{key}.lock"))
    previous = deadline.phase
    while True:
        try:
            lock.acquire(timeout=0)
            break
        except Timeout:
            if deadline.remaining() <= 0:
                raise deadline.failure() from None
            deadline.phase = f"waiting for another run to finish {previous}"
            await asyncio.sleep(0.1)
    deadline.phase = previous
    try:
        yield
    finally:
        lock.release()
