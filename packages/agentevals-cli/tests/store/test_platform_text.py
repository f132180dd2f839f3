"""The run store records ``platform.platform()``'s text without paying for it (no ``uname -p`` process)."""

from __future__ import annotations

import platform
import sys

import pytest
from agentevals.store._recording import _platform_text


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the fast path is Linux's")
def test_the_recorded_platform_is_platform_platform_without_the_processor() -> None:
    expected = platform.platform()
    processor = platform.processor()  # ``uname -p``: "unknown" on Debian, where the two texts are equal
    if processor and processor != "unknown":
        expected = expected.replace(f"-{processor}-with", "-with", 1)
    assert _platform_text() == expected
