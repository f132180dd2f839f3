"""Benchmarks: print figures for start-up, one-trace latency, and throughput/memory on generated inputs.

    hatch run bench:all                 # or: python tools/bench/run_all.py [--traces 1000] [--repeat 7]

Inputs are generated from the shipped sample traces (never committed). Figures only: no assertions,
the machines are shared and noisy.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HELM = EXAMPLES / "traces" / "helm.json"
EVAL_SET = EXAMPLES / "evalsets" / "eval_set_helm.json"


@dataclass
class Sample:
    """One run of one command: wall and CPU seconds, the process's own peak RSS (MiB); ``error`` when it failed."""

    wall: float = 0.0
    cpu: float = 0.0
    peak_mib: int = 0
    error: str = ""


def run_once(cmd: list[str], *, timeout: float = 1800, env: Optional[dict[str, str]] = None) -> Sample:
    """Run ``cmd`` (output discarded) with a deadline; its own wall, CPU (its reaped children included) and
    peak RSS via wait4. Exit 1 counts as a full run (a metric failed its threshold)."""
    with tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)
        except OSError as exc:
            return Sample(error=f"cannot start {cmd[0]}: {exc}")
        timer = threading.Timer(timeout, proc.kill)  # wait4 has no timeout: the timer is the deadline
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak, not the max over all children
        finally:
            timer.cancel()
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        proc.returncode = code
        if code not in (0, 1):
            err.seek(0)
            lines = [line for line in err.read().decode(errors="replace").splitlines() if line.strip()]
            reason = f"timed out after {timeout:.0f} s" if code == -9 else (lines[-1] if lines else "no output")
            return Sample(error=f"exit {code}: {reason[:200]}")
    return Sample(wall=wall, cpu=usage.ru_utime + usage.ru_stime, peak_mib=usage.ru_maxrss // 1024)


def measured(cmd: list[str], repeat: int) -> list[Sample]:
    """``repeat`` runs of ``cmd``; a failed run ends the benchmark with its reason."""
    samples = []
    for _ in range(repeat):
        sample = run_once(cmd)
        if sample.error:
            raise SystemExit(f"{' '.join(cmd)} failed: {sample.error}")
        samples.append(sample)
    return samples


def timed(cmd: list[str], repeat: int) -> tuple[float, float, int]:
    """Median and best wall time (s) and peak RSS (MiB) of a command."""
    samples = measured(cmd, repeat)
    walls = [s.wall for s in samples]
    return statistics.median(walls), min(walls), max(s.peak_mib for s in samples)


def paired_cpu(first: list[str], second: list[str], pairs: int) -> tuple[tuple[float, float], tuple[float, float]]:
    """Median (wall, CPU) seconds of two commands run in alternating pairs (CPU: the command and its children)."""
    import resource

    figures: tuple[list[tuple[float, float]], list[tuple[float, float]]] = ([], [])
    for _ in range(pairs):
        for cmd, out in ((first, figures[0]), (second, figures[1])):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            start = time.perf_counter()
            subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, timeout=1800)
            wall = time.perf_counter() - start
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            out.append((wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
    return tuple((statistics.median(w for w, _ in f), statistics.median(c for _, c in f))  # type: ignore[return-value]
                 for f in figures)


def precompile() -> None:
    """Write the bytecode caches that an installed package has (pip compiles on install): in an
    environment without them (uv's default, PYTHONDONTWRITEBYTECODE) every run would first compile
    agentevals' source, ≈ 0.3 s of CPU that no user pays."""
    import compileall
    import importlib.util
    import sysconfig

    dirs = {sysconfig.get_paths()["purelib"]}
    for name in ("agentevals", "agentevals_evaluator_sdk"):
        spec = importlib.util.find_spec(name)
        dirs.update(spec.submodule_search_locations or () if spec else ())
    for directory in sorted(dirs):
        compileall.compile_dir(directory, quiet=2)


def generate(n: int, directory: Path, session: str | None = None) -> tuple[Path, int]:
    """One Jaeger file with ``n`` copies of the helm trace (distinct trace ids; distinct sessions, or all
    in ``session``, one minute apart: a conversation of ``n`` turns)."""
    base = json.loads(HELM.read_text())["data"][0]
    path = directory / f"helm_x{n}{'_' + session if session else ''}.json"
    # Written trace by trace (the bytes of ``json.dumps({"data": traces})``): a bench process holding
    # every trace would lend its memory to the forked children and inflate their peak RSS.
    with path.open("w") as out:
        out.write('{"data": [')
        for i in range(n):
            trace = copy.deepcopy(base)
            trace["traceID"] = f"{i:032x}"
            for span in trace["spans"]:
                span["traceID"] = trace["traceID"]
                if session:
                    span["startTime"] += i * 60_000_000
                for tag in span["tags"]:
                    if tag["key"] in ("gen_ai.conversation.id", "gcp.vertex.agent.session_id"):
                        tag["value"] = session or f"session-{i}"
            out.write((", " if i else "") + json.dumps(trace))
        out.write("]}")
    return path, path.stat().st_size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, nargs="*", default=[100, 1000])
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    cli = [sys.executable, "-m", "agentevals"]
    # Repeated runs would be answered by the run store's result cache: measure the engine without it,
    # and the store on its own below.
    os.environ["AGENTEVALS_STORE"] = str(Path(tempfile.mkdtemp(prefix="agentevals-bench-")) / "runs.sqlite")
    env_note = f"python {sys.version.split()[0]}, {os.cpu_count()} cores"
    precompile()
    print(f"agentevals benchmarks ({env_note})")

    median, best, _ = timed([*cli, "--help"], args.repeat)
    print(f"  start-up   agentevals --help                          median {median * 1000:6.0f} ms  best {best * 1000:6.0f} ms")
    median, best, peak = timed([*cli, "run", str(HELM), "-e", str(EVAL_SET), "-o", "summary", "--no-store"],
                               args.repeat)
    print(f"  one trace  run helm.json (tool_trajectory_avg_score)   median {median * 1000:6.0f} ms  best {best * 1000:6.0f} ms"
          f"  peak RSS {peak} MiB   (target: well under 500 ms)")
    median, best, peak = timed([*cli, "run", str(HELM), "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score",
                                "-m", "response_match_score", "-o", "summary", "--no-store"], args.repeat)
    print(f"  one trace  + response_match_score (ROUGE)              median {median * 1000:6.0f} ms  best {best * 1000:6.0f} ms")

    with tempfile.TemporaryDirectory() as tmp:
        for n in args.traces:
            path, size = generate(n, Path(tmp))
            run = [*cli, "run", str(path), "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score",
                   "-m", "response_match_score", "-o", "summary"]
            median, best, peak = timed([*run, "--no-store"], max(1, args.repeat // 3))
            print(f"  {n:5d} traces ({size / 1e6:6.1f} MB)  two metrics   median {median:6.2f} s   "
                  f"{n / median:7.0f} traces/s   peak RSS {peak} MiB ({peak / (size / 2**20):.1f}x input)")
            # Store on against --no-store in alternating pairs, wall and CPU (the machine is shared: CPU is
            # the steadier figure), so that both sides see the same load.
            off, on = paired_cpu([*run, "--no-store"], [*run, "--no-cache"], max(2, args.repeat // 2))
            # The --no-cache runs above record no whole-input key: one run with the cache on records it, and
            # the runs timed after it are served whole from the store (the "all cached" rerun of #29).
            measured(run, 1)
            cached = measured(run, max(3, args.repeat // 2))
            print(f"  {n:5d} traces  run store (SQLite): recorded wall {on[0]:6.2f} s vs {off[0]:6.2f} s "
                  f"({(on[0] - off[0]) / n * 1000:+.2f} ms/case, {(on[0] / off[0] - 1) * 100:+.0f}%), "
                  f"CPU {on[1]:6.2f} s vs {off[1]:6.2f} s ({(on[1] - off[1]) / n * 1000:+.2f} ms/case, "
                  f"{(on[1] / off[1] - 1) * 100:+.0f}%); all cached {statistics.median(s.wall for s in cached):6.2f} s "
                  f"(CPU {statistics.median(s.cpu for s in cached):5.2f} s)")


if __name__ == "__main__":
    main()
