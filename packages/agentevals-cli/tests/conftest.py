"""Shared fixtures for the CLI package's tests."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
ADK = DATA / "adk"


@pytest.fixture
def adk_data() -> Path:
    """Real ADK traces (Jaeger, Tempo) and eval sets recorded in the field."""
    return ADK
