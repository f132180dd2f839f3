"""The official MCP client's streamable HTTP transport under either SDK's API: ``streamable_http_client(url,
http_client=…)`` (mcp 1.2x and 2.x) or ``streamablehttp_client(url, headers=…)`` (earlier 1.x, down to the
floor agentevals-cli allows, which tools/lowest_deps.py installs).

    async with mcp_streams(url, headers={"Authorization": "Bearer …"}) as (read, write, *_):
        async with ClientSession(read, write) as session: ...
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any, Optional


@contextlib.asynccontextmanager
async def mcp_streams(url: str, *, headers: Optional[dict[str, str]] = None) -> AsyncIterator[Any]:
    try:
        from mcp.client.streamable_http import streamable_http_client
    except ImportError:  # mcp before 1.2x
        from mcp.client.streamable_http import streamablehttp_client

        async with streamablehttp_client(url, headers=headers) as streams:
            yield streams
        return
    import httpx

    async with contextlib.AsyncExitStack() as stack:
        client = None if headers is None else await stack.enter_async_context(httpx.AsyncClient(headers=headers))
        yield await stack.enter_async_context(streamable_http_client(url) if client is None
                                              else streamable_http_client(url, http_client=client))
