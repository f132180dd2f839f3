"""Read what a process writes to a pseudo-terminal, in the background (progress bars, Ctrl-C tests)."""

from __future__ import annotations

import os
import select
import subprocess
import threading


def pump(master: int, proc: subprocess.Popen, captured: list[bytes], *, close: bool = False) -> threading.Thread:
    """Append everything written to the pty ``master`` to ``captured`` until it closes or ``proc`` ends
    (then ``master`` is closed if ``close``). Returns the started daemon thread."""

    def read() -> None:
        while True:
            ready, _, _ = select.select([master], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                captured.append(chunk)
            elif proc.poll() is not None:
                break
        if close:
            os.close(master)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread
