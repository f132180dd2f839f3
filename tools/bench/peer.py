"""Side by side with agentevals-cli 0.11 from the package registry: the same rows, alternating A/B, with ratios.

    hatch run bench:peer                      # or: python tools/bench/peer.py [--repeat 3] [--traces 100 1000]

The peer lives in its own virtualenv under ``.local/peer-0.11`` (gitignored), made once with ``pip`` from the
configured index. Each repetition runs both tools back to back, ours first on even repetitions and 0.11 first
on odd ones, so that a load spike on the shared machine lands on both. Figures only, no assertions: a row that
fails for one tool prints its one-line reason and the table goes on; every subprocess has a deadline.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import venv
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_all import EVAL_SET, HELM, ROOT, Sample, generate, precompile, run_once

PEER_VERSION = "0.11.0"
PEER_DIR = ROOT / ".local" / "peer-0.11"
TOOLS = ("ours", "0.11")
# 0.11's serve takes no metric and evaluates nothing on ingest (its store: memory or Postgres) and binds fixed
# OTLP ports (no port 0): it cannot be flooded and counted the way serve_flood.py drives ours.
SERVE_NOTE = "0.11's serve evaluates no metric on ingest (its store: memory or Postgres) (ours: hatch run bench:python " \
    "tools/bench/serve_flood.py)"


@dataclass
class Row:
    """One comparable row: the command of each tool (``None``: the tool has no equivalent; ``note`` says why)."""

    name: str
    commands: dict[str, list[str] | None]
    note: str = ""
    timeout: float = 600.0
    samples: dict[str, list[Sample]] = field(default_factory=lambda: {tool: [] for tool in TOOLS})


def ab_order(repetition: int) -> tuple[str, str]:
    """The tools in the order of one repetition: ours first on even ones, 0.11 first on odd ones.

    >>> [ab_order(i) for i in range(3)]
    [('ours', '0.11'), ('0.11', 'ours'), ('ours', '0.11')]
    """
    return TOOLS if repetition % 2 == 0 else (TOOLS[1], TOOLS[0])


def ratio(ours: float | None, peer: float | None) -> str:
    """How many times 0.11's figure is ours (> 1: we are faster or smaller); ``-`` when either is missing.

    >>> ratio(0.5, 2.6), ratio(None, 1.0), ratio(0.0, 1.0)
    ('5.2x', '-', '-')
    """
    if not ours or peer is None:
        return "-"
    return f"{peer / ours:.1f}x"


def seconds(value: float | None) -> str:
    """A median for the table: ``0.52 s``; ``failed`` when no repetition succeeded."""
    return "failed" if value is None else f"{value:.2f} s"


def table(lines: list[tuple[str, str, str, str]]) -> str:
    """Aligned text table of (row, ours, 0.11, ratio) lines, under a header.

    >>> print(table([("--help", "0.10 s", "0.69 s", "6.9x")]))
    row     ours    0.11    0.11/ours
    ------  ------  ------  ---------
    --help  0.10 s  0.69 s  6.9x
    """
    header = ("row", "ours", "0.11", "0.11/ours")
    rows = [header, *lines]
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    text = [_join(header, widths), _join(tuple("-" * w for w in widths), widths)]
    text += [_join(row, widths) for row in lines]
    return "\n".join(text)


def _join(cells: tuple[str, ...], widths: list[int]) -> str:
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths, strict=True)).rstrip()


def ensure_peer(directory: Path = PEER_DIR, timeout: float = 900) -> Path:
    """The peer's ``agentevals`` executable, installing agentevals-cli 0.11 into ``directory`` on first use."""
    exe = directory / "bin" / "agentevals"
    marker = directory / f"installed-{PEER_VERSION}"
    if marker.exists() and exe.exists():
        return exe
    print(f"installing agentevals-cli=={PEER_VERSION} into {directory.relative_to(ROOT)} (once) ...", flush=True)
    venv.EnvBuilder(with_pip=True, clear=True).create(directory)
    # pip from the configured index (pip.conf / PIP_* variables): no host named here.
    proc = subprocess.run([str(directory / "bin" / "python"), "-m", "pip", "install", "-q",
                           f"agentevals-cli=={PEER_VERSION}"], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0 or not exe.exists():
        tail = [line for line in proc.stderr.splitlines() if line.strip() and not line.startswith("WARNING")]
        raise SystemExit(f"cannot install agentevals-cli=={PEER_VERSION}: {(tail or ['no output'])[-1]}")
    marker.write_text("ok\n")
    return exe


def peer_run_options(exe: Path, env: dict[str, str]) -> str:
    """0.11's ``run --help`` text (its options decide which rows have an equivalent)."""
    proc = subprocess.run([str(exe), "run", "--help"], capture_output=True, text=True, timeout=120, env=env)
    return proc.stdout + proc.stderr


def build_rows(peer: Path, peer_help: str, inputs: dict[int, Path]) -> list[Row]:
    """The comparable rows, each tool with its closest equivalent command."""
    ours = [sys.executable, "-m", "agentevals"]
    theirs = [str(peer)]
    no_store = ["--no-store"]
    peer_no_store = ["--no-store"] if "--no-store" in peer_help else []
    peer_summary = ["-o", "summary"] if re.search(r"\bsummary\b", peer_help) else []
    note = "" if peer_no_store else "0.11 has no run store: its runs have no --no-store"
    one = ["run", str(HELM), "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score"]
    rows = [Row("--help", {"ours": [*ours, "--help"], "0.11": [*theirs, "--help"]}, timeout=120),
            Row("one trace (trajectory)", {"ours": [*ours, *one, "-o", "summary", *no_store],
                                           "0.11": [*theirs, *one, *peer_summary, *peer_no_store]},
                note=note, timeout=300)]
    for n, path in inputs.items():
        run = ["run", str(path), "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score"]
        rows.append(Row(f"{n:,} traces (trajectory)", {"ours": [*ours, *run, "-o", "summary", *no_store],
                                                        "0.11": [*theirs, *run, *peer_summary, *peer_no_store]},
                        note=note, timeout=900))
    return rows


def measure(rows: list[Row], repeat: int, env: dict[str, str]) -> None:
    """Run every row ``repeat`` times, alternating the tools; a tool that fails a row is not run on it again."""
    for row in rows:
        for repetition in range(repeat):
            for tool in ab_order(repetition):
                cmd = row.commands[tool]
                done = row.samples[tool]
                if cmd is None or (done and done[-1].error):
                    continue
                done.append(run_once(cmd, timeout=row.timeout, env=env))
        for tool in TOOLS:
            failed = [s.error for s in row.samples[tool] if s.error]
            if failed:
                print(f"  {row.name}: {tool} failed: {failed[-1]}", flush=True)


def median_of(samples: list[Sample], attribute: str) -> float | None:
    good = [getattr(s, attribute) for s in samples if not s.error]
    return statistics.median(good) if good and len(good) == len(samples) else None


def report(rows: list[Row], peak_row: str) -> list[tuple[str, str, str, str]]:
    """Table lines: wall medians per row, CPU medians beside them, and the peak RSS of ``peak_row`` (the
    largest single process: the CLI or one of its reader processes)."""
    lines = []
    for row in rows:
        for label, attribute in (("", "wall"), (" CPU", "cpu")):
            ours, peer = (median_of(row.samples[tool], attribute) for tool in TOOLS)
            if row.commands["0.11"] is None:
                peer_cell = "n/a"
            else:
                peer_cell = seconds(peer)
            lines.append((row.name + label, seconds(ours), peer_cell, ratio(ours, peer)))
        if row.name == peak_row:
            ours_peak, peer_peak = (median_of(row.samples[tool], "peak_mib") for tool in TOOLS)
            lines.append((f"{row.name} peak RSS", "failed" if ours_peak is None else f"{ours_peak:.0f} MiB",
                          "failed" if peer_peak is None else f"{peer_peak:.0f} MiB", ratio(ours_peak, peer_peak)))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="repetitions per row and tool (default 3)")
    parser.add_argument("--traces", type=int, nargs="*", default=[100, 1000])
    args = parser.parse_args()
    peer = ensure_peer()
    store_dir = Path(tempfile.mkdtemp(prefix="agentevals-peer-"))
    # Nothing answered from a cache: a fresh store and cache directory; no colour codes in either tool.
    env = {**os.environ, "AGENTEVALS_STORE": str(store_dir / "runs.sqlite"), "XDG_CACHE_HOME": str(store_dir),
           "NO_COLOR": "1"}
    precompile()
    print(f"agentevals vs agentevals-cli {PEER_VERSION} (python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f}, {args.repeat} alternating repetitions, medians)", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        inputs = {n: generate(n, Path(tmp))[0] for n in args.traces}
        rows = build_rows(peer, peer_run_options(peer, env), inputs)
        for row in rows:
            if row.note:
                print(f"  note: {row.name}: {row.note}")
        measure(rows, args.repeat, env)
    print(table(report(rows, peak_row=f"{max(args.traces):,} traces (trajectory)" if args.traces else "")))
    print(f"  serve sessions/s: not compared: {SERVE_NOTE}")


if __name__ == "__main__":
    main()
