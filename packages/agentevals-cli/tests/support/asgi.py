"""An ASGI app (the API and web UI) served by uvicorn on a thread, on an ephemeral loopback port."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Optional


@contextmanager
def serving(app: Any) -> Iterator[str]:
    """Serve ``app`` until the block ends; yields its base URL (``http://127.0.0.1:PORT``)."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.02)
    assert server.started, "the UI server did not start within 20 s"
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(15)
        sock.close()


@contextmanager
def serving_store(location: Optional[str], **context: Any) -> Iterator[str]:
    """The API app with its web UI served as ``serving`` does, over the run store at ``location`` (None: no run
    store, as ``serve --no-store``); ``context`` goes to ``ApiContext`` (e.g. ``allow_code=True``). Yields the
    base URL::

        with serving_store(str(tmp_path / "runs.sqlite")) as url:
            requests.get(f"{url}/runs", timeout=30)
    """
    # imported here: this module also serves tests that run without the serve extra
    from agentevals.serve.http_api import ApiContext, api_app
    from agentevals.serve.sessions import SessionAssembler
    from agentevals.serve.store import MemorySessionStore
    from agentevals.store import RunStore

    runs = RunStore.open(location) if location else None
    try:
        with serving(api_app(ApiContext(assembler=SessionAssembler(), store=MemorySessionStore(), runs=runs,
                                        **context))) as url:
            yield url
    finally:
        if runs is not None:
            runs.close()
