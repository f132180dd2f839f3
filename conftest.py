"""Every test gets its own run store: ``agentevals run`` records runs and reuses results by default, and
tests must neither share cached results nor write to the user's data folder."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _session_run_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """For module- and session-scoped fixtures, which run before the per-test store below is set."""
    store = tmp_path_factory.mktemp("session-store")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("AGENTEVALS_STORE", str(store / "runs.sqlite"))
        patch.setenv("XDG_DATA_HOME", str(store / "data"))
        yield


@pytest.fixture(autouse=True)
def _isolated_run_store(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path_factory.mktemp("store")
    monkeypatch.setenv("AGENTEVALS_STORE", str(store / "runs.sqlite"))
    monkeypatch.setenv("XDG_DATA_HOME", str(store / "data"))  # the default store, where a test unsets the variable
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
