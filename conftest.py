"""Every test gets its own run store: ``agentevals run`` records runs and reuses results by default, and
tests must neither share cached results nor write to the user's data folder."""

from __future__ import annotations

import os
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


# In CI (CI=true) a test skipped for a missing part is a failure: CI installs every part the suite needs
# (.ci/run), so a skip there means a set-up step broke. Only parts that cannot exist on this kind of machine,
# and the docs blocks that are not commands to run, may be skipped.
_CI_MAY_SKIP = (
    "no docker daemon",  # no Docker engine runs on this kind of machine
    "WordNet data is not installed",  # NLTK data comes from a hub, not from a package registry
    "needs the adk extra",  # the default env; `hatch run adk:test` runs these in the adk env
)


def _fail_a_ci_skip(report: pytest.TestReport | pytest.CollectReport) -> None:
    if not report.skipped or os.environ.get("CI") != "true" or hasattr(report, "wasxfail"):
        return
    reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if report.nodeid.startswith("tests/docs/") or any(allowed in reason for allowed in _CI_MAY_SKIP):
        return
    report.outcome = "failed"
    report.longrepr = f"skipped in CI (CI=true), where every part must be installed: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    outcome = yield
    _fail_a_ci_skip(outcome.get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector):  # a module-level skip (importorskip)
    outcome = yield
    # A run narrowed to a marker (the adk env: `pytest -m adk`) collects modules it will not run, whose
    # extras that env does not install: only the full run (`hatch run test`: -m 'not adk') must have them all.
    if collector.config.getoption("markexpr", "") in ("", "not adk"):
        _fail_a_ci_skip(outcome.get_result())
