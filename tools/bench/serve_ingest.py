"""serve's work per live session in one process, without HTTP: for instruction counts that load cannot disturb.

    valgrind --tool=callgrind --callgrind-out-file=/tmp/ingest.1k.out python tools/bench/serve_ingest.py 1000
    valgrind --tool=callgrind --callgrind-out-file=/tmp/ingest.3k.out python tools/bench/serve_ingest.py 3000
    # instructions per session = (totals of 3k - totals of 1k) / 2000; add --no-store for serve --no-store

Sends what ``serve_flood.py`` sends (1,000-span OTLP protobuf batches, each span a session of its own) through
what the HTTP receiver and the evaluation worker do with it: decode the body, buffer the spans, assemble
sessions, evaluate them in batches of ``live.BATCH_SESSIONS`` with ``tool_call_count_v1``, and record them in
a live run of a fresh SQLite run store. A first batch of 256 sessions warms up what is set up on first use.
``serve_flood.py`` under callgrind counts the server answering the client's polls too (as many as the run
lasts seconds), so its instructions per session move with the machine's load; these do not. Prints the store.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentevals.serve.continuous import ContinuousState, StateRecorder
from agentevals.serve.judge_usage import JudgeUsageRecorder
from agentevals.serve.live import BATCH_SESSIONS, EvalSettings, LiveEvaluator, _run_paused
from agentevals.serve.otlp import decode_spans, spans_document
from agentevals.serve.sessions import SessionAssembler
from agentevals.serve.store import MemorySessionStore
from agentevals.store import LiveRunRecorder, RunStore, store_location
from agentevals.store._recording import run_meta
from serve_flood import batch  # the bench's own helper, beside this file


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("sessions", type=int, help="sessions after the warm-up (whole thousands)")
    parser.add_argument("--no-store", action="store_true", help="no live run recorded (serve --no-store)")
    args = parser.parse_args()
    state = ContinuousState()
    consumers: list = [StateRecorder(state), JudgeUsageRecorder(state)]
    path = Path(tempfile.mkdtemp(prefix="agentevals-ingest-")) / "runs.sqlite"
    recorder = None
    if not args.no_store:
        recorder = LiveRunRecorder(RunStore.open(store_location(str(path))),
                                   meta=run_meta(options={"live": True}, config_path=None))
        recorder.begin()
        consumers.append(recorder)
    worker = LiveEvaluator(SessionAssembler(max_units=10**7), MemorySessionStore(10**6),
                           EvalSettings(metrics=["tool_call_count_v1"]), consumers=consumers)
    bodies = [batch(10**6, 256)] + [batch(number, 1000) for number in range(args.sessions // 1000)]
    for body in bodies:
        worker.assembler.add_spans(decode_spans(spans_document(body, json=False)))
        ready = worker.assembler.sweep(flush=True)
        for i in range(0, len(ready), BATCH_SESSIONS):
            _run_paused(worker.evaluate(ready[i:i + BATCH_SESSIONS]))
    if recorder is not None:
        recorder.close(status="completed")
        print(path)


if __name__ == "__main__":
    main()
