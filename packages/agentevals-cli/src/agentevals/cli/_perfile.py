"""``run`` over several files where some are unchanged since a stored run: their cases are taken as stored and
the files are not read (``store._perfile``). Only when each file's cases depend on that file alone; anything
else (a rule that looks across cases, another executor, log records that reach every file's traces) and the
run reads every file, stored results reused case by case as before.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from ..store._perfile import FileTracker, Taken
    from ._pipeline import RunRequest

__all__ = ["PerFile", "independent_files"]


def independent_files(req: RunRequest) -> bool:
    """Whether each input file's cases depend on that file alone (and the run's settings): not when a rule
    looks across cases (sampling, judge budgets, repetitions, a one-case eval set that pairs with the run's
    only case, stopping at the first error), another executor reads the files, or a file is given twice."""
    options = req.options
    if (options.executor != "local" or options.dump_inputs is not None or options.repeat_key or options.pass_at_k
            or options.fail_on_evaluation_error or options.judge_probe is not None or options.independent_cases):
        return False
    if req.eval_set is not None and len(getattr(req.eval_set, "eval_cases", None) or [None]) == 1:
        return False  # a one-case eval set (or one not loaded yet): its pairing depends on the other cases
    if len({os.path.abspath(p) for p in req.inputs}) != len(req.inputs):
        return False
    from ..engine.admission import admissions_for
    from ..engine.filters import FilterAdmission

    evaluators = [getattr(e, "evaluator", e) for e in req.evaluators]
    return all(isinstance(check, FilterAdmission) for check in admissions_for(evaluators, options))


@dataclass
class PerFile:
    """The files of this run with their keys; what it takes from a stored run (``taken``), if anything."""

    keys: list[str]
    tracker: FileTracker
    taken: Optional[Taken] = None

    @classmethod
    def plan(cls, req: RunRequest, store: Any, reuse: Any, context: Any, keys: list[str]) -> PerFile:
        """Track this run's files (the run records them) and take the unchanged ones from a stored run."""
        from ..store._perfile import FileTracker, find_files
        from ..store._replay import TAKEN_NOTE

        found = cls(keys, FileTracker([str(p) for p in req.inputs]))
        context.sessions = set()
        try:
            taken = find_files(store, keys, grouped=req.options.group_by != "trace")
        except Exception:  # a store that cannot be searched: every file is read
            return found
        if taken is None or _logs_among(req.inputs, taken.files):
            return found
        found.taken = taken
        context.sessions.update(str(req.inputs[pos]) for pos in taken.sessions)
        reuse.reused += taken.results
        files, count = len(taken.files), taken.count
        req.options.notes.append(f"{count} case{'s' if count != 1 else ''} of {files} file{'s' if files != 1 else ''} "
                                 f"unchanged since run {taken.run_id} taken as stored; {TAKEN_NOTE}")
        return found

    def inputs(self, given: list[str]) -> list[Any]:
        """The run's inputs: each taken file as its stored cases (``trace_sources.stored.StoredFile``)."""
        if self.taken is None:
            return list(given)
        from ..trace_sources.stored import StoredFile

        taken = self.taken
        return [StoredFile(str(path), taken.cases(*taken.files[pos]), taken.files[pos][1]) if pos in taken.files
                else path for pos, path in enumerate(given)]

    def record(self, store: Any, run_id: str, run: Any, context: Any) -> None:
        """Store which cases each file made, unless the run read OTLP log records (they reach every file's
        traces) or left traces out."""
        if context.log_events or context.skipped:
            return
        from ..store._perfile import record_files

        record_files(store, run_id, self.tracker.rows(self.keys, run, context.sessions or set()))


def _logs_among(inputs: list[str], taken: dict[int, tuple[int, int]]) -> bool:
    """Whether a file to be read holds OTLP log records, which may belong to traces of the files taken."""
    from ..trace_sources.files import mentions_logs

    return any(mentions_logs(path) for pos, path in enumerate(inputs) if pos not in taken)
