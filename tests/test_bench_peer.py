"""tools/bench/peer.py: the A/B order of its repetitions and the table it prints (no timings measured here)."""

from __future__ import annotations

import doctest
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

BENCH = Path(__file__).resolve().parent.parent / "tools" / "bench"


def _peer() -> ModuleType:
    if "bench_peer" in sys.modules:
        return sys.modules["bench_peer"]
    sys.path.insert(0, str(BENCH))  # peer.py imports its sibling run_all
    try:
        spec = importlib.util.spec_from_file_location("bench_peer", BENCH / "peer.py")
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules["bench_peer"] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(BENCH))


def test_repetitions_alternate_which_tool_runs_first():
    peer = _peer()
    orders = [peer.ab_order(i) for i in range(4)]
    assert orders == [("ours", "0.11"), ("0.11", "ours"), ("ours", "0.11"), ("0.11", "ours")]


def test_a_failed_repetition_stops_that_tool_on_the_row_and_the_row_reports_failed():
    peer = _peer()
    row = peer.Row("one trace", {"ours": ["x"], "0.11": ["y"]})
    row.samples["ours"] = [peer.Sample(wall=0.5, cpu=0.4, peak_mib=90), peer.Sample(wall=0.7, cpu=0.5, peak_mib=92)]
    row.samples["0.11"] = [peer.Sample(error="exit 2: no such option: --no-store")]
    lines = peer.report([row], peak_row="one trace")
    assert lines[0] == ("one trace", "0.60 s", "failed", "-")
    assert lines[2] == ("one trace peak RSS", "91 MiB", "failed", "-")


def test_table_ratio_is_theirs_over_ours():
    peer = _peer()
    row = peer.Row("--help", {"ours": ["x"], "0.11": ["y"]})
    row.samples["ours"] = [peer.Sample(wall=0.1, cpu=0.08), peer.Sample(wall=0.3, cpu=0.1)]
    row.samples["0.11"] = [peer.Sample(wall=0.8, cpu=0.6), peer.Sample(wall=0.8, cpu=0.6)]
    text = peer.table(peer.report([row], peak_row=""))
    assert text.splitlines()[0].split() == ["row", "ours", "0.11", "0.11/ours"]
    assert text.splitlines()[2].split() == ["--help", "0.20", "s", "0.80", "s", "4.0x"]
    assert text.splitlines()[3].split() == ["--help", "CPU", "0.09", "s", "0.60", "s", "6.7x"]


def test_doctests():
    failures, tried = doctest.testmod(_peer())
    assert tried >= 3 and failures == 0
