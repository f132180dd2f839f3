"""Whole-input reruns from the run store: when every input file's bytes and everything that decides the
results are the same as a completed run's, that run's cases are emitted again without reading a trace.

    key = input_key(paths, evaluators, identity=reuse.identity, options=..., digests=..., trace_format=...,
                    file_digests=store.file_digests)
    prior = find_replay(store, key)   # a completed run recorded with that key, every result a score
    if prior is not None:
        run = await replay(store, prior, consumers, files=len(paths))

The key (recorded in the run's options as ``input_key``) covers: each file's bytes (sha256, in chunks; a file
whose stat is as when it was last hashed is not read again, ``store._digests``),
the config and eval set files' bytes, the run options, the trace format, each evaluator's identity
(``store.keys.evaluator_identity``: its config, code and versions) and agentevals' version. Any change is a
miss, and the run reads its inputs as before (the per-case result cache still applies).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from ..results import RunResult, Status, utc_now
from ..results.cases import CaseList
from .keys import file_digest, value_digest

if TYPE_CHECKING:
    from ..engine.consumers import RunConsumer
    from ._recording import StoreReuse
    from ._store import RunStore

__all__ = ["REPLAY_NOTE", "find_replay", "input_key", "replay"]

log = logging.getLogger(__name__)

_SCANNED = 100
"""How many of the newest completed runs are searched for the key (each is one row already read)."""
_SCORES = (Status.PASSED, Status.FAILED, Status.INFORMATIONAL)
"""A run is replayed only when every result is a score: errors and NOT_EVALUATED are tried again."""
REPLAY_NOTE = "file(s) served from the cache"


def input_key(paths: Sequence[str], evaluators: Sequence[Any], *, identity: Callable[[Any], Optional[str]],
              options: dict[str, Any], digests: Sequence[Optional[str]], trace_format: Optional[str],
              file_digests: Optional[Callable[[list[Path]], list[str]]] = None) -> Optional[str]:
    """The whole-input key of a run, or None when it cannot have one (an input that is not a regular file,
    an evaluator that is not reproducible or not cacheable, a file that cannot be read). ``identity`` gives an
    evaluator's identity or None (``StoreReuse.identity``, computed once for this key and the run's per-case
    keys); ``digests``: those of the config and eval set files (``run_meta`` computed them); ``file_digests``:
    the sha256 of each input file (default: hash each, ``keys.file_digest``; the CLI passes
    ``RunStore.file_digests``, which skips files unchanged since they were last hashed)."""
    from ..__about__ import __version__

    try:
        files = [Path(p) for p in paths]
        if not files or not all(f.is_file() for f in files):
            return None
        identities = []
        for loaded in evaluators:
            ev = getattr(loaded, "evaluator", loaded)
            found = identity(ev) if getattr(ev, "reproducible", False) else None
            if found is None:
                return None
            identities.append(found)
        sums = file_digests(files) if file_digests is not None else [file_digest(f) for f in files]
        value = {
            "files": [(os.path.abspath(f), digest) for f, digest in zip(files, sums, strict=True)],
            "config": list(digests),
            "evaluators": identities,
            "options": options,
            "trace_format": trace_format,
            "agentevals": __version__,
        }
    except OSError as exc:
        log.debug("whole-input cache: no key (%s)", exc)
        return None
    return value_digest(value)


def find_replay(store: RunStore, key: str) -> Optional[str]:
    """The newest completed run recorded with ``key`` whose results are all scores, or None."""
    for record in store.list_runs(limit=_SCANNED, statuses=("completed",)):
        if record.options.get("input_key") != key:
            continue
        statuses = store.db.execute("SELECT DISTINCT status FROM metric_results WHERE run_id = ?", (record.run_id,))
        # Labels (from the eval set, or added later by people) belong to that run's cases: a run that has
        # any is not copied, so that no label added since shows up in this run's reports.
        labelled = store.db.execute("SELECT COUNT(*) FROM labels WHERE run_id = ?", (record.run_id,))[0][0]
        if statuses and all(Status(row[0]) in _SCORES for row in statuses) and not labelled:
            return record.run_id
        return None  # the newest run of these inputs had errors (or labels): run them again
    return None


async def replay(store: RunStore, prior: str, consumers: Sequence[RunConsumer], *, files: int,
                 reuse: Optional[StoreReuse] = None) -> RunResult:
    """Emit the stored run ``prior`` to ``consumers`` as a new run (started now), case by case; every
    result counts as reused in ``reuse`` (the run's note says how many, as for the per-case cache)."""
    from ..__about__ import __version__
    from ..engine.consumers import emit

    stored = store.load_run(prior)
    run = RunResult(agentevals_version=__version__, started_at=utc_now())
    run.notes.extend(n for n in stored.notes if "reused from the run store" not in n and REPLAY_NOTE not in n)
    run.input_errors = stored.input_errors
    run._planned = len(stored.cases)  # exact: progress shows a full bar
    # Grows as cases are emitted, as the engine's does (an interrupted run reports them). A CaseList keeps the
    # counts and score clusters as cases are appended: totals, exit code, gates and the summary's intervals
    # read them instead of walking every case again (five walks of a 1,000-case run otherwise). Never spilled:
    # ``stored`` holds every case in memory already.
    run.cases = emitted = CaseList(threshold=len(stored.cases))
    emit(consumers, "run_started", run)
    for index, case in enumerate(stored.cases):
        emitted.append(case)
        emit(consumers, "case_finished", index, case)
    if reuse is not None:
        reuse.reused += sum(len(case.metrics) for case in stored.cases)
    run.repetitions = stored.repetitions
    run.notes.append(f"{files} {REPLAY_NOTE} (run {prior}, same bytes and settings; --no-cache reads them again)")
    run.finished_at = utc_now()
    emit(consumers, "run_finished", run)
    return run
