"""Hostile-input figures: how late each in-process deadline fires, and time/memory on hostile inputs.

    hatch run python tools/bench/hostile.py

Prints, for a deadline of 1 s: when a catastrophic regex (``regex`` engine timeout), a ROUGE-L on two
400k-word texts, and a ``type: python``-style endless loop (watched thread) really stop; and the wall time
and peak RSS of ``agentevals run`` on a 100k-deep JSON, ``/dev/zero``, a 1 GiB evaluator stdout and
traces with 20k / 200k LLM spans. Figures only: the machines are shared and noisy.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HELM = ROOT / "examples" / "traces" / "helm.json"


def deadline_figures() -> None:
    from agentevals.errors import EvaluatorFailure
    from agentevals.evaluators.agentv._checks import compile_js_regex, regex
    from agentevals.evaluators.openai_eval._text_similarity import preload, similarity
    from agentevals.execution.inprocess import run_in_thread

    def spin() -> None:
        while True:
            pass

    text = "There are two Helm releases installed in the cluster: kagent and kagent-crds. " * 5
    pattern = r"^([\s\S]|[\s\S][\s\S])*T$"
    compile_js_regex(pattern)
    start = time.perf_counter()
    try:
        regex(text, pattern, timeout=1.0)
    except EvaluatorFailure:
        pass
    print(f"catastrophic regex, engine timeout 1s: the matcher stopped after {time.perf_counter() - start:.2f}s")
    start = time.perf_counter()
    try:
        asyncio.run(run_in_thread(regex, text, pattern, timeout=1.0, what="regex"))
    except EvaluatorFailure:
        print(f"catastrophic regex in a watched thread, deadline 1s: row ended after {time.perf_counter() - start:.2f}s")

    preload("rouge_l")
    random.seed(1)
    words = "alpha beta gamma delta epsilon zeta eta theta".split()
    huge = " ".join(random.choices(words, k=400_000))
    for label, func, args in [("ROUGE-L 400k x 400k words", similarity, ("rouge_l", huge, huge[::-1])),
                              ("endless Python loop", spin, ())]:
        start = time.perf_counter()
        try:
            asyncio.run(run_in_thread(func, *args, timeout=1.0, what=label))
            print(f"{label}: finished in {time.perf_counter() - start:.2f}s")
        except EvaluatorFailure:
            print(f"{label}, timeout 1s: row ended after {time.perf_counter() - start:.2f}s (thread interrupted)")


def run(args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, int]:
    """Wall time (s), peak RSS (MiB) and exit code of ``agentevals <args>``."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "agentevals", *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})})
    _, status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss // 1024, os.waitstatus_to_exitcode(status)


def llm_spans(n: int, path: Path) -> None:
    tid = "ab" * 16

    def tag(key: str, value: object) -> dict:
        return {"key": key, "type": "string", "value": value}

    spans = [{"traceID": tid, "spanID": "0" * 16, "operationName": "invoke_agent helper", "references": [],
              "startTime": 1, "duration": n * 10, "tags": [tag("gen_ai.operation.name", "invoke_agent")]}]
    for i in range(n):
        spans.append({"traceID": tid, "spanID": f"{i + 1:016x}", "operationName": "chat m", "startTime": 2 + i,
                      "duration": 1, "references": [{"refType": "CHILD_OF", "traceID": tid, "spanID": "0" * 16}],
                      "tags": [tag("gen_ai.operation.name", "chat"), tag("gen_ai.output.messages", json.dumps(
                          [{"role": "assistant", "parts": [{"type": "text", "content": f"a{i}"}]}]))]})
    path.write_text(json.dumps({"data": [{"traceID": tid, "spans": spans}]}))


def input_figures() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "helm.json").write_bytes(HELM.read_bytes())
        (work / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
        (work / "flood.py").write_text("import json, sys\njson.load(sys.stdin)\nchunk = 'x' * (1 << 20) + '\\n'\n"
                                       "for _ in range(1024):\n    sys.stdout.write(chunk)\n"
                                       "print(json.dumps({'score': 1}))\n")
        (work / "flood.yaml").write_text("evaluators:\n  - {name: flood, type: code, path: flood.py, timeout: 120}\n")
        cases = [("100k-deep JSON", ["run", "deep.json", "helm.json", "-m", "tool_call_count_v1"]),
                 ("/dev/zero", ["run", "/dev/zero", "helm.json", "-m", "tool_call_count_v1"]),
                 ("1 GiB evaluator stdout", ["run", "helm.json", "-c", "flood.yaml"])]
        for n in (20_000, 200_000):
            # Written by a child: memory this process touched would count in the next children's peak RSS.
            subprocess.run([sys.executable, __file__, "--spans", str(n), str(work / f"llm_{n}.json")], check=True)
            cases.append((f"{n} LLM spans in one trace", ["run", f"llm_{n}.json", "-m", "tool_call_count_v1"]))
        for label, args in cases:
            seconds, peak, code = run(args, work)
            print(f"{label}: {seconds:.2f}s, peak RSS {peak} MiB, exit {code}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--spans"]:
        llm_spans(int(sys.argv[2]), Path(sys.argv[3]))
        sys.exit(0)
    input_figures()  # first: a child forked after the big texts below would count them in its peak RSS
    deadline_figures()
