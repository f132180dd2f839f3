"""Waiting for an outcome in tests: poll a check until it is truthy, never assert a time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(check: Callable[[], Any], timeout: float = 30.0, what: str = "condition", interval: float = 0.2) -> Any:
    """``check()``'s first truthy value within ``timeout`` seconds; else an AssertionError naming ``what``
    and the last value (the deadline is generous: a busy machine is slow, not wrong)."""
    deadline = time.monotonic() + timeout
    value = None
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"no {what} within {timeout:g}s: last {value!r}")
