"""Engine benchmarks: code evaluators (persistent SDK workers in Python and JS, one-process-per-evaluation JS), large
trajectory runs, a concurrency sweep and the size of a long conversation's EvalInput.

    hatch run bench:engine                      # or: python tools/bench/engine.py [--big 10000] [--only sdk,sweep]

Inputs are generated from the shipped helm trace with fresh trace and session ids (never committed).
Figures only, no assertions: the machines are shared and noisy. Each line names its target.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run_all import EVAL_SET, HELM, generate, measured, precompile, timed

SDK_EVALUATOR = """\
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator

@evaluator
def tool_use(input: EvalInput) -> EvalResult:
    scores = [1.0 if inv.intermediate_steps.tool_calls else 0.0 for inv in input.invocations]
    return EvalResult(score=sum(scores) / max(len(scores), 1), per_invocation_scores=scores)

if __name__ == "__main__":
    tool_use.run()
"""

JS_EVALUATOR = """\
const input = JSON.parse(require("fs").readFileSync(0, "utf8"));
const used = input.invocations.filter((inv) => inv.intermediate_steps.tool_calls.length > 0).length;
console.log(JSON.stringify({score: input.invocations.length ? used / input.invocations.length : 0}));
"""

JS_SDK_EVALUATOR = """\
import { evaluator } from "SDK_URL";

evaluator((input) => {
  const scores = input.invocations.map((inv) => (inv.intermediate_steps.tool_calls.length ? 1 : 0));
  return { score: scores.reduce((a, b) => a + b, 0) / Math.max(scores.length, 1), per_invocation_scores: scores };
}, { name: "tool_use" }).run();
"""
JS_SDK = Path(__file__).resolve().parents[2] / "packages" / "agentevals-evaluator-sdk-js" / "index.js"

PLAIN_PY = """\
import json, sys
data = json.load(sys.stdin)
used = sum(1 for inv in data["invocations"] if inv["intermediate_steps"]["tool_calls"])
print(json.dumps({"score": used / max(len(data["invocations"]), 1)}))
"""

SECTIONS = ("sdk", "js", "jssdk", "trajectory", "evalinput", "sweep")


def config(directory: Path, name: str, source: str, suffix: str) -> Path:
    program = directory / f"{name}{suffix}"
    program.write_text(source)
    path = directory / f"{name}.yaml"
    path.write_text(f"evaluators:\n  - {{name: {name}, type: code, path: {program.name}, timeout: 120}}\n")
    return path


def line(label: str, seconds: float, n: int, peak: int, target: str) -> None:
    print(f"  {label:<46} {seconds:7.2f} s  {n / seconds:7.0f} traces/s  peak RSS {peak:4d} MiB   ({target})")


def cpu_timed(cmd: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time and median CPU time (s) of a command, its evaluator processes included."""
    import statistics

    samples = measured(cmd, repeat)
    return statistics.median(s.wall for s in samples), statistics.median(s.cpu for s in samples)


def evalinput_size(directory: Path, turns: int) -> None:
    """Bytes of the EvalInput of one conversation of ``turns`` helm turns, in 1.2 and in 1.1."""
    from agentevals.engine import _case_metrics, group_traces, load_traces
    from agentevals.evaluators.backend import build_eval_input
    from agentevals.evaluators.base import EvalContext
    from agentevals.protocol import encode_input

    path, _ = generate(turns, directory, session="one-conversation")
    traces, _ = load_traces([path], keep_spans=False)
    (case,) = group_traces(traces, "conversation")
    ctx = EvalContext(case_id="c", invocations=case.invocations, performance_metrics=_case_metrics(case.traces))
    eval_input = build_eval_input(ctx, name="x", threshold=0.5, config={}, version="1.2")
    v12, v11 = (len(encode_input(eval_input, v).encode()) for v in ("1.2", "1.1"))
    doc = json.loads(encode_input(eval_input, "1.2"))
    turn = doc["invocations"][0]
    parts = {key: len(json.dumps(value)) for key, value in turn.items()}
    print(f"  EvalInput of a {turns}-turn conversation: {v12 / 1e6:.2f} MB in 1.2, {v11 / 1e6:.2f} MB in 1.1 "
          f"(target ≤ 0.6 MB); one turn: {sum(parts.values())} bytes: "
          + ", ".join(f"{k} {v}" for k, v in sorted(parts.items(), key=lambda kv: -kv[1])[:4]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", type=int, default=1000, help="traces in the small runs")
    parser.add_argument("--big", type=int, default=10000, help="traces in the large runs (0: skip them)")
    parser.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections: {', '.join(SECTIONS)}")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    only = set(args.only.split(","))
    cli = [sys.executable, "-m", "agentevals"]
    print(f"agentevals engine benchmarks (python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.1f})")
    sizes = [n for n in (args.small, args.big) if n]
    precompile()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        sdk = config(directory, "sdk_tool_use", SDK_EVALUATOR, ".py")
        js = config(directory, "js_tool_use", JS_EVALUATOR, ".js")
        js_sdk = config(directory, "js_sdk_tool_use", JS_SDK_EVALUATOR.replace("SDK_URL", JS_SDK.as_uri()), ".mjs")
        inputs = {n: generate(n, directory)[0] for n in sizes}
        targets = {("sdk", 1000): "target ≤ 3 s", ("sdk", 10000): "target ≤ 15 s",
                   ("trajectory", 1000): "target ≤ 1 s", ("trajectory", 10000): "target ≤ 6 s, ≤ 300 MiB"}
        for n, path in inputs.items():
            if "sdk" in only:
                median, _, peak = timed([*cli, "run", str(path), "-c", str(sdk), "-o", "summary"], args.repeat)
                line(f"{n:6d} traces, SDK Python evaluator (workers)", median, n, peak, targets.get(("sdk", n), ""))
            if "js" in only and shutil.which("node"):
                median, _, peak = timed([*cli, "run", str(path), "-c", str(js), "-o", "summary"], args.repeat)
                line(f"{n:6d} traces, plain-JSON JS evaluator", median, n, peak, "one node process per trace")
            if "jssdk" in only and shutil.which("node"):
                # The same scoring with each SDK (persistent workers both): wall and CPU, evaluators included.
                py_wall, py_cpu = cpu_timed([*cli, "run", str(path), "-c", str(sdk), "-o", "summary"], args.repeat)
                js_wall, js_cpu = cpu_timed([*cli, "run", str(path), "-c", str(js_sdk), "-o", "summary"], args.repeat)
                print(f"  {n:6d} traces, SDK evaluator: Python {py_wall:6.2f} s wall {py_cpu:6.2f} s CPU | "
                      f"JS {js_wall:6.2f} s wall {js_cpu:6.2f} s CPU | JS/Python wall {js_wall / py_wall:4.2f}x "
                      f"CPU {js_cpu / py_cpu:4.2f}x   (target: JS within 1.5x of Python, ≤ 3 s)")
            if "trajectory" in only:
                median, _, peak = timed([*cli, "run", str(path), "-e", str(EVAL_SET), "-m", "tool_trajectory_avg_score",
                                         "-o", "summary"], args.repeat)
                line(f"{n:6d} traces, tool_trajectory_avg_score", median, n, peak, targets.get(("trajectory", n), ""))
        if "sweep" in only:
            path = generate(200, directory)[0]
            plain = config(directory, "plain_py", PLAIN_PY, ".py")
            base = None
            for concurrency in (1, 2, 4):
                median, _, _ = timed([*cli, "run", str(path), "-c", str(plain), "-o", "summary", "--concurrency",
                                      str(concurrency), "--no-persistent-workers"], args.repeat)
                base = base or median
                print(f"  concurrency {concurrency}: 200 traces, plain-JSON Python evaluator  {median:6.2f} s  "
                      f"speed-up {base / median:4.2f}x   (target ≥ 1.8x at 2)")
        if "evalinput" in only:
            evalinput_size(directory, 1000)
    print(f"  (one trace: see run_all.py; input {HELM.name})")


if __name__ == "__main__":
    main()
