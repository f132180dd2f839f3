"""agentevals-cli 0.11's examples are data run by tests/serve/test_compat_011_sdk.py, not tests to collect
(``dice_agent/test_streaming.py`` is 0.11's own script of that name)."""

collect_ignore_glob = ["examples/*"]
